"""Service: the running proxy with its live reload and its admin API.

    service = Service(config)
    service.public_app()     the webhook ASGI app (`PublicApp`: lifespan, current runtime, drain)
    service.admin_app()      the admin ASGI app (health, readiness, metrics, /stats, the /v1 API)
    await service.reload()   re-read the config file: a valid one swaps in, one with errors is refused

Everything else (state, accounting, the current runtime, start and close) is `ServiceCore`'s
(`stickyroute.server.core`); `reload.py` and `operations.py` work on that core, so this module is
the only one that ties the three together.
"""

from __future__ import annotations

from starlette.applications import Starlette

from stickyroute.admin import create_admin_app
from stickyroute.server.core import ServiceCore
from stickyroute.server.operations import Operations
from stickyroute.server.reload import reload_config

__all__ = ["Service"]


class Service(ServiceCore):
    """A `ServiceCore` that reloads its config file and serves the admin API."""

    async def reload(self, path: str | None = None) -> dict[str, object]:
        """Re-read the config (its own file, or `path`): see `stickyroute.server.reload`."""
        return (await reload_config(self, path)).as_dict()

    def admin_app(self) -> Starlette:
        """The admin ASGI app: probes, metrics, /stats and the /v1 API (`stickyroute.admin`)."""
        return create_admin_app(Operations(self))
