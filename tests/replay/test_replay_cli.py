"""`stickyroute replay` on a corpus: JSON rows, table, smoke run on 50 real conversations."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from stickyroute.replay.cli import add_arguments, run

DATA = Path(__file__).parent / "data"

KEYS = ["strategy", "settings", "messages", "accuracy", "accuracy_lenient", "switch_recall", "switch_delay",
        "false_switches_per_100", "boomerangs_per_100", "classifier_calls_per_100", "tokens"]


def invoke(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return run(parser.parse_args(argv))


def test_json_rows_on_the_hand_corpus(capsys) -> None:
    code = invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"),
                   "--strategy", "sticky_heuristic", "--format", "json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [list(r) for r in rows] == [KEYS] * 3
    assert [(r["strategy"], r["accuracy"], r["classifier_calls_per_100"]) for r in rows] == [
        ("baseline_stay_first", 44.44, 0.0), ("baseline_classify_every", 100.0, 88.89),
        ("sticky_heuristic", 44.44, 44.44)]


def test_unknown_strategy_is_an_error(capsys) -> None:
    assert invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--strategy", "magic"]) == 2
    assert "unknown strategy 'magic'" in capsys.readouterr().err


def test_smoke_first_50_conversations(capsys) -> None:
    code = invoke([str(DATA / "dev_first50.jsonl"), "--agents", str(DATA / "agents.toml"), "--format", "json"])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["strategy"] for r in rows] == ["baseline_stay_first", "baseline_classify_every", "off",
                                             "explicit_only", "sticky_ttl", "sticky_heuristic", "recommended"]
    messages = sum(len(json.loads(line)["turns"]) for line in (DATA / "dev_first50.jsonl").read_text().splitlines())
    assert {r["messages"] for r in rows} == {messages}
    by = {r["strategy"]: r for r in rows}
    assert by["off"]["accuracy"] == 0.0
    assert by["baseline_classify_every"]["accuracy"] == 100.0
    assert by["recommended"]["accuracy"] > by["sticky_heuristic"]["accuracy"] > by["explicit_only"]["accuracy"]
    assert by["explicit_only"]["classifier_calls_per_100"] == round(100 * 50 / messages, 2)


def test_table_format(capsys) -> None:
    invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--strategy", "off"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["strategy", "msgs", "acc%", "lenient%", "sw.recall%", "sw.delay", "false/100",
                                "boom/100", "calls/100", "tokens"]
    assert lines[4].split() == ["off", "9", "11.11", "11.11", "0.00", "0.00", "0.00", "0.00", "0.00", "0"]


def test_config_row_uses_the_configs_routing(capsys, monkeypatch) -> None:
    from stickyroute.config.model import RoutingSettings, Strategy
    from stickyroute.replay import cli as replay_cli
    from stickyroute.replay.corpus import load_agents, replay_config

    cfg = replay_config(load_agents(DATA / "hand_agents.toml"),
                        RoutingSettings(strategy=Strategy.STICKY_HEURISTIC, divergence_count=1))
    monkeypatch.setattr(replay_cli, "_load_config", lambda _path: cfg)
    assert invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--config", "c.toml",
                   "--strategy", "config", "--format", "json"]) == 0
    last = json.loads(capsys.readouterr().out)[-1]
    # divergence 1 on the hand corpus (see test_replay_runner): 77.78% at 55.56 calls per 100.
    assert (last["strategy"], last["accuracy"], last["classifier_calls_per_100"]) == ("config", 77.78, 55.56)


def test_sweep_prints_the_front_and_writes_the_plot(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr("stickyroute.replay.sweep.GRID", {"divergence_count": (1, 2), "sticky_bonus": (4, 20)})
    plot = tmp_path / "s.png"
    assert invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--sweep",
                   "--plot", str(plot)]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert lines[0] == f"{DATA / 'hand.jsonl'}: 3 conversations, classifier oracle"
    assert lines[1] == "Pareto front (accuracy vs classifier calls per 100), 4 settings:"
    # two settings reach the same point: listed once, "(+1 alike)"
    assert [line.split()[:2] for line in lines[3:]] == [["33.33", "33.33"], ["44.44", "44.44"], ["77.78", "55.56"]]
    assert lines[3].endswith("(+1 alike)")
    assert captured.err.endswith(f"sweep 4/4\nplot written to {plot}\n")
    assert plot.read_bytes()[:4] == b"\x89PNG"


def test_groq_without_a_key_is_an_error(capsys, monkeypatch) -> None:
    monkeypatch.delenv("GROQ_API_KEY", raising=False)
    assert invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--strategy",
                   "sticky_heuristic", "--classifier", "groq"]) == 2
    assert "GROQ_API_KEY" in capsys.readouterr().err


def test_missing_files_are_a_clear_error_not_a_traceback(capsys, tmp_path) -> None:
    assert invoke([str(tmp_path / "nope.jsonl"), "--agents", str(DATA / "hand_agents.toml")]) == 2
    assert capsys.readouterr().err.startswith("replay: [Errno 2] No such file or directory")
    assert invoke([str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"),
                   "--config", str(tmp_path / "new.toml"), "--strategy", "config"]) == 2
    assert capsys.readouterr().err == f"replay: {tmp_path / 'new.toml'}: (file): cannot read file: No such file or directory\n"


def test_sweep_takes_a_learned_pack_so_settings_and_keywords_are_chosen_together(tmp_path, capsys, monkeypatch) -> None:
    from stickyroute.replay import sweep

    monkeypatch.setattr(sweep, "GRID", {"sticky_bonus": (4, 20)})
    packs = tmp_path / "learned"
    packs.mkdir()
    (packs / "taxi.toml").write_text('keywords = ["arrive by", "get there"]\n')  # "It should arrive by 5 pm"
    argv = [str(DATA / "hand.jsonl"), "--agents", str(DATA / "hand_agents.toml"), "--sweep", "--format", "json"]
    results = []
    for extra in ([], ["--rules", str(packs)]):
        assert invoke(argv + extra) == 0
        results.append([(r["settings"]["sticky_bonus"], r["accuracy"]) for r in json.loads(capsys.readouterr().out)["all"]])
    assert results[0] == [(4, 44.44), (20, 33.33)]
    # with the pack, hand:1's "It should arrive by 5 pm" is a second divergent message toward taxi
    # (divergence 2): confirmed and right under bonus 4; bonus 20 still never diverges
    assert results[1] == [(4, 55.56), (20, 33.33)]
