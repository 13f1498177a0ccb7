"""`stickyroute explain` shows issue #22's rules: `--hint done` (a release, or `then` a handoff),
`--held` (a human desk holds the conversation) and detours to non-sticky agents, exact lines."""

from __future__ import annotations

import argparse

import pytest

from stickyroute.config.model import Strategy
from stickyroute.replay import explain as explain_module
from tests.scenario import DESK_ROSTER, make_config

WEATHER = "will it rain tomorrow, do I need an umbrella"
BILLING = "I was charged twice, please refund my invoice"


def run(capsys, monkeypatch, *args: str, strategy: Strategy = Strategy.STICKY_HEURISTIC,
        **routing: object) -> tuple[int, list[str], str]:
    config = make_config(strategy, roster=DESK_ROSTER, **routing)
    monkeypatch.setattr("stickyroute.config.loader.load_config", lambda _path, **_kw: config)
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    code = explain_module.run(parser.parse_args(["--config", "c.toml", "--channel", "telegram", *args]))
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


@pytest.mark.parametrize(
    ("hint", "route_line", "signal_line", "tail"),
    [
        pytest.param("done", "route: none (first message of a session)", "agent signal: done: the route is released: the message is decided as the first of a "
                     "session (the release is logged with reason released)", ["counter: 0 -> 0",
                                                                             "decision: billing (keywords)"],
                     id="released"),
        pytest.param("done; then=support", "route: support, no pending divergence", "agent signal: done; then support: released and handed to support "
                     "(reason handoff)", ["counter: 0 -> 0", "decision: support (handoff)"], id="then"),
    ],
)
def test_done_shows_the_release(capsys, monkeypatch, hint, route_line, signal_line, tail) -> None:
    """The route line shows the route the message meets after the signal."""
    code, lines, _err = run(capsys, monkeypatch, "--text", BILLING, "--current", "coder", "--hint", hint,
                            first_message_margin=0)
    assert (code, lines[2], lines[3], lines[-len(tail):]) == (0, route_line, signal_line, tail)


def test_an_ignored_done_says_why(capsys, monkeypatch) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", BILLING, "--current", "coder", "--hint", "done",
                            strategy=Strategy.OFF)
    assert (code, lines[3]) == (0, "agent signal: done: ignored (auto_route is off)")


def test_a_held_desk_takes_the_message(capsys, monkeypatch) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", BILLING, "--current", "humans", "--held",
                            keyword_switch_margin=6)
    assert (code, lines[2], lines[3], lines[-1]) == (
        0, "route: humans, no pending divergence, held by a human desk",
        "held: humans is a human desk holding the conversation for 240 minutes of inactivity",
        "decision: humans (held)")


def test_held_on_an_agent_that_is_no_desk_says_so(capsys, monkeypatch) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", BILLING, "--current", "coder", "--held",
                            keyword_switch_margin=6)
    assert (code, lines[3], lines[-1]) == (0, "held: ignored (coder is not a human desk)",
                                           "decision: billing (keywords)")


@pytest.mark.parametrize(
    ("args", "routing", "tail"),
    [
        pytest.param(["--current", "coder"], {"keyword_switch_margin": 6},
                     ["decision: weather (detour)",
                      "detour: weather is not sticky: it answers this message, the route stays with coder"],
                     id="keywords"),
        pytest.param([], {"first_message_margin": 0},
                     ["decision: weather (detour)",
                      "detour: weather is not sticky: it answers this message, no route is cached"], id="first-message"),
        pytest.param(["--current", "coder"], {"divergence_count": 1},
                     ["  coder, none or an error: stay on coder (llm_rejected)",
                      "  a non-sticky agent (weather): it answers, the route stays with coder (detour)"],
                     id="the-classifier-may-answer-a-detour"),
    ],
)
def test_a_detour_is_shown(capsys, monkeypatch, args, routing, tail) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", WEATHER, *args, **routing)
    assert (code, lines[-len(tail):]) == (0, tail)
