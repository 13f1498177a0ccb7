"""`[state]`: the state backend (memory | redis), its URL, key prefix and per-operation timeout.

    [state]
    backend = "redis"
    url = "${REDIS_URL}"            # redis://[user:password@]host[:port][/db], rediss://..., unix:///path
    key_prefix = "stickyroute:"
    op_timeout_ms = 250
    when_unavailable = "memory"     # memory | refuse: what deliveries get during a Redis outage
    delivery_ttl_hours = 24         # answered deliveries remembered (both backends)
    delivery_log_max_bytes = 67108864   # memory backend: stored answers' total size bound
    claim_lease_s = 5               # a delivery claim's lease, renewed while its forward runs
    mode = "single"                 # single | cluster (url: any seed node) | sentinel:
    sentinels = ["10.0.0.1:26379", "10.0.0.2:26379"]   # mode = "sentinel" only
    master = "mymaster"                                 # mode = "sentinel" only

Only the shape is checked here (scheme, host, port, database number, prefix); whether Redis
answers is `stickyroute check`'s warning and, at startup, a logged warning: never an error.
"""

from __future__ import annotations

from dataclasses import fields
from urllib.parse import urlsplit

from stickyroute.config._reader import Table
from stickyroute.config.model import STATE_BACKENDS, STATE_MODES, WHEN_UNAVAILABLE, StateSettings

SCHEMES = ("redis", "rediss", "unix")
_PORT_MAX = 65535


def url_problem(url: str) -> str | None:
    """What is wrong with a Redis URL (the password never shown), or None."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"not a valid URL ({exc})"
    if parts.scheme not in SCHEMES:
        return f"expected a redis://, rediss:// or unix:// URL, got scheme {parts.scheme or '(none)'!r}"
    if parts.scheme == "unix":
        return None if parts.path else "a unix:// URL needs the socket path (unix:///run/redis.sock)"
    if not parts.hostname:
        return "the URL has no host (redis://host:6379/0)"
    if port is not None and not 0 < port <= _PORT_MAX:
        return f"port must be between 1 and {_PORT_MAX}"
    db = parts.path.strip("/")
    if db and not db.isdigit():
        return f"the database after the host must be a number (/0), got /{db}"
    return None


def prefix_problem(prefix: str) -> str | None:
    """What is wrong with a key prefix, or None: braces would take the place of the hash tag
    (Redis Cluster hashes the first {...} of a key), whitespace makes keys hard to type."""
    if "{" in prefix or "}" in prefix:
        return "must not contain { or } (Redis Cluster hash tags are the first {...} of a key)"
    if any(c.isspace() for c in prefix):
        return "must not contain whitespace"
    return None


def address_problem(address: str) -> str | None:
    """What is wrong with a sentinel's "host:port" (IPv6 in brackets), or None."""
    try:
        parts = urlsplit(f"redis://{address}")
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None or parts.netloc != address or "@" in address:
        return f'expected "host:port", got "{address}"'
    if not 0 < port <= _PORT_MAX:
        return f'port must be between 1 and {_PORT_MAX}, got "{address}"'
    return None


def _read_topology(table: Table, values: dict[str, object]) -> None:
    """`mode`, `sentinels`, `master`: each key only where its mode uses it; the URL's shape per mode."""
    mode = table.choice("mode", STATE_MODES)
    if mode is None:
        if table.has("mode"):
            return
        mode = "single"
    values["mode"] = mode
    if mode != "sentinel":
        for key in ("sentinels", "master"):
            if table.has(key):
                table.error(key, f'only used with mode = "sentinel" (mode is "{mode}")')
    else:
        items = table.indexed_strings("sentinels")
        if not table.has("sentinels") or items == []:
            table.error("sentinels", 'is required with mode = "sentinel" (the sentinels\' "host:port" addresses)')
        elif items is not None:
            good = []
            for i, address in items:
                problem = address_problem(address)
                if problem is None:
                    good.append(address)
                else:
                    table.error(f"sentinels[{i}]", problem)
            values["sentinels"] = tuple(good)
        master = table.string("master")
        if not table.has("master"):
            table.error("master", 'is required with mode = "sentinel" (the master name the sentinels monitor)')
        elif master is not None:
            values["master"] = master
    url = values.get("url")
    if mode == "single" or not isinstance(url, str):
        return
    parts = urlsplit(url)
    if parts.scheme == "unix":
        why = ("Redis Cluster has no unix sockets" if mode == "cluster"
               else "unix sockets are not discovered by Sentinel")
        table.error("url", f'mode = "{mode}" needs a redis:// or rediss:// URL ({why})')
    elif mode == "cluster" and parts.path.strip("/") not in ("", "0"):
        table.error("url", f"Redis Cluster has only database 0, got {parts.path}")


def read_state(table: Table | None) -> StateSettings:
    """`[state]` (defaults when absent)."""
    if table is None:
        return StateSettings()
    table.reject_unknown(f.name for f in fields(StateSettings))
    values: dict[str, object] = {}
    backend = table.choice("backend", STATE_BACKENDS)
    if backend is not None:
        values["backend"] = backend
    url = table.string("url")
    if url is not None:
        problem = url_problem(url)
        if problem is None:
            values["url"] = url
        else:
            table.error("url", problem)
    prefix = table.string("key_prefix", allow_empty=True)
    if prefix is not None:
        problem = prefix_problem(prefix)
        if problem is None:
            values["key_prefix"] = prefix
        else:
            table.error("key_prefix", problem)
    op_timeout_ms = table.number("op_timeout_ms", positive=True)
    if op_timeout_ms is not None:
        values["op_timeout_ms"] = op_timeout_ms
    when_unavailable = table.choice("when_unavailable", WHEN_UNAVAILABLE)
    if when_unavailable is not None:
        values["when_unavailable"] = when_unavailable
    ttl_hours = table.number("delivery_ttl_hours", positive=True)
    if ttl_hours is not None:
        values["delivery_ttl_hours"] = ttl_hours
    max_bytes = table.integer("delivery_log_max_bytes", minimum=1)
    if max_bytes is not None:
        values["delivery_log_max_bytes"] = max_bytes
    lease_s = table.number("claim_lease_s", positive=True)
    if lease_s is not None:
        values["claim_lease_s"] = lease_s
    _read_topology(table, values)
    return StateSettings(**values)  # type: ignore[arg-type]
