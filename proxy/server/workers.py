"""`stickyroute serve --workers N`: N uvicorn worker processes on one port, one Service each,
sharing their state through Redis.

    run_workers(config, workers, host, port, admin_port, record)        the parent (blocks)
    create_app()                                                         each worker's app factory

uvicorn's process manager binds the webhook socket once in the parent and hands it to N spawned
workers (the kernel spreads connections over them); each worker imports `create_app` (named in
`APP`) and reads what to serve from the environment variable `SPEC_ENV` that the parent set (JSON:
config path and command-line overrides), so a worker needs nothing else. uvicorn restarts a
worker that dies. The admin listener is served by exactly one worker: the first whose lifespan
binds `admin.port` (the others find it taken and log that they leave it to the one that has it).
Its /readyz and /metrics describe that worker; /stats' routes are Redis's, its classifier and
decision counters that worker's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import AsyncIterator, Generator
from dataclasses import replace

import uvicorn
from starlette.applications import Starlette

from proxy.config import load_config
from proxy.config.model import Config
from proxy.forwarding.app import create_app as create_public_app
from proxy.forwarding.dispatch import RecordHook
from proxy.server.service import Service

__all__ = ["APP", "SPEC_ENV", "create_app", "run_workers"]

log = logging.getLogger("stickyroute")

SPEC_ENV = "STICKYROUTE_SERVE_SPEC"
APP = "proxy.server.workers:create_app"


def run_workers(config: Config, workers: int, host: str | None, port: int | None, admin_port: int | None,
                record: str | None) -> None:
    """Serve `config` (loaded from `config.path`, `admin_port` applied) with `workers` processes
    until interrupted (uvicorn's manager)."""
    os.environ[SPEC_ENV] = json.dumps({"config": config.path, "admin_port": admin_port, "record": record})
    server = config.server
    log.info("stickyroute: %d workers, webhooks on %s:%s, admin on %s:%s (one worker serves it)", workers,
             host or server.host, port or server.port, config.admin.host, config.admin.port)
    uvicorn.run(APP, factory=True, workers=workers, host=host or server.host, port=port or server.port,
                ssl_certfile=server.ssl_certfile, ssl_keyfile=server.ssl_keyfile, log_level="info",
                access_log=False, proxy_headers=False, lifespan="on", server_header=False, date_header=False)


def _load(config_path: str, admin_port: int | None) -> Config:
    config = load_config(config_path)
    if admin_port:
        config = replace(config, admin=replace(config.admin, port=admin_port))
    return config


def create_app() -> Starlette:
    """The public app of one worker (uvicorn calls it in each worker process)."""
    from proxy.server.logs import configure_logging

    configure_logging()
    spec = json.loads(os.environ[SPEC_ENV])
    config = _load(spec["config"], spec.get("admin_port"))
    recorder: RecordHook | None = None
    if spec.get("record"):
        from proxy.replay.recording import Recorder as FileRecorder

        recorder = FileRecorder(spec["record"], config)
    service = Service(config, recorder=recorder)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await service.start()
        admin = await _serve_admin(service, config)
        try:
            yield
        finally:
            if admin is not None:
                await admin.stop()
            await service.aclose()

    return create_public_app(config, service.handle, lifespan=lifespan)


class _AdminServer(uvicorn.Server):
    """The admin listener inside a worker: stopped by the worker's lifespan, so it leaves the
    worker's signal handling to the worker's own server."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def stop(self) -> None:
        self.should_exit = True
        if self.task is not None:
            await self.task

    task: asyncio.Task[None] | None = None


async def _serve_admin(service: Service, config: Config) -> _AdminServer | None:
    """Serve the admin app when this worker is the first to bind the admin port, else None."""
    admin = config.admin
    sock = socket.socket(socket.AF_INET6 if ":" in admin.host else socket.AF_INET)
    try:
        sock.bind((admin.host, admin.port))
        sock.listen(128)
    except OSError:
        sock.close()
        log.info("worker %d: admin listener %s:%s is served by another worker", os.getpid(), admin.host, admin.port)
        return None
    server = _AdminServer(uvicorn.Config(service.admin_app(), log_level="warning", access_log=False,
                                         lifespan="off"))
    server.task = asyncio.get_running_loop().create_task(server.serve(sockets=[sock]))
    log.info("worker %d serves the admin listener on %s:%s", os.getpid(), admin.host, admin.port)
    return server
