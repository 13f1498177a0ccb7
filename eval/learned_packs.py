"""Learned keyword packs against issue #22's targets: learn on one half of each dev corpus, report
on the other (`make eval` prints it and writes results/eval/learned_packs.md).

MultiWOZ and SGD are split by conversation (`learn --holdout-fraction 0.5 --seed 0`); packs are
learned for the classifier they run with (`LearnSettings.for_classifier`): LLM packs replayed
with the oracle, keyword packs with the keyword classifier, each against the hand-written lists
(before), the packs merged into them, and the packs alone. CLINC150 (single first messages) is
split by intent examples (`--split intent`: part of every intent's examples on each side), the
LLM packs replayed with the oracle on both halves: the half they were learned on and the held-out
one. The targets:

- oracle, packs: false switches <= before, accuracy >= 96% (MultiWOZ) / 98% (SGD), calls <= 8/100
- keywords only, packs: false switches <= 1.0 at >= 92% (MultiWOZ), <= 2.0 at >= 88% (SGD)
- CLINC150, oracle: the packs' gain over the hand-written lists holds on the held-out half

    python eval/learned_packs.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
import tempfile
from collections.abc import Callable, Sequence

from stickyroute.cli.learn import seeds_of
from stickyroute.config.model import Agent
from stickyroute.learn import LearnSettings, from_corpus, learn, write_packs
from stickyroute.learn.holdout import HoldoutRow, measure, split_by_intent, split_conversations
from stickyroute.replay.agents_file import ExtraPacks
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import DEFAULT_AGENT, Conversation, load_agents, load_corpus

TARGETS = {  # (corpus, judge) -> (accuracy at least, false switches at most (None: before's), calls at most)
    ("MultiWOZ", "oracle"): (96.0, None, 8.0), ("SGD", "oracle"): (98.0, None, 8.0),
    ("MultiWOZ", "heuristic"): (92.0, 1.0, None), ("SGD", "heuristic"): (88.0, 2.0, None),
}
JUDGES = (("oracle", True, "LLM (oracle)"), ("heuristic", False, "keywords only"))


def variants(learning: Sequence[Conversation], agents_path: str, llm: bool, folder: str) -> dict[str, Sequence[Agent]]:
    """before / merged / pack only, the packs learned on `learning` for an LLM or keywords."""
    agents = load_agents(agents_path)
    packs = learn(from_corpus(learning, {a.name for a in agents}), seeds_of(agents), RECOMMENDED, DEFAULT_AGENT,
                  LearnSettings.for_classifier(llm))
    write_packs(packs, folder, "eval/learned_packs.py")
    return {"hand-written": agents, "merged": load_agents(agents_path, ExtraPacks(folder)),
            "pack only": load_agents(agents_path, ExtraPacks(folder, only=True))}


def verdict(corpus: str, judge: str, rows: Sequence[HoldoutRow], row: HoldoutRow) -> str:
    """Which targets `row` meets ("-" for the hand-written row)."""
    if row.keywords == "hand-written" or (corpus, judge) not in TARGETS:
        return "-"
    accuracy, false, calls = TARGETS[(corpus, judge)]
    before = next(r for r in rows if r.keywords == "hand-written").row.false_switches_per_100
    checks = [("acc", row.row.accuracy >= accuracy),
              ("false", row.row.false_switches_per_100 <= (before if false is None else false))]
    if calls is not None:
        checks.append(("calls", row.row.classifier_calls_per_100 <= calls))
    return ", ".join(f"{name} {'met' if ok else 'MISSED'}" for name, ok in checks)


def table(title: str, corpus: str, part: str, rows: Sequence[HoldoutRow], judge: str, label: str,
          verdicts: Callable[[HoldoutRow], str]) -> list[str]:
    return [f"| {title} | {part} | {r.keywords} | {label} | {r.row.accuracy:.2f} | "
            f"{r.row.false_switches_per_100:.2f} | {r.row.classifier_calls_per_100:.2f} | {verdicts(r)} |"
            for r in rows if r.judge == judge]


def main(corpus_dir: str = "eval/corpus") -> None:
    print("| corpus | measured on | keywords | classifier | acc% | false/100 | calls/100 | targets |")
    print("|---|---|---|---|---:|---:|---:|---|")
    for title, corpus, agents_file in (("MultiWOZ", "dev.jsonl", "agents.toml"),
                                       ("SGD", "dev_sgd.jsonl", "agents_sgd.toml")):
        learning, held = split_conversations(load_corpus(f"{corpus_dir}/{corpus}"), 0.5, 0)
        part = f"held-out half ({len(held)} conversations)"
        for judge, llm, label in JUDGES:
            with tempfile.TemporaryDirectory() as folder:
                rows = measure(held, variants(learning, f"{corpus_dir}/{agents_file}", llm, folder), RECOMMENDED,
                               (judge,))
            lines = table(title, corpus, part, rows, judge, label,
                          lambda r, t=title, j=judge, rs=rows: verdict(t, j, rs, r))
            print("\n".join(lines), flush=True)
    learning, held = split_by_intent(load_corpus(f"{corpus_dir}/dev_clinc.jsonl"), 0.5, 0)
    with tempfile.TemporaryDirectory() as folder:
        chosen = variants(learning, f"{corpus_dir}/agents_clinc.toml", True, folder)
        for part, messages in (("learning half (by intent)", learning), ("held-out half (by intent)", held)):
            rows = measure(messages, chosen, RECOMMENDED, ("oracle",))
            before = next(r for r in rows if r.keywords == "hand-written").row.accuracy

            def gain(r: HoldoutRow, before: float = before) -> str:
                return "-" if r.keywords == "hand-written" else f"gain {r.row.accuracy - before:+.2f}"

            print("\n".join(table("CLINC150", "dev_clinc.jsonl", f"{part}, {len(messages)} messages", rows, "oracle",
                                  "LLM (oracle)", gain)), flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:2])
