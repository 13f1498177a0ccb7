"""The two lines that frame a run in the log: the startup line and the "stopped" line.

    log_started(config, digest, overrides, classifier, workers=1)    once the listeners are bound
    log_stopped(uptime_s)                                            once everything has closed

The startup line names the version, the config file and its hash (the file's, see
`stickyroute.config.digest`) with the command-line overrides apart, the channels and their paths,
the agents, the state backend (a Redis URL without its password, "cluster <URL>" or "sentinel
master 'NAME' via host:port"), the classifier and the
listeners. In the JSON log format both are records with `message` "started" / "stopped" and the
same facts as fields (`stickyroute.server.logs`). Logger: `stickyroute`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from stickyroute import __version__
from stickyroute.config.model import Config
from stickyroute.state.redis.topology import where

__all__ = ["log_started", "log_stopped", "startup_fields"]

log = logging.getLogger("stickyroute")


def startup_fields(config: Config, digest: str, overrides: Mapping[str, Any], classifier: str,
                   workers: int = 1) -> dict[str, Any]:
    """The startup line's facts (the JSON fields). `config` is the running one (overrides
    applied); `classifier` the classifier's line (`describe_classifier`)."""
    state = config.state
    return {
        "version": __version__,
        "config": config.path,
        "config_hash": digest,
        "overrides": dict(overrides),
        "channels": [{"name": c.name, "type": c.type.value, "paths": list(c.paths)} for c in config.channels.values()],
        "agents": list(config.agents),
        "state": {"backend": state.backend,
                  "url": where(state.url, state.mode, state.sentinels, state.master) if state.shared else None},
        "classifier": classifier.removeprefix("classifier: "),
        "webhooks": f"{config.server.host}:{config.server.port}",
        "admin": f"{config.admin.host}:{config.admin.port}",
        "workers": workers,
    }


def log_started(config: Config, digest: str, overrides: Mapping[str, Any], classifier: str, workers: int = 1) -> None:
    """Log the startup line (INFO)."""
    fields = startup_fields(config, digest, overrides, classifier, workers)
    given = ", ".join(f"{key} {value}" for key, value in fields["overrides"].items())
    channels = ", ".join(f"{c['name']} ({c['type']}) {' '.join(c['paths'])}" for c in fields["channels"])
    state = fields["state"]["backend"] + (f" {fields['state']['url']}" if fields["state"]["url"] else "")
    log.info("stickyroute %s started: config %s hash %s%s; channels %s; agents %s; state %s; classifier %s; "
             "webhooks on %s, admin on %s%s", __version__, config.path, digest[:12],
             f" (overrides: {given})" if given else "", channels, ", ".join(fields["agents"]), state,
             fields["classifier"], fields["webhooks"], fields["admin"], f"; {workers} workers" if workers > 1 else "",
             extra={"event": "started", "fields": fields})


def log_stopped(uptime_s: float) -> None:
    """Log the "stopped" line (INFO); `uptime_s` in seconds."""
    log.info("stickyroute stopped after %.1f s", uptime_s,
             extra={"event": "stopped", "fields": {"version": __version__, "uptime_s": round(uptime_s, 3)}})
