"""The flat settings tables: `[server]`, `[admin]`, `[upstream]`, `[routing]`, `[classifier]`.

Each reader takes the `Table` (or None when the file has no such table) and returns the model
dataclass; problems go to the table's `Problems`. `routing_values` also reads a channel's
`overrides`, which accept the same keys as `[routing]`.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from stickyroute.config._reader import Table, quote
from stickyroute.config._tokens import bearer_token_problem
from stickyroute.config.choices import CLASSIFIER_PROVIDERS, LOG_FORMATS, LOG_LEVELS
from stickyroute.config.listeners import AdminSettings, ServerSettings
from stickyroute.config.model import AgentHints, ClassifierSettings, RoutingSettings, Strategy, UpstreamSettings

_PORT_MAX = 65535
_WILDCARD_HOSTS = ("", "0.0.0.0", "::")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MIN_TOKEN_CHARS = 16
"""An admin token shorter than this is a warning (`stickyroute check`)."""

ROUTING_KEYS = (
    "short_message_chars", "acknowledgements", "strong_weight", "weak_weight",
    "max_conversations", "log_text", "explicit_switches_per_minute",
)
AUTO_ROUTE_KEYS = (
    "auto_route", "auto_route_ttl_minutes", "auto_route_confidence_threshold",
    "auto_route_sticky_bonus", "auto_route_divergence_count", "auto_route_explicit_pin",
    "auto_route_first_message_margin", "auto_route_early_confirm_margin",
    "auto_route_keyword_switch_margin", "auto_route_contest_confirm",
    "auto_route_agent_hints", "auto_route_agent_handoffs", "auto_route_agent_releases",
)
STRATEGIES = tuple(s.value for s in Strategy)
HINT_MODES = tuple(h.value for h in AgentHints)


def _present(**values: Any) -> dict[str, Any]:
    """Only the values that were given and valid (None = absent or already reported)."""
    return {k: v for k, v in values.items() if v is not None}


def read_server(table: Table | None, config_dir: Path) -> ServerSettings:
    """`[server]`; SSL file paths are resolved against `config_dir` and must exist."""
    if table is None:
        return ServerSettings()
    table.reject_unknown(f.name for f in fields(ServerSettings))
    host = table.string("host")
    port = table.integer("port", minimum=1, maximum=_PORT_MAX)
    max_body_bytes = table.integer("max_body_bytes", minimum=1)
    values = _present(
        host=host,
        port=port,
        max_body_bytes=max_body_bytes,
        trusted_proxies=_networks(table, "trusted_proxies"),
        ssl_certfile=_existing_file(table, "ssl_certfile", config_dir),
        ssl_keyfile=_existing_file(table, "ssl_keyfile", config_dir),
        drain_s=table.number("drain_s"),
        log_format=table.choice("log_format", LOG_FORMATS),
        log_level=table.choice("log_level", LOG_LEVELS),
        **_edge(table),
    )
    for key, other in (("ssl_certfile", "ssl_keyfile"), ("ssl_keyfile", "ssl_certfile")):
        if table.has(other) and not table.has(key):
            table.error(key, f"is required when {other} is set")
    return ServerSettings(**values)


def _networks(table: Table, key: str) -> tuple[str, ...] | None:
    """An array of CIDRs, normalised (each bad one reported as `key[i]` and left out)."""
    items = table.indexed_strings(key)
    if items is None:
        return None
    valid = []
    for i, text in items:
        try:
            valid.append(str(ipaddress.ip_network(text.strip(), strict=False)))
        except ValueError:
            table.error(f"{key}[{i}]", f"not an IP network (CIDR): {quote(text)}")
    return tuple(valid)


MIN_HEADER_BYTES = 1024
"""`max_header_bytes` below this would refuse ordinary requests."""


def _edge(table: Table) -> dict[str, Any]:
    """The limits both listeners share (`stickyroute.server.edge`), as given in `table`."""
    return _present(
        header_timeout_s=table.number("header_timeout_s", positive=True),
        body_timeout_s=table.number("body_timeout_s", positive=True),
        keepalive_timeout_s=table.number("keepalive_timeout_s", positive=True),
        max_connections=table.integer("max_connections", minimum=1),
        max_header_bytes=table.integer("max_header_bytes", minimum=MIN_HEADER_BYTES),
    )


def _existing_file(table: Table, key: str, config_dir: Path) -> str | None:
    """A file path relative to the config file's directory, resolved; it must exist."""
    value = table.string(key)
    if value is None:
        return None
    path = config_dir / value
    if not path.is_file():
        table.error(key, f"file not found: {value}")
        return None
    return str(path)


def read_admin(table: Table | None, server: ServerSettings) -> AdminSettings:
    """`[admin]`; its port may not clash with the webhook listener's; a short `token` is a warning."""
    if table is None:
        return AdminSettings()
    table.reject_unknown(f.name for f in fields(AdminSettings))
    token = table.string("token")
    problem = bearer_token_problem(token) if token is not None else None
    if problem is not None:
        table.error("token", problem)
    elif token is not None and len(token) < MIN_TOKEN_CHARS:
        table.problems.warn(table.sub("token"), f"shorter than {MIN_TOKEN_CHARS} characters: easy to guess")
    admin = AdminSettings(**_present(
        host=table.string("host"),
        port=table.integer("port", minimum=1, maximum=_PORT_MAX),
        token=token,
        max_body_bytes=table.integer("max_body_bytes", minimum=1),
        auth_failures=table.integer("auth_failures", minimum=1),
        auth_window_s=table.number("auth_window_s", positive=True),
        trusted_proxies=_networks(table, "trusted_proxies"),
        session_max_age_s=table.number("session_max_age_s", positive=True),
        behind_tls=table.boolean("behind_tls"),
        **_edge(table),
    ))
    same_host = admin.host == server.host or {admin.host, server.host} & set(_WILDCARD_HOSTS)
    if table.has("port") and admin.port == server.port and same_host:
        table.error("port", f"must differ from server.port ({server.port})")
    return admin


def read_upstream(table: Table | None) -> UpstreamSettings:
    if table is None:
        return UpstreamSettings()
    table.reject_unknown(f.name for f in fields(UpstreamSettings))
    return UpstreamSettings(**_present(
        connect_timeout_s=table.number("connect_timeout_s", positive=True),
        timeout_s=table.number("timeout_s", positive=True),
        max_connections=table.integer("max_connections", minimum=1),
        max_reply_bytes=table.integer("max_reply_bytes", minimum=1),
        late_answer_s=table.number("late_answer_s"),
    ))



def read_classifier(table: Table | None) -> ClassifierSettings:
    if table is None:
        return ClassifierSettings()
    table.reject_unknown(f.name for f in fields(ClassifierSettings))
    provider = table.choice("provider", CLASSIFIER_PROVIDERS)
    model = table.string("model")
    timeout_s = table.number("timeout_s", positive=True)
    api_key_env = table.string("api_key_env")
    if api_key_env is not None and not _ENV_NAME.fullmatch(api_key_env):
        table.error("api_key_env", f"not an environment variable name: {quote(api_key_env)}")
        api_key_env = None
    return ClassifierSettings(**_present(
        provider=provider,
        model=model,
        timeout_s=timeout_s,
        api_key_env=api_key_env,
        base_url=table.url("base_url"),
        context_messages=table.integer("context_messages"),
        max_tokens=table.integer("max_tokens", minimum=1),
        calls_per_minute=table.number("calls_per_minute"),
        breaker_failures=table.integer("breaker_failures", minimum=1),
        breaker_cooldown_s=table.number("breaker_cooldown_s"),
    ))


def read_routing(table: Table | None) -> RoutingSettings:
    """`[routing]`: code defaults <- the table (which may also set `auto_route*` defaults)."""
    if table is None:
        return RoutingSettings()
    table.reject_unknown(ROUTING_KEYS + AUTO_ROUTE_KEYS)
    return RoutingSettings(**routing_values(table))


def routing_values(table: Table) -> dict[str, Any]:
    """The RoutingSettings fields set (validly) in `table`, for `dataclasses.replace`.

    `auto_route_ttl_minutes` becomes `ttl_s` (minutes * 60); `auto_route_<x>` becomes `<x>`.
    Unknown keys are the caller's business.
    """
    strategy = table.choice("auto_route", STRATEGIES)
    hints = table.choice("auto_route_agent_hints", HINT_MODES)
    ttl_minutes = table.number("auto_route_ttl_minutes", positive=True)
    acknowledgements = table.strings("acknowledgements", None)
    return _present(
        strategy=None if strategy is None else Strategy(strategy),
        ttl_s=None if ttl_minutes is None else ttl_minutes * 60.0,
        confidence_threshold=table.integer("auto_route_confidence_threshold"),
        sticky_bonus=table.integer("auto_route_sticky_bonus"),
        divergence_count=table.integer("auto_route_divergence_count", minimum=1),
        explicit_pin=table.boolean("auto_route_explicit_pin"),
        first_message_margin=table.integer("auto_route_first_message_margin"),
        early_confirm_margin=table.integer("auto_route_early_confirm_margin"),
        keyword_switch_margin=table.integer("auto_route_keyword_switch_margin"),
        contest_confirm=table.boolean("auto_route_contest_confirm"),
        short_message_chars=table.integer("short_message_chars"),
        acknowledgements=acknowledgements,
        strong_weight=table.integer("strong_weight"),
        weak_weight=table.integer("weak_weight"),
        max_conversations=table.integer("max_conversations", minimum=1),
        log_text=table.boolean("log_text"),
        explicit_switches_per_minute=table.number("explicit_switches_per_minute"),
        agent_hints=None if hints is None else AgentHints(hints),
        agent_handoffs=table.boolean("auto_route_agent_handoffs"),
        agent_releases=table.boolean("auto_route_agent_releases"),
    )
