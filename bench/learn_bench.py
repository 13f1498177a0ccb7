"""`make bench-learn`: how long `stickyroute learn` takes on 10,000 conversations.

    .venv/bin/python bench/learn_bench.py [--conversations 10000] [--repeat 1]

Input: the shipped SGD dev corpus (eval/corpus/dev_sgd.jsonl, 1,000 conversations, 12 agents)
repeated under new conversation ids until there are `--conversations` of them (real text,
real lengths; repeats make the counts larger, not the vocabulary). Measures the whole command
as a user runs it (read the corpus and agents file, learn, write the packs) with the wall clock,
in this process; prints a table and writes results/bench/learn.md (ignored by git; the README
is updated by hand). Target (issue #13): under 30 s on this machine. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
CORPUS = ROOT / "eval" / "corpus" / "dev_sgd.jsonl"
AGENTS = ROOT / "eval" / "corpus" / "agents_sgd.toml"
OUT = ROOT / "results" / "bench" / "learn.md"
"""Written on every run; `results/` is ignored by git."""
TARGET_S = 30.0


def build_corpus(path: Path, conversations: int) -> tuple[int, int]:
    """Write `conversations` conversations to `path`; (conversations, messages) written."""
    source = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    messages = 0
    with open(path, "w", encoding="utf-8") as handle:
        for n in range(conversations):
            doc = dict(source[n % len(source)])
            doc["id"] = f"{doc['id']}#{n // len(source)}"
            messages += len(doc["turns"])
            handle.write(json.dumps(doc) + "\n")
    return conversations, messages


def measure(conversations: int, repeat: int) -> tuple[int, int, list[float]]:
    from stickyroute.cli.main import main

    timings = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "corpus.jsonl"
        count, messages = build_corpus(corpus, conversations)
        for _ in range(repeat):
            started = time.perf_counter()
            with open(os.devnull, "w") as sink:
                stdout, sys.stdout = sys.stdout, sink
                try:
                    code = main(["learn", str(corpus), "--agents", str(AGENTS), "--out", str(Path(tmp) / "learned")])
                finally:
                    sys.stdout = stdout
            timings.append(time.perf_counter() - started)
            if code != 0:
                raise SystemExit(f"learn exited {code}")
    return count, messages, timings


def render(count: int, messages: int, timings: list[float]) -> str:
    best = min(timings)
    verdict = "met" if best < TARGET_S else "MISSED"
    return "\n".join([
        "# `stickyroute learn` benchmark (`make bench-learn`)",
        "",
        f"Input: eval/corpus/dev_sgd.jsonl repeated to {count:,} conversations ({messages:,} messages), 12 agents;",
        "the whole command (read, learn, write the packs), wall clock, one process, "
        f"{os.cpu_count()} cores (shared machine).",
        "",
        "| conversations | messages | runs | best s | median s | target |",
        "|---:|---:|---:|---:|---:|---|",
        f"| {count:,} | {messages:,} | {len(timings)} | {best:.1f} | {sorted(timings)[len(timings) // 2]:.1f} | "
        f"< {TARGET_S:.0f} s: {verdict} |",
        "",
    ])


def main(argv: list[str] | None = None) -> str:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    report = render(*measure(args.conversations, args.repeat))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report, encoding="utf-8")
    print(report)
    return report


if __name__ == "__main__":
    main()
