"""`make eval-packs` (eval/learned_packs.py): the report's format on a small slice of the dev
corpora (the first conversations of each file): a Markdown table, 18 rows in a fixed order, each
with its figures and the verdict against the targets (or the CLINC150 gain)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "eval" / "corpus"
ROW = re.compile(
    r"\| (?P<corpus>MultiWOZ|SGD|CLINC150) \| (?P<part>[^|]+) \| (?P<keywords>hand-written|merged|pack only) \| "
    r"(?P<judge>LLM \(oracle\)|keywords only) \| \d+\.\d\d \| \d+\.\d\d \| \d+\.\d\d \| (?P<verdict>[^|]+) \|")
VERDICT = re.compile(r"-|acc (met|MISSED), false (met|MISSED)(, calls (met|MISSED))?|gain [+-]\d+\.\d\d")


def test_the_packs_report_keeps_its_format(tmp_path, capsys) -> None:
    for name in ("dev.jsonl", "dev_sgd.jsonl", "dev_clinc.jsonl"):
        lines = (CORPUS / name).read_text(encoding="utf-8").splitlines()
        (tmp_path / name).write_text("\n".join(lines[:40]) + "\n", encoding="utf-8")
    for name in ("agents.toml", "agents_sgd.toml", "agents_clinc.toml"):
        shutil.copy(CORPUS / name, tmp_path / name)
    spec = importlib.util.spec_from_file_location("learned_packs", ROOT / "eval" / "learned_packs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(str(tmp_path))
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["| corpus | measured on | keywords | classifier | acc% | false/100 | calls/100 | targets |",
                       "|---|---|---|---|---:|---:|---:|---|"]
    rows = [ROW.fullmatch(line) for line in out[2:]]
    assert None not in rows and len(rows) == 18
    order = [(r["corpus"], r["keywords"], r["judge"]) for r in rows if r is not None]
    variants = ("hand-written", "merged", "pack only")
    assert order == [(c, v, j) for c in ("MultiWOZ", "SGD") for j in ("LLM (oracle)", "keywords only") for v in variants] \
        + [("CLINC150", v, "LLM (oracle)") for _part in (1, 2) for v in variants]
    verdicts = [r["verdict"] for r in rows if r is not None]
    assert all(VERDICT.fullmatch(v) for v in verdicts)
    assert [v.count("calls") for v in verdicts[:12]] == [0, 1, 1, 0, 0, 0] * 2  # calls: a target with the oracle only
    parts = [r["part"] for r in rows if r is not None]
    assert parts[0] == "held-out half (20 conversations)" and parts[12].startswith("learning half (by intent), ")
    assert parts[15].startswith("held-out half (by intent), ")
