"""Config of issue #11: channel `agents` allow-lists, agent `hidden`, explicit switch limits,
`[admin] token`, `[server] drain_s` -> exact values, and broken ones -> exact problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config, load_config

AGENTS = """
[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["pull request"]

[agents.support]
url = "http://127.0.0.1:9102"
keywords = ["password reset"]

[agents.internal]
url = "http://127.0.0.1:9103"
hidden = true
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """(errors, warnings) as `key: message`."""
    config, found = check_config(write(tmp_path, text), env={} if env is None else env)
    errors = [f"{p.key}: {p.message}" for p in found if not p.warning]
    assert (config is None) == bool(errors)
    return errors, [f"{p.key}: {p.message}" for p in found if p.warning]


def channel(*lines: str, agents: str = AGENTS) -> str:
    """`agents` and a Telegram channel (default agent support unless set) holding `lines`."""
    body = "\n".join(lines)
    default = "" if "default_agent" in body else 'default_agent = "support"\n'
    return f'{agents}\n[channels.telegram]\nsecret_token = "s3cret"\n{default}{body}\n'


def test_defaults_every_agent_reachable_ten_switches_a_minute_no_token_25_s_drain(tmp_path):
    config = load_config(write(tmp_path, channel()), env={})
    telegram = config.channels["telegram"]
    assert telegram.agents is None
    assert [telegram.allows(a) for a in ("coder", "support", "internal")] == [True, True, True]
    assert telegram.routing.explicit_switches_per_minute == 10.0
    assert [a.hidden for a in config.agents.values()] == [False, False, True]
    assert config.admin.token is None
    assert config.server.drain_s == 25.0


def test_allow_list_limit_token_and_drain_are_read(tmp_path):
    text = channel('agents = ["support", "coder"]', "[channels.telegram.overrides]",
                   "explicit_switches_per_minute = 3") + """
[server]
drain_s = 2.5
[admin]
token = "${ADMIN_TOKEN}"
[routing]
explicit_switches_per_minute = 20
"""
    config = load_config(write(tmp_path, text), env={"ADMIN_TOKEN": "a-long-enough-admin-token"})
    telegram = config.channels["telegram"]
    assert telegram.agents == ("support", "coder")
    assert [telegram.allows(a) for a in ("coder", "support", "internal")] == [True, True, False]
    assert telegram.routing.explicit_switches_per_minute == 3.0
    assert config.routing.explicit_switches_per_minute == 20.0
    assert config.admin.token == "a-long-enough-admin-token"
    assert "a-long-enough-admin-token" not in repr(config)
    assert config.server.drain_s == 2.5


BROKEN = [
    pytest.param(channel('agents = ["support", "billing"]'),
                 ['channels.telegram.agents[1]: no agent named "billing"'], id="unknown-agent"),
    pytest.param(channel('agents = ["support", "support"]'),
                 ['channels.telegram.agents[1]: "support" is listed twice'], id="twice"),
    pytest.param(channel("agents = []"),
                 ["channels.telegram.agents: must not be empty (leave it out to reach every agent)"], id="empty"),
    pytest.param(channel('agents = "support"'),
                 ['channels.telegram.agents: expected an array of strings, got the string "support"'],
                 id="not-a-list"),
    pytest.param(channel('agents = ["coder"]'),
                 ['channels.telegram.default_agent: "support" is not among channels.telegram.agents '
                  "(the agents reachable on this channel)"], id="default-not-reachable"),
    pytest.param(channel('agents = ["support"]', "[[channels.telegram.bindings]]", 'user = "1"', 'agent = "coder"',
                         "[[channels.telegram.thread_routes]]", 'chat = "-100"', 'thread = "7"',
                         'agent = "internal"'),
                 ['channels.telegram.bindings[0].agent: "coder" is not among channels.telegram.agents '
                  "(the agents reachable on this channel)",
                  'channels.telegram.thread_routes[0].agent: "internal" is not among channels.telegram.agents '
                  "(the agents reachable on this channel)"], id="layer1-not-reachable"),
    pytest.param(channel(agents=AGENTS.replace("hidden = true", 'hidden = "yes"')),
                 ['agents.internal.hidden: expected true or false, got the string "yes"'], id="hidden-not-bool"),
    pytest.param(channel("[channels.telegram.overrides]", "explicit_switches_per_minute = -1"),
                 ["channels.telegram.overrides.explicit_switches_per_minute: must be >= 0, got -1"], id="negative-limit"),
    pytest.param(channel() + "[server]\ndrain_s = \"soon\"\n",
                 ['server.drain_s: expected a number, got the string "soon"'], id="drain-not-number"),
    pytest.param(channel() + '[admin]\ntoken = ""\n', ["admin.token: must not be empty"], id="empty-token"),
    pytest.param(channel() + '[admin]\ntoken = "${NOPE}"\n', ["admin.token: environment variable NOPE is not set"],
                 id="token-env-unset"),
]


@pytest.mark.parametrize(("text", "expected"), BROKEN)
def test_broken_operating_settings_name_the_key(tmp_path, text, expected):
    assert problems(tmp_path, text)[0] == expected


def test_a_short_admin_token_is_a_warning(tmp_path):
    errors, warnings = problems(tmp_path, channel() + '[admin]\ntoken = "short"\n')
    assert errors == []
    assert warnings == ["admin.token: shorter than 16 characters: easy to guess"]


@pytest.mark.parametrize("token", ["snowman-\u2603-admin-token-long", "with a space in the admin token", "tab\tin-the-admin-token"])
def test_an_admin_or_agent_token_that_cannot_travel_in_a_header_is_an_error(tmp_path, token):
    """Found by the adversarial pass: a non-Latin-1 admin token made POST /v1/session a 500 (the
    cookie could not be encoded) and could never match a Bearer header."""
    message = "expected printable ASCII without spaces (it is sent in an Authorization header)"
    errors, _warnings = problems(tmp_path, channel() + f'[admin]\ntoken = "{token}"\n')
    assert errors == [f"admin.token: {message}"]
    agents = AGENTS.replace("hidden = true", f'hidden = true\ntoken = "{token}"')
    errors, _warnings = problems(tmp_path, channel(agents=agents))
    assert errors == [f"agents.internal.token: {message}"]


def test_a_hidden_agent_without_keywords_is_not_warned_about(tmp_path):
    text = channel("[channels.telegram.overrides]", 'auto_route = "sticky_heuristic"')
    assert problems(tmp_path, text) == ([], [])
