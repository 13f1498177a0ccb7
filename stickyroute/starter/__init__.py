"""`stickyroute init`: a commented starter config and the rule packs it uses.

    files = starter_files(channels=("telegram",), agents=("support", "coder"))
        -> {"stickyroute.toml": text, "rules/support.toml": text, ...}     relative path -> content
    needed_env(channels) -> [(variable, what to put in it)]

The config comes from `templates/stickyroute.toml` (package data) with the agents and the
channels filled in (`stickyroute.starter.channels`). Agents are placeholders on loopback ports
(9101, 9102, ...), where `serve --demo-agents` answers; an agent named like a shipped rule pack
gets a copy of it beside the config (`rules = "rules/<name>.toml"`), so the folder works wherever
it is copied. The admin token and every platform secret are `${ENV}` references.
"""

from __future__ import annotations

from importlib.resources import files

from stickyroute.config.rulepack import shipped_packs, shipped_rules_dir
from stickyroute.starter.channels import CHANNEL_TEMPLATES, ChannelTemplate

__all__ = ["ADMIN_TOKEN_ENV", "CHANNEL_TEMPLATES", "CONFIG_NAME", "DEFAULT_AGENTS", "ChannelTemplate",
           "needed_env", "starter_files"]

CONFIG_NAME = "stickyroute.toml"
DEFAULT_AGENTS = ("support", "coder")
FIRST_AGENT_PORT = 9101
ADMIN_TOKEN_ENV = ("STICKYROUTE_ADMIN_TOKEN", "the admin API's bearer token: 16 or more random characters")


def _agent(name: str, port: int) -> str:
    if name in shipped_packs():
        knows = f'rules = "rules/{name}.toml"      # keywords and description: edit the copy beside this file'
    else:
        knows = (f'description = "What {name} does, in one sentence (the classifier reads it)."\n'
                 'keywords = ["a distinctive phrase", "another one"]   # 6 points each (strong_weight)')
    return f'[agents.{name}]\nurl = "http://127.0.0.1:{port}"   # your agent\'s webhook endpoint\n{knows}\n'


def _channel(name: str, template: ChannelTemplate, default_agent: str) -> str:
    return f'[channels.{name}]\npath = "/{name}"\ndefault_agent = "{default_agent}"\n{template.body}'


def starter_files(channels: tuple[str, ...], agents: tuple[str, ...] = DEFAULT_AGENTS) -> dict[str, str]:
    """The files of a starter folder (see the module docstring). KeyError for a channel type
    without a template; the first agent is every channel's default."""
    templates = [(name, CHANNEL_TEMPLATES[name]) for name in channels]
    text = (files("stickyroute.starter") / "templates" / CONFIG_NAME).read_text(encoding="utf-8")
    text = text.replace("@@AGENTS@@\n", "\n".join(_agent(a, FIRST_AGENT_PORT + i) for i, a in enumerate(agents)))
    text = text.replace("@@CHANNELS@@\n", "\n".join(_channel(n, t, agents[0]) for n, t in templates))
    out = {CONFIG_NAME: text}
    for name in agents:
        if name in shipped_packs():
            out[f"rules/{name}.toml"] = (shipped_rules_dir() / f"{name}.toml").read_text(encoding="utf-8")
    return out


def needed_env(channels: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every environment variable the starter config reads (each once), with what to put in it."""
    pairs = [ADMIN_TOKEN_ENV, *(pair for name in channels for pair in CHANNEL_TEMPLATES[name].env)]
    return list(dict(pairs).items())
