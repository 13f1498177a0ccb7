"""Read a stickyroute TOML config file into the frozen `Config` model, reporting every problem.

    load_config(path, env=None, warn=True, key_env=None) -> Config   raises ConfigError(every error)
    check_config(path, env=None, key_env=None) -> (Config | None, [ConfigProblem])   errors and warnings

The file is parsed with tomlkit and converted to plain Python values; `${NAME}` in any string
value is replaced from `env` (default `os.environ`; an unset variable is an error naming the
key and the variable). What the config asks of the environment beyond that (the classifier's
API key, read from `key_env`, default `env`) is checked by `stickyroute.config.environment`:
`check`, `serve` and a reload all go through `check_config`, so they report the same errors.
Validation never stops at the first problem: each is a `ConfigProblem(file, dotted.key, message)`, e.g.
`proxy.toml: channels.telegram.overrides.auto_route: expected one of off, ...`.
Whole-file problems use the keys `(file)` (unreadable) and `(syntax)` (TOML syntax, with the
1-based line and column). Relative paths (`agents.*.rules`, `server.ssl_*file`) are relative
to the config file's directory.

Warnings (`warning=True`, never fatal): a channel without its platform's secret (Telegram
`secret_token`, WhatsApp / Messenger / Instagram `app_secret`, Slack `signing_secret`, Discord
`public_key`, LINE `channel_secret`); an agent without keywords while a channel uses sticky_heuristic;
a human desk's hold shorter than a channel's TTL, a desk without a token, a hidden desk
(`stickyroute.config._desks`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from stickyroute.config._agents import read_agents
from stickyroute.config._channels import read_channels
from stickyroute.config._desks import warn_desks
from stickyroute.config._hints import read_hints, warn_unsigned
from stickyroute.config._reader import Problems, Table, read_toml, substitute_env
from stickyroute.config._sections import (
    read_admin,
    read_classifier,
    read_routing,
    read_server,
    read_upstream,
)
from stickyroute.config._state import read_state
from stickyroute.config.environment import classifier_key_problem
from stickyroute.config.model import Agent, Channel, Config, Strategy
from stickyroute.config.platform_api import is_api_key
from stickyroute.errors import ConfigError, ConfigProblem

TOP_LEVEL_KEYS = ("server", "admin", "upstream", "routing", "classifier", "state", "hints", "agents", "channels")

log = logging.getLogger("stickyroute.config")


def load_config(path: str | Path, env: Mapping[str, str] | None = None, *, warn: bool = True,
                key_env: Mapping[str, str] | None = None) -> Config:
    """The validated config at `path`; warnings are logged unless `warn` is False (tools that
    only read a config, such as `explain` and `replay`, leave them to `check` and `serve`).

    Raises ConfigError listing every error of the file (never only the first).
    """
    config, problems = check_config(path, env, key_env=key_env)
    errors = [p for p in problems if not p.warning]
    if config is None or errors:
        raise ConfigError(errors)
    if warn:
        for problem in problems:
            log.warning("config warning: %s", problem)
    return config


def check_config(path: str | Path, env: Mapping[str, str] | None = None, *,
                 key_env: Mapping[str, str] | None = None) -> tuple[Config | None, list[ConfigProblem]]:
    """Validate the file at `path`: (the Config or None when any error, errors and warnings).

    `env` resolves `${VAR}` (default os.environ); `key_env` is where the classifier's API key is
    looked for (default: `env`, as the running classifier does)."""
    config, problems = read_config(path, env, key_env=key_env)
    return config, problems.items


def read_config(path: str | Path, env: Mapping[str, str] | None = None, *,
                key_env: Mapping[str, str] | None = None) -> tuple[Config | None, Problems]:
    """`check_config` with its `Problems` (which also hold every table's accepted keys and every
    enumerated key's values: `stickyroute.config.reference` reads them)."""
    file = str(path)
    problems = Problems(file)
    data = read_toml(file, problems)
    if data is None:
        return None, problems
    env = os.environ if env is None else env
    data = substitute_env(data, env, problems, later=is_api_key)
    root = Table(data, "", problems)
    root.reject_unknown(TOP_LEVEL_KEYS)
    config_dir = Path(file).absolute().parent
    server = read_server(root.table("server"), config_dir)
    admin = read_admin(root.table("admin"), server)
    upstream = read_upstream(root.table("upstream"))
    routing = read_routing(root.table("routing"))
    classifier = read_classifier(root.table("classifier"))
    key_problem = classifier_key_problem(classifier, env if key_env is None else key_env)
    if key_problem is not None:
        problems.error("classifier.provider", key_problem)
    state = read_state(root.table("state"))
    hints = read_hints(root.table("hints"))
    agents = read_agents(root, config_dir, _names(data.get("channels")))
    channels = read_channels(root, _names(data.get("agents")), routing, upstream)
    _warn_keywordless(problems, agents, channels)
    warn_desks(problems, agents, channels)
    warn_unsigned(problems, hints, agents, state)
    if problems.errors:
        return None, problems
    config = Config(
        path=file,
        agents=MappingProxyType(agents),
        channels=MappingProxyType(channels),
        server=server,
        admin=admin,
        upstream=upstream,
        routing=routing,
        classifier=classifier,
        state=state,
        hints=hints,
    )
    return config, problems


def _names(table: Any) -> tuple[str, ...]:
    """The sub-table names of a raw table (agents or channels named in the file)."""
    return tuple(table) if isinstance(table, dict) else ()


def _warn_keywordless(problems: Problems, agents: Mapping[str, Agent],
                      channels: Mapping[str, Channel]) -> None:
    """Warn about agents the keyword gate can never suggest on a sticky_heuristic channel."""
    heuristic = [c.name for c in channels.values()
                 if c.routing.strategy is Strategy.STICKY_HEURISTIC]
    if not heuristic:
        return
    which = (f"channel {heuristic[0]} uses" if len(heuristic) == 1
             else f"channels {', '.join(heuristic)} use")
    for agent in agents.values():
        if not agent.keywords and not agent.hidden:  # hidden: the gate never suggests it anyway
            problems.warn(f"agents.{agent.name}.keywords",
                          f"no keywords while {which} sticky_heuristic: "
                          "the keyword gate never suggests this agent")
