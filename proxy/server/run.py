"""Serving: the webhook and admin listeners (and the demo agents) on uvicorn, in one process."""

from __future__ import annotations

import asyncio
import logging

import uvicorn

from proxy.config.model import Config
from proxy.forwarding.dispatch import RecordHook
from proxy.server.service import Service

__all__ = ["serve"]

log = logging.getLogger("stickyroute")


async def serve(config: Config, host: str | None = None, port: int | None = None,
                recorder: RecordHook | None = None, demo: bool = False) -> None:
    """Run the webhook listener and the admin listener (and, with `demo`, the demo agents of
    `proxy.server.demo`) until interrupted."""
    service = Service(config, recorder=recorder)
    server = config.server
    public = uvicorn.Config(
        service.public_app(), host=host or server.host, port=port or server.port,
        ssl_certfile=server.ssl_certfile, ssl_keyfile=server.ssl_keyfile,
        log_level="info", access_log=False, proxy_headers=False, lifespan="on",
        server_header=False, date_header=False,
    )
    admin = uvicorn.Config(service.admin_app(), host=config.admin.host, port=config.admin.port,
                           log_level="warning", access_log=False, lifespan="off")
    servers = [uvicorn.Server(public), uvicorn.Server(admin)]
    if demo:
        from proxy.server.demo import demo_servers

        extra = demo_servers(config)
        log.info("demo agents: %s", ", ".join(f"{s.config.host}:{s.config.port}" for s in extra))
        servers += extra
    log.info("stickyroute: webhooks on %s:%s, admin on %s:%s", public.host, public.port, admin.host, admin.port)
    await asyncio.gather(*(s.serve() for s in servers))
