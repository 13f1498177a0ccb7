"""Config of issue #22: agent `sticky`, `human`, `hold_minutes` -> exact values; broken ones ->
exact problems naming the file's dotted key; the warnings `stickyroute check` prints about desks."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config, load_config
from stickyroute.config.agent import DEFAULT_HOLD_MINUTES

AGENTS = """
[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["pull request"]

[agents.weather]
url = "http://127.0.0.1:9102"
keywords = ["forecast"]
sticky = false

[agents.humans]
url = "http://127.0.0.1:9103"
keywords = ["complaint"]
human = true
hold_minutes = 240
token = "humans-desk-token-0123456789"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def config_text(agents: str = AGENTS, ttl_minutes: float = 30) -> str:
    return (f'{agents}\n[channels.telegram]\nsecret_token = "s3cret"\ndefault_agent = "coder"\n'
            f'[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_ttl_minutes = {ttl_minutes}\n')


def problems(tmp_path: Path, text: str) -> tuple[list[str], list[str]]:
    """(errors, warnings) as `key: message`; every problem names the config file."""
    path = write(tmp_path, text)
    config, found = check_config(path, env={})
    assert {p.file for p in found} <= {str(path)}
    errors = [f"{p.key}: {p.message}" for p in found if not p.warning]
    assert (config is None) == bool(errors)
    return errors, [f"{p.key}: {p.message}" for p in found if p.warning]


def test_sticky_human_and_hold_are_read(tmp_path):
    config = load_config(write(tmp_path, config_text()), env={})
    assert [(a.name, a.sticky, a.human, a.hold_s) for a in config.agents.values()] == [
        ("coder", True, False, DEFAULT_HOLD_MINUTES * 60), ("weather", False, False, DEFAULT_HOLD_MINUTES * 60),
        ("humans", True, True, 240 * 60.0)]


def test_a_desk_without_hold_minutes_holds_a_day(tmp_path):
    config = load_config(write(tmp_path, config_text(AGENTS.replace("hold_minutes = 240\n", ""))), env={})
    assert (DEFAULT_HOLD_MINUTES, config.agents["humans"].hold_s) == (1440.0, 86400.0)


BROKEN = [
    pytest.param(AGENTS.replace("human = true\n", "human = true\nsticky = false\n"),
                 ["agents.humans.sticky: a human desk (human = true) is always sticky: remove sticky = false"],
                 id="desk-not-sticky"),
    pytest.param(AGENTS.replace("sticky = false\n", "sticky = false\nhold_minutes = 60\n"),
                 ["agents.weather.hold_minutes: only a human desk has a hold: set human = true, or remove "
                  "hold_minutes"], id="hold-without-desk"),
    pytest.param(AGENTS.replace("hold_minutes = 240", "hold_minutes = 0"),
                 ["agents.humans.hold_minutes: must be > 0, got 0"], id="hold-zero"),
    pytest.param(AGENTS.replace("hold_minutes = 240", 'hold_minutes = "4h"'),
                 ['agents.humans.hold_minutes: expected a number, got the string "4h"'], id="hold-not-a-number"),
    pytest.param(AGENTS.replace("sticky = false", 'sticky = "no"'),
                 ['agents.weather.sticky: expected true or false, got the string "no"'], id="sticky-not-bool"),
    pytest.param(AGENTS.replace("human = true", "human = 1"),
                 ["agents.humans.human: expected true or false, got the integer 1"], id="human-not-bool"),
    pytest.param(AGENTS.replace("human = true", "humane = true"),
                 ['agents.humans.humane: unknown key (did you mean "human"?)'], id="misspelt"),
]


@pytest.mark.parametrize(("agents", "expected"), BROKEN)
def test_broken_desk_settings_name_the_key(tmp_path, agents, expected):
    errors = problems(tmp_path, config_text(agents))[0]
    assert errors[:len(expected)] == expected


@pytest.mark.parametrize(
    ("agents", "ttl", "expected"),
    [
        pytest.param(AGENTS, 30, [], id="none"),
        pytest.param(AGENTS, 300, ["agents.humans.hold_minutes: 240 minutes is shorter than channel telegram's "
                                   "auto_route_ttl_minutes (300): the hold ends before the route"], id="short-hold"),
        pytest.param(AGENTS.replace('token = "humans-desk-token-0123456789"\n', ""), 30,
                     ["agents.humans.token: a human desk without a token can release a conversation only in its "
                      "webhook reply (X-Stickyroute-Hint: done), not through POST /v1/hints"], id="no-token"),
        pytest.param(AGENTS.replace("human = true", "human = true\nhidden = true"), 30,
                     ["agents.humans.hidden: a hidden desk is reached only by admin pins and Layer 1: handoffs and "
                      "/agent cannot name it"], id="hidden"),
    ],
)
def test_desk_warnings(tmp_path, agents, ttl, expected):
    errors, warnings = problems(tmp_path, config_text(agents, ttl))
    assert (errors, [w for w in warnings if "desk" in w or "hold" in w]) == ([], expected)


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        pytest.param("", True, id="default-on"),
        pytest.param("auto_route_agent_releases = false\n", False, id="off"),
    ],
)
def test_agent_releases_are_read_per_channel(tmp_path, overrides, expected):
    config = load_config(write(tmp_path, config_text() + overrides), env={})
    assert config.channels["telegram"].routing.agent_releases is expected


def test_agent_releases_must_be_a_boolean(tmp_path):
    errors = problems(tmp_path, config_text() + 'auto_route_agent_releases = "yes"\n')[0]
    assert errors == ['channels.telegram.overrides.auto_route_agent_releases: expected true or false, '
                      'got the string "yes"']


def test_confirm_keywords_merge_from_the_agent_and_its_rule_pack(tmp_path):
    (tmp_path / "taxi.toml").write_text('keywords = ["taxi"]\nconfirm_keywords = ["cab", "Ride", "taxi"]\n')
    agents = AGENTS + '\n[agents.taxi]\nurl = "http://127.0.0.1:9104"\nrules = "taxi.toml"\nweak_keywords = ["ride"]\n' \
        'confirm_keywords = ["car"]\n'
    config = load_config(write(tmp_path, config_text(agents)), env={})
    taxi = config.agents["taxi"]
    assert (taxi.keywords, taxi.weak_keywords, taxi.confirm_keywords) == (("taxi",), ("ride",), ("car", "cab"))


def test_a_confirm_keyword_without_a_letter_is_an_error(tmp_path):
    agents = AGENTS.replace('keywords = ["pull request"]', 'keywords = ["pull request"]\nconfirm_keywords = ["++"]')
    assert problems(tmp_path, config_text(agents))[0] == [
        'agents.coder.confirm_keywords[0]: "++" has no letter or digit (never matches)']


def test_stickyroute_check_names_the_file_and_the_desk_keys(tmp_path, capsys):
    from stickyroute.cli.main import main

    path = write(tmp_path, config_text(AGENTS.replace("hold_minutes = 240", "hold_minutes = -5")
                                       .replace("sticky = false", "stiky = false")))
    assert main(["check", str(path)]) == 2
    assert capsys.readouterr().out.splitlines()[:2] == [
        f'{path}: agents.weather.stiky: unknown key (did you mean "sticky"?)',
        f"{path}: agents.humans.hold_minutes: must be > 0, got -5"]


def test_sticky_bonus_offset_from_the_agent_or_its_rule_pack(tmp_path):
    (tmp_path / "taxi.toml").write_text('keywords = ["taxi"]\nsticky_bonus_offset = 2\n')
    agents = AGENTS.replace('keywords = ["forecast"]', 'keywords = ["forecast"]\nsticky_bonus_offset = 3\nrules = '
                            '"taxi.toml"') + '\n[agents.taxi]\nurl = "http://127.0.0.1:9104"\nrules = "taxi.toml"\n'
    config = load_config(write(tmp_path, config_text(agents)), env={})
    assert [(a.name, a.sticky_bonus_offset) for a in config.agents.values()] == [
        ("coder", 0), ("weather", 3), ("humans", 0), ("taxi", 2)]


@pytest.mark.parametrize(("value", "problem"), [
    ("-1", "agents.coder.sticky_bonus_offset: must be between 0 and 100, got -1"),
    ('"1"', 'agents.coder.sticky_bonus_offset: expected an integer, got the string "1"'),
])
def test_a_bad_sticky_bonus_offset_names_its_key(tmp_path, value, problem):
    agents = AGENTS.replace('keywords = ["pull request"]', f'keywords = ["pull request"]\nsticky_bonus_offset = {value}')
    assert problems(tmp_path, config_text(agents))[0] == [problem]


def test_a_packs_bad_sticky_bonus_offset_is_reported_under_rules(tmp_path):
    (tmp_path / "taxi.toml").write_text("sticky_bonus_offset = 101\n")
    agents = AGENTS + '\n[agents.taxi]\nurl = "http://127.0.0.1:9104"\nrules = "taxi.toml"\n'
    assert problems(tmp_path, config_text(agents))[0] == [
        "agents.taxi.rules: taxi.toml: sticky_bonus_offset: must be between 0 and 100, got 101"]


def test_two_topic_confirm_from_the_agent_or_its_rule_pack(tmp_path):
    (tmp_path / "taxi.toml").write_text('keywords = ["taxi"]\ntwo_topic_confirm = true\n')
    agents = AGENTS.replace('keywords = ["forecast"]', 'keywords = ["forecast"]\ntwo_topic_confirm = false\nrules = '
                            '"taxi.toml"') + '\n[agents.taxi]\nurl = "http://127.0.0.1:9104"\nrules = "taxi.toml"\n'
    config = load_config(write(tmp_path, config_text(agents)), env={})
    assert [(a.name, a.two_topic_confirm) for a in config.agents.values()] == [
        ("coder", False), ("weather", False), ("humans", False), ("taxi", True)]
    agents = AGENTS.replace('keywords = ["pull request"]', 'keywords = ["pull request"]\ntwo_topic_confirm = 1')
    assert problems(tmp_path, config_text(agents))[0] == [
        "agents.coder.two_topic_confirm: expected true or false, got the integer 1"]
