"""`stickyroute learn` on a corpus: packs written, the held-out table printed, errors named."""

from __future__ import annotations

from pathlib import Path

from stickyroute.cli.main import main

DATA = Path(__file__).parent / "replay" / "data"
CORPUS, AGENTS = DATA / "dev_first50.jsonl", DATA / "agents.toml"


def test_learn_with_a_holdout_prints_before_and_after(tmp_path, capsys) -> None:
    out = tmp_path / "learned"
    code = main(["learn", str(CORPUS), "--agents", str(AGENTS), "--out", str(out), "--holdout-fraction", "0.4",
                 "--seed", "3"])
    printed = capsys.readouterr().out.splitlines()
    assert code == 0
    assert printed[0].startswith(f"learned from {CORPUS}: 30 conversations, ")
    assert sorted(p.name for p in out.iterdir()) == ["attraction.toml", "hospital.toml", "hotel.toml", "police.toml",
                                                     "restaurant.toml", "taxi.toml", "train.toml"]
    header = next(i for i, line in enumerate(printed) if line.startswith("keywords "))
    assert [line.split()[:2] for line in printed[header + 1:header + 7]] == [
        ["before", "heuristic"], ["merged", "heuristic"], ["pack", "only"],
        ["before", "oracle"], ["merged", "oracle"], ["pack", "only"]]
    assert printed[-1] == f"next: stickyroute replay {CORPUS} --agents {AGENTS} --rules {out} [--rules-only]"
    assert any(line.startswith("held out: 20 conversations, ") for line in printed)
    # the packs plug into the replay as they do into the proxy
    assert main(["replay", str(CORPUS), "--agents", str(AGENTS), "--rules", str(out), "--strategy", "recommended"]) == 0
    assert main(["replay", str(CORPUS), "--agents", str(AGENTS), "--rules", str(out), "--rules-only",
                 "--strategy", "recommended", "--classifier", "heuristic"]) == 0


def test_learn_errors_name_the_file_and_key(tmp_path, capsys) -> None:
    assert main(["learn", str(CORPUS), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == "learn: a corpus needs --agents AGENTS.toml\n"
    bad = tmp_path / "agents.toml"
    bad.write_text('[[agents]]\nname = "hotel"\nkeyword = ["x"]\n')
    assert main(["learn", str(CORPUS), "--agents", str(bad), "--out", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f'learn: {bad}: agents[0].keyword: unknown key (did you mean "keywords"?)\n'
    assert main(["learn", str(tmp_path / "missing.jsonl"), "--agents", str(AGENTS), "--out", str(tmp_path)]) == 2
    assert "No such file or directory" in capsys.readouterr().err
    assert main(["learn", str(CORPUS), "--agents", str(AGENTS), "--out", str(tmp_path), "--holdout-fraction", "1"]) == 2
    assert capsys.readouterr().err == "learn: --holdout-fraction must be between 0 and 1 (exclusive), got 1.0\n"
