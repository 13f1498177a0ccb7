"""`make learn-cv`: choose `stickyroute learn` thresholds inside the learning half only.

    .venv/bin/python bench/learn_cv.py [--corpus multiwoz|sgd|clinc ...] [--set NAME=VALUE ...]
        [--errors FILE]

For each shipped dev corpus, the learning half is what `learn --holdout-fraction 0.5 --seed 0`
learns on (the held-out half is never read). It is split again by conversation into two quarters
with seeds 1, 2 and 3 (`split_conversations`); for each split, learn on one quarter and measure
the packs alone (`rules-only`) on the other, both ways: six runs per corpus, under the shipped
settings: packs learned for the keyword classifier measured with it (`kw.`), packs learned for
an LLM (`LearnSettings.for_classifier(llm=True)`) measured with the oracle (`or.`). Prints the mean of every metric (and
the worst run), writes results/learn_cv/<corpus>.txt. `--set` overrides a `LearnSettings` field (of both kinds of packs; `None` for an optional one);
`--errors FILE` writes every misrouted message of the measured quarters (text, gold, routed,
reason) for error analysis on the learning half. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stickyroute.config.model import Agent  # noqa: E402
from stickyroute.learn import LearnSettings, from_corpus, learn, split_conversations, write_packs  # noqa: E402
from stickyroute.learn.holdout import measure  # noqa: E402
from stickyroute.replay.agents_file import ExtraPacks  # noqa: E402
from stickyroute.replay.cli import RECOMMENDED  # noqa: E402
from stickyroute.replay.corpus import DEFAULT_AGENT, OOS, Conversation, load_agents, load_corpus  # noqa: E402
from stickyroute.replay.runner import play  # noqa: E402

CORPORA = {
    "multiwoz": ("dev.jsonl", "agents.toml"),
    "sgd": ("dev_sgd.jsonl", "agents_sgd.toml"),
    "clinc": ("dev_clinc.jsonl", "agents_clinc.toml"),
}
SPLIT_SEEDS = (1, 2, 3)
OUT = ROOT / "results" / "learn_cv"


def parse_settings(pairs: list[str], llm: bool = False) -> LearnSettings:
    """LearnSettings for the keyword classifier or an LLM with `NAME=VALUE` overrides (typed like
    the field's default)."""
    base = LearnSettings.for_classifier(llm)
    changes: dict[str, object] = {}
    for pair in pairs:
        name, _, value = pair.partition("=")
        current = getattr(base, name)
        if value == "None":
            changes[name] = None
        elif isinstance(current, bool):
            changes[name] = value.lower() == "true"
        else:
            changes[name] = (type(current) if current is not None else float)(value)
    return dataclasses.replace(base, **changes)


def learning_half(corpus: str) -> tuple[list[Conversation], str]:
    """The conversations `learn --holdout-fraction 0.5 --seed 0` learns on, and the agents path."""
    data, agents = CORPORA[corpus]
    learning, _held = split_conversations(load_corpus(ROOT / "eval" / "corpus" / data), 0.5, 0)
    return learning, str(ROOT / "eval" / "corpus" / agents)


def packs_for(train: list[Conversation], agents_path: str, settings: LearnSettings) -> tuple[Agent, ...]:
    """The agents with only the packs learned on `train` under `settings`."""
    from stickyroute.cli.learn import seeds_of

    agents = load_agents(agents_path)
    packs = learn(from_corpus(train, {a.name for a in agents}), seeds_of(agents), RECOMMENDED, DEFAULT_AGENT,
                  settings)
    with tempfile.TemporaryDirectory() as tmp:
        write_packs(packs, tmp, "cv")
        return load_agents(agents_path, ExtraPacks(tmp, only=True))


def run_one(train: list[Conversation], test: list[Conversation], agents_path: str,
            settings: tuple[LearnSettings, LearnSettings], errors: list[str] | None) -> dict[str, float]:
    """Learn on `train` (for the keyword classifier, for an LLM), measure the packs alone on
    `test`: metric name -> value."""
    out: dict[str, float] = {}
    for key, judge, chosen in (("kw", "heuristic", settings[0]), ("or", "oracle", settings[1])):
        only = packs_for(train, agents_path, chosen)
        for row in measure(test, {"pack": only}, RECOMMENDED, (judge,)):
            out[f"{key}.acc"] = row.row.accuracy
            out[f"{key}.false"] = row.row.false_switches_per_100
            out[f"{key}.calls"] = row.row.classifier_calls_per_100
            if row.oos_recall is not None:
                out[f"{key}.oos"] = 100 * row.oos_recall
    if errors is not None:
        played, _tally = asyncio.run(play(test, only, RECOMMENDED, "oracle"))  # the LLM packs
        for conv, p in zip(test, played, strict=True):
            for i, (turn, routed, reason) in enumerate(zip(conv.turns, p.agents, p.reasons, strict=True)):
                ok = routed == turn.gold or (turn.gold == OOS and routed == DEFAULT_AGENT)
                if not ok:
                    errors.append(f"{conv.id}#{i}\t{turn.gold}\t{routed}\t{reason}\t{turn.text}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", choices=tuple(CORPORA))
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--errors", metavar="FILE", help="write the oracle run's misrouted messages here")
    args = parser.parse_args(argv)
    settings = (parse_settings(args.set), parse_settings(args.set, llm=True))
    OUT.mkdir(parents=True, exist_ok=True)
    errors: list[str] | None = [] if args.errors else None
    for corpus in args.corpus or tuple(CORPORA):
        learning, agents_path = learning_half(corpus)
        runs = []
        for seed in SPLIT_SEEDS:
            a, b = split_conversations(learning, 0.5, seed)
            runs.append(run_one(a, b, agents_path, settings, errors))
            runs.append(run_one(b, a, agents_path, settings, errors))
        keys = list(runs[0])
        worst = {k: (max if k.endswith((".false", ".calls")) else min)(r[k] for r in runs) for k in keys}
        line = "  ".join(f"{k} {statistics.fmean(r[k] for r in runs):6.2f} ({worst[k]:6.2f})" for k in keys)
        text = f"{corpus:9s} {line}"
        print(text, flush=True)
        (OUT / f"{corpus}.txt").write_text(text + "\n" + "\n".join(map(repr, settings)) + "\n", encoding="utf-8")
    if errors is not None:
        Path(args.errors).write_text("\n".join(errors) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
