"""Task-scoped routes and detours measured in replay (issue #22): accuracy, classifier calls per
100 messages and false switches per 100 with and without simulated agents that say `done` at the
end of their gold segment (recall R, falsely with probability P after any other turn), and with
one agent marked non-sticky (a detour agent: MultiWOZ `taxi`, SGD `weather`), under the shipped
settings (`recommended`), on the MultiWOZ and SGD dev files, with the oracle LLM, a judge wrong
10% of the time and the keyword classifier. Prints a Markdown table and the segment lengths of
the agents marked non-sticky; `make eval-tasks` writes it to results/eval/task_routes.md.

    python eval/task_routes.py [CORPUS_DIR]
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence

from stickyroute.replay.agents_file import ExtraPacks
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import Conversation, load_agents, load_corpus
from stickyroute.replay.runner import evaluate

FILES = (("MultiWOZ dev", "dev.jsonl", "agents.toml", "taxi"),
         ("SGD dev", "dev_sgd.jsonl", "agents_sgd.toml", "weather"))
CLASSIFIERS = (("LLM (oracle)", "oracle"), ("LLM 10% wrong (noisy:0.1)", "noisy:0.1"), ("keywords", "keywords"))
DONE = (None, (0.0, 0.5), (0.0, 0.9), (0.05, 0.9))


def segment_lengths(conversations: Sequence[Conversation], agent: str) -> tuple[int, float, float]:
    """(segments of `agent`, mean turns per segment, share of one-turn segments)."""
    lengths = []
    for conv in conversations:
        run = 0
        for i, turn in enumerate(conv.turns):
            run = run + 1 if turn.gold == agent else 0
            if run and (i + 1 == len(conv.turns) or conv.turns[i + 1].gold != agent):
                lengths.append(run)
    if not lengths:
        return 0, 0.0, 0.0
    return len(lengths), statistics.fmean(lengths), sum(n == 1 for n in lengths) / len(lengths)


def main(corpus_dir: str = "eval/corpus") -> None:
    print("| corpus | classifier | non-sticky | done P, R | acc% | calls/100 | false/100 |")
    print("|---|---|---|---|---:|---:|---:|")
    notes = []
    for title, corpus, agents_file, detour in FILES:
        conversations = load_corpus(f"{corpus_dir}/{corpus}")
        sticky = load_agents(f"{corpus_dir}/{agents_file}")
        detours = load_agents(f"{corpus_dir}/{agents_file}", ExtraPacks(None, non_sticky=frozenset({detour})))
        segments, mean, single = segment_lengths(conversations, detour)
        notes.append(f"{title}: {segments} `{detour}` segments, {mean:.2f} turns each on average, "
                     f"{100 * single:.1f}% of one turn")
        for label, judge in CLASSIFIERS:
            for agents, marked in ((sticky, "-"), (detours, detour)):
                for rates in DONE if marked == "-" else (None, (0.0, 0.9)):
                    row = evaluate("recommended", conversations, agents, RECOMMENDED, judge, seed=0, agent_done=rates)
                    shown = "-" if rates is None else f"{rates[0]:g}, {rates[1]:g}"
                    print(f"| {title} | {label} | {marked} | {shown} | {row.accuracy:.2f} | "
                          f"{row.classifier_calls_per_100:.2f} | {row.false_switches_per_100:.2f} |", flush=True)
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
