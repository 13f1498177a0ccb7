"""`stickyroute serve --workers N`: N uvicorn worker processes on one port, one Service each,
sharing their state through Redis.

    run_workers(config, workers, overrides, record)                      the parent (blocks)
    create_app()                                                         each worker's app factory

uvicorn's process manager binds the webhook socket once in the parent and hands it to N spawned
workers (the kernel spreads connections over them); each worker imports `create_app` (named in
`APP`) and reads what to serve from the environment variable `SPEC_ENV` that the parent set (JSON:
config path and command-line overrides), so a worker needs nothing else. Every process logs in the
config's format (`stickyroute.server.logs`); the config's warnings, the startup line and the
"stopped" line are the parent's alone. uvicorn restarts a
worker that dies. The admin listener is served by exactly one worker: the first whose lifespan
binds `admin.port`; the others try again every `ADMIN_RETRY_S` seconds, so another worker takes
it over when that one stops. Its /readyz and /metrics describe that worker; /stats' routes are
Redis's, its classifier and decision counters that worker's.

Reload: SIGHUP to the parent (or `POST /v1/reload` on the admin listener) validates the config
file first; with errors nothing happens (they are logged / answered); a valid one restarts the
workers one by one (uvicorn starts each replacement before it stops the old worker), each reading
the new config. Shutdown: SIGTERM drains every worker (`[server] drain_s`, then 503s).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import signal
import socket
from types import FrameType

import uvicorn
from uvicorn.supervisors.multiprocess import Multiprocess

from stickyroute import clock
from stickyroute.classifier.factory import describe_classifier
from stickyroute.config import check_config, load_config
from stickyroute.config.digest import config_digest
from stickyroute.config.model import Config
from stickyroute.config.overrides import Overrides
from stickyroute.forwarding.dispatch import RecordHook
from stickyroute.server.announce import log_started, log_stopped
from stickyroute.server.edge import EdgeConfig, EdgeLimits, raise_descriptor_limit
from stickyroute.server.heap import settle_heap
from stickyroute.server.listener import Listener
from stickyroute.server.run import BACKSTOP_S
from stickyroute.server.service import Service
from stickyroute.server.shell import PublicApp

__all__ = ["APP", "SPEC_ENV", "create_app", "run_workers"]

log = logging.getLogger("stickyroute")

SPEC_ENV = "STICKYROUTE_SERVE_SPEC"
APP = "stickyroute.server.workers:create_app"
ADMIN_RETRY_S = 1.0


class _ValidatingMultiprocess(Multiprocess):
    """uvicorn's process manager, whose SIGHUP restarts the workers only for a valid config."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket], config_path: str) -> None:
        super().__init__(config, sockets)
        self.config_path = config_path

    def handle_hup(self) -> None:
        _config, problems = check_config(self.config_path)
        errors = [str(p) for p in problems if not p.warning]
        if errors:
            log.warning("SIGHUP: %s has %d error(s); the workers keep the running config\n%s", self.config_path,
                        len(errors), "\n".join(errors))
            return
        log.info("SIGHUP: %s is valid; restarting the workers one by one", self.config_path)
        super().handle_hup()


def run_workers(config: Config, workers: int, overrides: Overrides, record: str | None) -> None:
    """Serve the file's `config` (from `config.path`, `overrides` applied) with `workers` processes
    until interrupted (uvicorn's manager); the startup and "stopped" lines are this process's."""
    os.environ[SPEC_ENV] = json.dumps({"config": config.path, "overrides": overrides.as_json(), "record": record})
    running = overrides.apply(config)
    server = running.server
    settings = EdgeConfig(
        APP, EdgeLimits.of("webhook", server), factory=True, workers=workers, host=server.host, port=server.port,
        ssl_certfile=server.ssl_certfile, ssl_keyfile=server.ssl_keyfile, access_log=False,
        proxy_headers=False, lifespan="on", server_header=False, date_header=False, log_config=None,
        timeout_graceful_shutdown=math.ceil(server.drain_s + BACKSTOP_S))
    manager = _ValidatingMultiprocess(settings, [settings.bind_socket()], config.path)
    began = clock.monotonic()
    log_started(running, config_digest(config), overrides.shown(), describe_classifier(running.classifier, os.environ),
                workers)
    manager.run()
    log_stopped(clock.monotonic() - began)


def create_app() -> PublicApp:
    """The public app of one worker (uvicorn calls it in each worker process). The config's
    warnings are not logged again: the parent logged them once."""
    from stickyroute.server.logs import configure_logging

    spec = json.loads(os.environ[SPEC_ENV])
    overrides = Overrides.from_json(spec.get("overrides") or {})
    config = load_config(spec["config"], warn=False)
    running = overrides.apply(config)
    configure_logging(running.server.log_format, running.server.log_level)
    raise_descriptor_limit(running)
    recorder: RecordHook | None = None
    if spec.get("record"):
        from stickyroute.forwarding.recording import Recorder as FileRecorder

        recorder = FileRecorder(spec["record"], running)
    service = Service(config, recorder=recorder, overrides=overrides)
    service.rolling_restart = lambda: os.kill(os.getppid(), signal.SIGHUP)
    admin = _AdminSeat(service)

    async def on_start() -> None:
        admin.start()
        _drain_on_sigterm(service)
        log.info("worker %d ready", os.getpid())
        settle_heap()  # start-up is over: what it made lives as long as the worker

    return PublicApp(service, on_start=on_start, on_stop=admin.stop)


def _drain_on_sigterm(service: Service) -> None:
    """Before uvicorn's own SIGTERM handler: mark the worker draining and cut what still runs
    `drain_s` later (503s), as `serve` does in one process."""
    loop = asyncio.get_running_loop()
    previous = signal.getsignal(signal.SIGTERM)

    def start_drain() -> None:
        service.draining = True
        loop.call_later(service.config.server.drain_s, service.public_app().cut)

    def on_term(sig: int, frame: FrameType | None) -> None:
        loop.call_soon_threadsafe(start_drain)
        if callable(previous):
            previous(sig, frame)

    signal.signal(signal.SIGTERM, on_term)


class _AdminSeat:
    """Serve the admin listener when this worker binds its port first; else try again every
    `ADMIN_RETRY_S` (the worker holding it may stop: a restart, a crash)."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self.server: Listener | None = None
        """The admin listener (signals are the worker's own server's business)."""
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._take())

    async def _take(self) -> None:
        admin = self.service.config.admin
        logged = False
        while True:
            sock = socket.socket(socket.AF_INET6 if ":" in admin.host else socket.AF_INET)
            # a port left in TIME_WAIT by the worker that served it may be bound again; one that
            # another worker listens on may not (Linux: SO_REUSEADDR without SO_REUSEPORT)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind((admin.host, admin.port))
                sock.listen(128)
            except OSError:
                sock.close()
                if not logged:
                    log.info("worker %d: admin listener %s:%s is served by another worker", os.getpid(), admin.host,
                             admin.port)
                    logged = True
                await asyncio.sleep(ADMIN_RETRY_S)
                continue
            break
        self.server = Listener(EdgeConfig(self.service.admin_app(), EdgeLimits.of("admin", admin), access_log=False,
                                          lifespan="off", log_config=None))
        log.info("worker %d serves the admin listener on %s:%s", os.getpid(), admin.host, admin.port)
        await self.server.serve(sockets=[sock])

    async def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.task is not None:
            if self.server is None:
                self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
