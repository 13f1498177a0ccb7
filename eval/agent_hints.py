"""Agent hints measured in replay (issue #12): accuracy, classifier calls per 100 messages and false
switches per 100 for hints off / divergence / confirm, simulated agents at (P, R) = (0, 0.5),
(0, 0.9), (0.05, 0.9), the shipped settings (`recommended`), the oracle LLM and the keyword
classifier (and, as a check on the oracle's optimism, a judge wrong 10% of the time), on the
MultiWOZ and SGD dev files. Prints a Markdown table; `make eval-hints` writes
it to results/eval/agent_hints.md (results/ is ignored).

    python eval/agent_hints.py [CORPUS_DIR]
"""

from __future__ import annotations

import sys
from dataclasses import replace

from stickyroute.config.model import AgentHints
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import load_agents, load_corpus
from stickyroute.replay.runner import evaluate

FILES = (("MultiWOZ dev", "dev.jsonl", "agents.toml"), ("SGD dev", "dev_sgd.jsonl", "agents_sgd.toml"))
RATES = ((0.0, 0.5), (0.0, 0.9), (0.05, 0.9))
CLASSIFIERS = (("LLM (oracle)", "oracle"), ("LLM 10% wrong (noisy:0.1)", "noisy:0.1"), ("keywords", "keywords"))
MODES = (AgentHints.DIVERGENCE, AgentHints.CONFIRM)


def main(corpus_dir: str = "eval/corpus") -> None:
    print("| corpus | classifier | hints | P, R | acc% | calls/100 | false/100 |")
    print("|---|---|---|---|---:|---:|---:|")
    for title, corpus, agents_file in FILES:
        conversations = load_corpus(f"{corpus_dir}/{corpus}")
        agents = load_agents(f"{corpus_dir}/{agents_file}")
        for label, judge in CLASSIFIERS:
            runs = [("off", "-", replace(RECOMMENDED, agent_hints=AgentHints.OFF), None)]
            runs += [(m.value, f"{p:g}, {r:g}", replace(RECOMMENDED, agent_hints=m), (p, r))
                     for m in MODES for p, r in RATES]
            for mode, rates_text, settings, rates in runs:
                row = evaluate(mode, conversations, agents, settings, judge, seed=0, agent_hints=rates)
                print(f"| {title} | {label} | {mode} | {rates_text} | {row.accuracy:.2f} | "
                      f"{row.classifier_calls_per_100:.2f} | {row.false_switches_per_100:.2f} |")


if __name__ == "__main__":
    main(*sys.argv[1:2])
