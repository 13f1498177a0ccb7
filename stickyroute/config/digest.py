"""The hash of a running config: what `/stats`, `/v1/status` and `stickyroute_config_info` show.

    config_digest(config) -> "3f2a..."   64 hex characters of SHA-256

Computed over the validated config (every table, every agent with its merged rule packs, secrets
included), not over the file's bytes: comments and formatting do not change it, a rule pack that
changed does, and two replicas that loaded the same settings show the same hash. The file's path
is left out (the same config at another path has the same hash).
"""

from __future__ import annotations

import dataclasses
import enum
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from stickyroute.config.model import Config

__all__ = ["config_digest"]


def _plain(value: Any) -> Any:
    """`value` as JSON-able data: dataclasses as dicts (every field, secrets included), enums as
    their value, mappings as dicts, tuples as lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    return value


def config_digest(config: Config) -> str:
    """SHA-256 (hex) of the config's settings (see the module docstring)."""
    data = _plain(config)
    data.pop("path", None)
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
