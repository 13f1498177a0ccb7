"""Command-line settings that win over the config file's: `serve --host/--port/--admin-port/
--log-format/--log-level`.

    overrides = Overrides(host="0.0.0.0", admin_port=9091)
    overrides.apply(config) -> Config      the config the process runs on (again at every reload)
    overrides.shown() -> {"server.host": "0.0.0.0", "admin.port": 9091}   what /stats and the startup line show

The config hash (`stickyroute.config.digest`) is computed over the file's config, before the
overrides: replicas that run one file with different ports show the same hash, and the overrides
are shown apart.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any

from stickyroute.config.model import Config

__all__ = ["Overrides"]

_KEYS = {"host": "server.host", "port": "server.port", "log_format": "server.log_format",
         "log_level": "server.log_level", "admin_port": "admin.port"}
"""Each override and the dotted config key it replaces."""


@dataclass(frozen=True, slots=True)
class Overrides:
    """`serve`'s overrides of the config file; None: the file's value."""

    host: str | None = None
    """`server.host` (`--host`)."""
    port: int | None = None
    """`server.port` (`--port`)."""
    admin_port: int | None = None
    """`admin.port` (`--admin-port`)."""
    log_format: str | None = None
    """`server.log_format` (`--log-format`)."""
    log_level: str | None = None
    """`server.log_level` (`--log-level`)."""

    def apply(self, config: Config) -> Config:
        """`config` with the overridden values (the same object when nothing is overridden)."""
        given = self.shown()
        if not given:
            return config
        server = replace(config.server, **{key.split(".")[1]: value for key, value in given.items()
                                           if key.startswith("server.")})
        admin = replace(config.admin, port=self.admin_port) if self.admin_port else config.admin
        return replace(config, server=server, admin=admin)

    def shown(self) -> dict[str, Any]:
        """The overridden keys (dotted, as in the file) and their values, in a fixed order."""
        return {_KEYS[f.name]: getattr(self, f.name) for f in fields(self) if getattr(self, f.name)}

    def as_json(self) -> dict[str, Any]:
        """For the worker processes' spec (`from_json` reads it back)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Overrides:
        return cls(**{f.name: data.get(f.name) for f in fields(cls)})
