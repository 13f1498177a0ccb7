"""`stickyroute explain --hint / --handoff` (issue #12): the effect of a pending agent signal,
exact lines."""

from __future__ import annotations

import argparse
from dataclasses import replace

import pytest

from stickyroute.config.model import AgentHints, RoutingSettings, Strategy
from stickyroute.replay import explain as explain_module
from stickyroute.replay.corpus import load_agents, replay_config
from tests.replay.test_explain import DATA

TAXI = "Also book me a taxi to get there"


def config(**routing: object):
    settings = replace(RoutingSettings(strategy=Strategy.STICKY_HEURISTIC), **routing)  # type: ignore[arg-type]
    return replay_config(load_agents(DATA / "hand_agents.toml"), settings)


def run(capsys, monkeypatch, *args: str, **routing: object) -> tuple[int, list[str], str]:
    monkeypatch.setattr("stickyroute.config.loader.load_config", lambda _path, **_kw: config(**routing))
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    code = explain_module.run(parser.parse_args(["--config", "c.toml", "--channel", "telegram", *args]))
    out = capsys.readouterr()
    return code, out.out.splitlines(), out.err


@pytest.mark.parametrize(
    ("mode", "signal_line", "tail"),
    [
        pytest.param(AgentHints.CONFIRM, "agent signal: not-mine: pending (confirm)",
                     ["decision: ask the classifier (hint)", "  an agent other than hotel: switch to it (agent_hint)",
                      "  hotel, none or an error: stay on hotel (hint_rejected)"], id="confirm"),
        pytest.param(AgentHints.DIVERGENCE, "agent signal: not-mine: pending (divergence)",
                     ["decision: ask the classifier (confirm), candidate taxi",
                      "  an agent other than hotel: switch to it (agent_hint)",
                      "  hotel, none or an error: stay on hotel (llm_rejected)"], id="divergence"),
        pytest.param(AgentHints.OFF, "agent signal: not-mine: ignored (auto_route_agent_hints is off)",
                     ["decision: hotel (divergence_pending)"], id="off"),
    ],
)
def test_a_pending_hint_shows_its_effect(capsys, monkeypatch, mode, signal_line, tail) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", TAXI, "--current", "hotel", "--hint", "not-mine",
                            agent_hints=mode)
    assert (code, lines[3], lines[-len(tail):]) == (0, signal_line, tail)


def test_a_handoff_shows_the_handoff_reason(capsys, monkeypatch) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", TAXI, "--current", "hotel", "--handoff")
    assert (code, lines[3], lines[-1]) == (
        0, "agent signal: handoff to hotel: the next message goes there (reason handoff)", "decision: hotel (handoff)")


@pytest.mark.parametrize(
    ("args", "err"),
    [
        pytest.param(["--hint", "not-mine"], "explain: --hint, --handoff and --held need --current AGENT\n", id="no-current"),
        pytest.param(["--current", "hotel", "--hint", "maybe"], "explain: --hint: unknown X-Stickyroute-Hint value "
                     "'maybe'\n", id="bad-hint"),
    ],
)
def test_bad_hint_options_are_errors(capsys, monkeypatch, args, err) -> None:
    assert run(capsys, monkeypatch, "--text", TAXI, *args)[0::2] == (2, err)


def test_a_done_hint_scores_the_message_as_a_first_one(capsys, monkeypatch) -> None:
    """After "done" the route is released: no agent is current, so no sticky bonus is added and
    the top score is the raw one (the old table still gave the released agent its bonus)."""
    code, lines, _err = run(capsys, monkeypatch, "--text", TAXI, "--current", "hotel", "--hint", "done")
    scores = lines[lines.index("scores (raw keyword points; effective = raw + bonus for the current agent):") + 1:][:3]
    assert code == 0
    assert [line.split() for line in scores] == [["hotel", "0"], ["taxi", "6"], ["train", "0"]]
    assert not any("(current)" in line for line in lines)


def test_a_handoff_scores_with_the_bonus_on_the_new_holder(capsys, monkeypatch) -> None:
    code, lines, _err = run(capsys, monkeypatch, "--text", TAXI, "--current", "hotel", "--handoff")
    assert code == 0
    assert [line for line in lines if "(current)" in line] == ["  hotel      0 + bonus 4 = 4  (current)"]


def test_an_invalid_config_lists_its_problems_and_exits_2(tmp_path, capsys) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[agents.a]\nurl = "http://127.0.0.1:1"\n[channels.t]\ntype = "telegram"\npath = "/t"\n'
                   'default_agent = "zzz"\n')
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    code = explain_module.run(parser.parse_args(["--config", str(bad), "--channel", "t", "--text", "hello"]))
    out = capsys.readouterr()
    assert (code, out.out) == (2, "")
    assert out.err == f'explain: {bad}: channels.t.default_agent: no agent named "zzz"\n'
