"""Live reload (`SIGHUP`, `POST /v1/reload`): re-read the config file and swap it in between requests.

    outcome = await reload_config(service, path=None)

1. The file is read and validated off the event loop (`check_config`). Any error: the reload is
   refused whole, the running config stays, and the errors come back as `stickyroute check`
   prints them (`file: dotted.key: message`).
2. A valid config becomes a new `Runtime` (rules, router, classifier, dispatcher, app; the leg
   and its pools are kept when `[upstream]` and `server.trusted_proxies` did not change), the
   state backend gets the new channels' limits, and `service.runtime` is replaced in one
   assignment: requests that started on the old one finish on it; the next one runs on the new.
3. Routes are kept, except those to agents a channel no longer reaches (removed from the config,
   or from the channel's `agents`): they are dropped at once, and again once the last request of
   the old config ended (a decision in flight may still write one); meanwhile the engine treats
   them as no route. The replaced runtime's own pools and classifier client close then too.

Settings the process binds at start (`server.host/port/ssl_*/log_*`, `admin.host/port`, `[state]`,
both listeners' edge limits: `header_timeout_s`, `body_timeout_s`, `keepalive_timeout_s`,
`max_connections`, `max_header_bytes`) are listed in `restart_needed` and keep their running
values until a restart. With `serve
--workers`, the validated reload is a rolling restart of the workers (uvicorn's SIGHUP).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from stickyroute.config import check_config
from stickyroute.config.digest import config_digest
from stickyroute.config.model import Config
from stickyroute.errors import ConfigError
from stickyroute.server.core import ServiceCore
from stickyroute.server.edge import EDGE_KEYS
from stickyroute.server.runtime import build_runtime
from stickyroute.state.base import limits_for

__all__ = ["ReloadOutcome", "reload_config", "restart_needed"]

log = logging.getLogger("stickyroute")


@dataclass(frozen=True, slots=True)
class ReloadOutcome:
    """What a reload did: `ok` (swapped) or refused with `errors` (check's lines)."""

    ok: bool
    path: str
    digest: str
    """The running config's hash after the attempt."""
    previous: str
    errors: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    restart_needed: tuple[str, ...] = ()
    dropped_routes: int = 0
    mode: str = "swap"
    """"swap" (this process) or "rolling restart" (worker processes)."""

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "path": self.path, "hash": self.digest, "previous_hash": self.previous,
                "errors": list(self.errors), "warnings": list(self.warnings),
                "restart_needed": list(self.restart_needed), "dropped_routes": self.dropped_routes, "mode": self.mode}


def restart_needed(old: Config, new: Config) -> tuple[str, ...]:
    """The keys whose new value only a restart applies (the process bound them at start)."""
    pairs = [("server.host", old.server.host, new.server.host), ("server.port", old.server.port, new.server.port),
             ("server.ssl_certfile", old.server.ssl_certfile, new.server.ssl_certfile),
             ("server.ssl_keyfile", old.server.ssl_keyfile, new.server.ssl_keyfile),
             ("server.log_format", old.server.log_format, new.server.log_format),
             ("server.log_level", old.server.log_level, new.server.log_level),
             ("admin.host", old.admin.host, new.admin.host), ("admin.port", old.admin.port, new.admin.port),
             ("state", old.state, new.state)]
    pairs += [(f"{table}.{key}", getattr(before, key), getattr(after, key))  # the listeners' edge limits
              for table, before, after in (("server", old.server, new.server), ("admin", old.admin, new.admin))
              for key in EDGE_KEYS]
    return tuple(key for key, before, after in pairs if before != after)


async def reload_config(service: ServiceCore, path: str | None = None) -> ReloadOutcome:
    """Reload `service` from `path` (default: the running config's file); see the module docstring."""
    async with service.reload_lock:
        old = service.runtime
        file = path or old.config.path
        config, problems = await asyncio.to_thread(check_config, file, service.config_env, key_env=service.parts.env)
        errors = tuple(str(p) for p in problems if not p.warning)
        warnings = tuple(str(p) for p in problems if p.warning)
        metrics = service.accounting.metrics
        if config is None or errors:
            return _refused(service, file, errors, warnings)
        digest = config_digest(config)  # the file's: taken before the command-line overrides
        config = service.adjust(config)
        restart = restart_needed(old.config, config)
        for key in restart:
            log.warning("reload: %s changed; it takes effect at the next restart", key)
        if service.rolling_restart is not None:  # worker processes: each restarts on the file
            metrics.reloads("ok").inc()
            service.rolling_restart()
            return ReloadOutcome(True, file, digest, old.digest, (), warnings, restart, mode="rolling restart")
        try:
            new = build_runtime(config, service.parts, service.clock(), previous=old, digest=digest)
        except ConfigError as exc:  # a backstop: check_config reports what building refuses
            return _refused(service, file, tuple(str(p) for p in exc.problems), warnings)
        service.state.conversations.configure(limits_for(config), config.classifier.context_messages)
        service.runtime = new  # the swap: the next request runs on the new config
        dropped = await _drop_unreachable_routes(service, old.config, config)

        async def stragglers() -> None:  # decisions that were in flight on the old config
            late = await _drop_unreachable_routes(service, old.config, config)
            if late:
                log.info("reload: %d more route(s) to agents no longer reachable dropped", late)

        service.retire(old, stragglers)
        service.note_config()
        metrics.reloads("ok").inc()
        if new.classifier_line != old.classifier_line:
            log.info("%s", new.classifier_line)
        log.info("config reloaded from %s: hash %s (was %s); %d route(s) to agents no longer reachable dropped",
                 file, new.digest[:12], old.digest[:12], dropped)
        return ReloadOutcome(True, file, new.digest, old.digest, (), warnings, restart, dropped)


def _refused(service: ServiceCore, file: str, errors: tuple[str, ...], warnings: tuple[str, ...]) -> ReloadOutcome:
    """Count and log a refused reload (every error on its own line); the running config stays."""
    old = service.runtime
    service.accounting.metrics.reloads("rejected").inc()
    log.warning("reload of %s refused: %d error(s); still serving the config %s\n%s", file, len(errors),
                old.digest[:12], "\n".join(errors))
    return ReloadOutcome(False, file, old.digest, old.digest, errors, warnings)


async def _drop_unreachable_routes(service: ServiceCore, old: Config, new: Config) -> int:
    """Prune every channel's routes to the agents it reaches under `new` (none for a channel
    `new` no longer has)."""
    now = service.clock()
    dropped = 0
    for name in dict.fromkeys([*old.channels, *new.channels]):
        channel = new.channels.get(name)
        keep: tuple[str, ...] = ()
        if channel is not None:
            keep = tuple(a for a in new.agents if channel.allows(a))
        dropped += await service.state.views.prune(name, keep, now)
    return dropped

