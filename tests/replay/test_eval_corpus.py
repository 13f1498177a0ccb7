"""The evaluation corpus ships with the project (eval/corpus/): files load, labels match agents."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.replay.corpus import OOS, load_agents, load_corpus

CORPUS = Path(__file__).resolve().parents[2] / "eval" / "corpus"
FILES = [("dev.jsonl", "agents.toml", 999, 7), ("dev_sgd.jsonl", "agents_sgd.toml", 1000, 12),
         ("dev_clinc.jsonl", "agents_clinc.toml", 1000, 10)]


@pytest.mark.parametrize("corpus, agents, conversations, agent_count", FILES)
def test_each_corpus_loads_with_its_agents_file(corpus, agents, conversations, agent_count) -> None:
    loaded = load_agents(CORPUS / agents)  # the strict agents-file reader (SGD lists `services`)
    names = {a.name for a in loaded}
    convs = load_corpus(CORPUS / corpus)
    assert (len(convs), len(loaded)) == (conversations, agent_count)
    assert {t.gold for c in convs for t in c.turns} <= names | {OOS}


def test_the_readme_keeps_provenance_and_licences() -> None:
    text = (CORPUS / "README.md").read_text(encoding="utf-8")
    for needle in ("## Provenance, licences and attribution", "CC BY 4.0", "MIT License", "CC BY-SA 4.0",
                   "CC BY 3.0", "Budzianowski", "Rastogi", "Larson"):
        assert needle in text, needle
