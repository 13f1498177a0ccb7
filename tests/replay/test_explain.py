"""`stickyroute explain` output (stickyroute/replay/explain.py), exact lines."""

from __future__ import annotations

import argparse
from pathlib import Path

from stickyroute.config.model import RoutingSettings, Strategy
from stickyroute.replay import explain as explain_module
from stickyroute.replay.corpus import load_agents, replay_config
from stickyroute.replay.explain import explain

DATA = Path(__file__).parent / "data"


def config():
    return replay_config(load_agents(DATA / "hand_agents.toml"), RoutingSettings(strategy=Strategy.STICKY_HEURISTIC))


def test_first_divergence_is_pending() -> None:
    assert explain(config(), "telegram", "Also book me a taxi to get there", current="hotel").splitlines() == [
        "channel telegram: strategy sticky_heuristic, threshold 6, sticky bonus 4, divergence count 2",
        "message: 'Also book me a taxi to get there'",
        "route: hotel, no pending divergence",
        "scores (raw keyword points; effective = raw + bonus for the current agent):",
        "  hotel      0 + bonus 4 = 4  (current)",
        "  taxi       6",
        "  train      0",
        "  default    0",
        "top effective score: taxi 6; raw 6 >= threshold 6",
        "counter: 0 -> 1 (taxi)",
        "decision: hotel (divergence_pending)",
    ]


def test_second_divergence_asks_the_classifier() -> None:
    lines = explain(config(), "telegram", "a cab, the taxi", current="hotel", candidate="taxi", counter=1).splitlines()
    assert lines[2:] == [
        "route: hotel, candidate taxi counter 1",
        "scores (raw keyword points; effective = raw + bonus for the current agent):",
        "  hotel      0 + bonus 4 = 4  (current)",
        "  taxi      12",
        "  train      0",
        "  default    0",
        "top effective score: taxi 12; raw 12 >= threshold 6",
        "counter: 1 (taxi) -> 2 (taxi)",
        "decision: ask the classifier (confirm), candidate taxi",
        "  an agent other than hotel: switch to it (llm_confirmed)",
        "  hotel, none or an error: stay on hotel (llm_rejected)",
    ]


def test_current_agent_keywords_reset_the_counter() -> None:
    lines = explain(config(), "telegram", "the hotel room and a taxi", current="hotel", candidate="taxi",
                    counter=1).splitlines()
    assert lines[-4:] == ["  default    0", "top effective score: hotel 16; raw 12 >= threshold 6",
                          "counter: 1 (taxi) -> 0", "decision: hotel (agreement)"]


def test_first_message(capsys, monkeypatch) -> None:
    monkeypatch.setattr("stickyroute.config.loader.load_config", lambda _path, **_kw: config())
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    assert explain_module.run(parser.parse_args(["--config", "c.toml", "--channel", "telegram",
                                                 "--text", "is there a train station nearby"])) == 0
    assert capsys.readouterr().out.splitlines()[-6:] == [
        "  default    0",
        "top effective score: train 12; raw 12 >= threshold 6",
        "counter: 0 -> 0",
        "decision: ask the classifier (first)",
        "  an agent: route to it and cache it (classified)",
        "  none: the default, cached (classified_default)",
    ]


def test_unknown_agent_is_an_error(capsys, monkeypatch) -> None:
    monkeypatch.setattr("stickyroute.config.loader.load_config", lambda _path, **_kw: config())
    parser = argparse.ArgumentParser()
    explain_module.add_arguments(parser)
    assert explain_module.run(parser.parse_args(["--config", "c.toml", "--channel", "telegram", "--text", "x",
                                                 "--current", "nobody"])) == 2
    assert capsys.readouterr().err == "explain: no agent 'nobody' in c.toml\n"
