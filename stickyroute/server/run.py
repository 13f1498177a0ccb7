"""Serving: the webhook and admin listeners (and the demo agents) on uvicorn, in one process,
with live reload and a graceful shutdown.

    SIGHUP            reload the config file (`Service.reload`): refused whole when it has errors
    SIGTERM / SIGINT  drain: /readyz says "draining", the webhook listener stops accepting and
                      closes idle connections, in-flight webhooks finish for up to `server.drain_s`
                      seconds; those still running then are answered 503 (the platform retries);
                      then the pools close, then the admin listener and the demo agents stop.
                      A second signal cuts what is left at once.

One signal handler for every server of the process (uvicorn's per-server handlers are off: with
several servers in one loop they would replace each other).
"""

from __future__ import annotations

import asyncio
import logging
import math
import signal

import uvicorn

from stickyroute import clock
from stickyroute.config.model import Config
from stickyroute.config.overrides import Overrides
from stickyroute.forwarding.dispatch import RecordHook
from stickyroute.server.announce import log_started, log_stopped
from stickyroute.server.demo import DemoAgents
from stickyroute.server.edge import EdgeConfig, EdgeLimits, raise_descriptor_limit
from stickyroute.server.heap import settle_heap
from stickyroute.server.listener import Listener
from stickyroute.server.service import Service

__all__ = ["BACKSTOP_S", "drain", "listener_configs", "serve"]

log = logging.getLogger("stickyroute")
BACKSTOP_S = 10.0
"""After the drain deadline and the 503s, how long uvicorn still waits for connections to close."""


async def serve(config: Config, recorder: RecordHook | None = None, demo: bool = False,
                overrides: Overrides | None = None) -> None:
    """Run the webhook listener and the admin listener (and, with `demo`, the demo agents of
    `stickyroute.server.demo`) until SIGTERM or SIGINT; SIGHUP reloads (see the module docstring).
    `config` is the file's; `overrides` (the command line's) apply to it and to every reload."""
    running = (overrides or Overrides()).apply(config)
    agents = DemoAgents.for_config(running) if demo else None
    service = Service(config, recorder=recorder, overrides=overrides, demo=agents)
    raise_descriptor_limit(running)
    public_config, admin_config = listener_configs(service)
    public, admin = Listener(public_config), Listener(admin_config)
    began = clock.monotonic()
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    reloads: set[asyncio.Task[object]] = set()

    def on_hup() -> None:
        task = loop.create_task(service.reload())
        reloads.add(task)
        task.add_done_callback(_reloaded)

    def _reloaded(task: asyncio.Task[object]) -> None:
        reloads.discard(task)
        if not task.cancelled() and task.exception() is not None:  # never "Task exception was never retrieved"
            log.error("SIGHUP: the reload failed", exc_info=task.exception())

    loop.add_signal_handler(signal.SIGHUP, on_hup)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    public_task = loop.create_task(public.serve())
    admin_task = loop.create_task(admin.serve())
    if agents is not None:
        agents.start()

    async def announce() -> None:
        await public.up.wait()
        await admin.up.wait()
        if agents is not None:
            log.info("demo agents: %s", ", ".join(agents.addresses()))
        runtime = service.runtime
        log_started(runtime.config, runtime.digest, service.overrides.shown(), runtime.classifier_line)
        settle_heap()  # start-up is over: what it made lives as long as the process

    announcing = loop.create_task(announce())
    try:
        waiter = loop.create_task(stop.wait())
        await asyncio.wait([public_task, waiter], return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        if not public_task.done():
            stop.clear()
            await drain(service, public, public_task, stop)
    finally:
        for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        announcing.cancel()
        admin.should_exit = True
        if agents is not None:
            await agents.stop()
        await asyncio.gather(public_task, admin_task, announcing, return_exceptions=True)
        log_stopped(clock.monotonic() - began)


def listener_configs(service: Service) -> tuple[EdgeConfig, EdgeConfig]:
    """The uvicorn configs of the webhook listener and of the admin listener of the running config
    (the command line's overrides applied), each under its edge limits (`stickyroute.server.edge`)."""
    config = service.config
    server = config.server
    public = EdgeConfig(
        service.public_app(), EdgeLimits.of("webhook", server), host=server.host, port=server.port,
        ssl_certfile=server.ssl_certfile, ssl_keyfile=server.ssl_keyfile,
        access_log=False, proxy_headers=False, lifespan="on",
        server_header=False, date_header=False, log_config=None,
    )
    admin = EdgeConfig(service.admin_app(), EdgeLimits.of("admin", config.admin), host=config.admin.host,
                       port=config.admin.port, access_log=False, lifespan="off", log_config=None)
    return public, admin


async def drain(service: Service, public: uvicorn.Server, task: asyncio.Task[None], again: asyncio.Event) -> None:
    """Stop `public` gracefully: stop accepting, let in-flight requests finish for `drain_s`
    seconds (or until `again` is set), cut the rest (503), wait for uvicorn to close."""
    drain_s = service.config.server.drain_s
    app = service.public_app()
    service.draining = True
    public.config.timeout_graceful_shutdown = math.ceil(drain_s + BACKSTOP_S)
    public.should_exit = True
    log.info("draining: %d request(s) in flight, up to %g s", app.in_flight, drain_s)
    waiter = asyncio.get_running_loop().create_task(again.wait())
    done, _ = await asyncio.wait([task, waiter], timeout=drain_s, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if task not in done:
        cut = app.cut()
        if cut:
            log.warning("drain deadline: %d request(s) still running answered 503", cut)
    await asyncio.wait([task])
