"""Where learned packs' false switches come from, measured inside the learning half only.

    .venv/bin/python bench/pack_false_switches.py [--corpus multiwoz|sgd] [--seed 1] [--keywords]
        [--set NAME=VALUE ...] [--both-ways]

The learning half is what `learn --holdout-fraction 0.5 --seed 0` learns on (the held-out half is
never read). It is split again by conversation into two quarters (`--seed`, as `make learn-cv`);
packs are learned on one quarter (for an LLM, or `--keywords` for the keyword classifier) and the
other quarter is replayed with the packs alone and with the hand-written lists (oracle judge, or
the keyword classifier with `--keywords`). For every false switch it prints the pair (route ->
wrong agent), the gold agent, the reason, the matched keywords of both agents and the text, then
the counts by pair and by keyword (a keyword counted once per false switch it took part in), and
which false switches are new with the packs. Measured, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.learn_cv import learning_half, parse_settings  # noqa: E402
from stickyroute.cli.learn import seeds_of  # noqa: E402
from stickyroute.config.model import Agent  # noqa: E402
from stickyroute.learn import from_corpus, learn, split_conversations, write_packs  # noqa: E402
from stickyroute.replay.agents_file import ExtraPacks  # noqa: E402
from stickyroute.replay.cli import RECOMMENDED  # noqa: E402
from stickyroute.replay.corpus import DEFAULT_AGENT, Conversation, load_agents  # noqa: E402
from stickyroute.replay.metrics import is_correct  # noqa: E402
from stickyroute.replay.runner import play  # noqa: E402
from stickyroute.routing.keywords import fold, keyword_form, words  # noqa: E402


def matched(agent: Agent, text: str) -> list[str]:
    """The agent's keywords found in `text` (strong as written, weak with `~`, confirm with `?`)."""
    tokens = words(fold(text))
    folded = fold(text)
    out = []
    for mark, keywords in (("", agent.keywords), ("~", agent.weak_keywords), ("?", agent.confirm_keywords)):
        for keyword in keywords:
            form = keyword_form(keyword)
            if isinstance(form, str):
                hit = bool(form) and form in folded
            else:
                n = len(form)
                hit = any(tuple(tokens[i:i + n]) == form for i in range(len(tokens) - n + 1))
            if hit:
                out.append(mark + keyword)
    return out


def false_switches(test: list[Conversation], agents: tuple[Agent, ...], judge: str) -> dict[str, tuple]:
    """conversation#turn -> (route, routed, gold, reason, text) of every false switch."""
    played, _tally = asyncio.run(play(test, agents, RECOMMENDED, judge))
    out = {}
    for conv, p in zip(test, played, strict=True):
        for k in range(1, len(p.agents)):
            if p.agents[k] != p.agents[k - 1] and not is_correct(conv.turns[k], p.agents[k]):
                out[f"{conv.id}#{k}"] = (p.agents[k - 1], p.agents[k], conv.turns[k].gold, p.reasons[k],
                                         conv.turns[k].text)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="multiwoz", choices=("multiwoz", "sgd"))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keywords", action="store_true", help="packs for (and replayed with) the keyword classifier")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    parser.add_argument("--both-ways", action="store_true", help="also learn on the second quarter")
    args = parser.parse_args(argv)
    learning, agents_path = learning_half(args.corpus)
    a, b = split_conversations(learning, 0.5, args.seed)
    settings = parse_settings(args.set, llm=not args.keywords)
    judge = "heuristic" if args.keywords else "oracle"
    hand = load_agents(agents_path)
    pairs: Counter[str] = Counter()
    blamed: Counter[str] = Counter()
    total_new = total_pack = total_hand = 0
    for train, test in ((a, b), (b, a)) if args.both_ways else ((a, b),):
        packs = learn(from_corpus(train, {x.name for x in hand}), seeds_of(hand), RECOMMENDED, DEFAULT_AGENT,
                      settings)
        with tempfile.TemporaryDirectory() as tmp:
            write_packs(packs, tmp, "diagnosis")
            only = load_agents(agents_path, ExtraPacks(tmp, only=True))
        by_name = {x.name: x for x in only}
        with_packs = false_switches(test, only, judge)
        without = false_switches(test, hand, judge)
        messages = sum(len(c.turns) for c in test)
        total_pack += len(with_packs)
        total_hand += len(without)
        print(f"# {messages} messages: {len(with_packs)} false switches with packs "
              f"({100 * len(with_packs) / messages:.2f}/100), {len(without)} hand-written "
              f"({100 * len(without) / messages:.2f}/100)")
        for key, (route, routed, gold, reason, text) in with_packs.items():
            new = key not in without
            total_new += new
            pairs[f"{route}->{routed}"] += 1
            theirs = matched(by_name[routed], text) if routed in by_name else []
            mine = matched(by_name[route], text) if route in by_name else []
            for keyword in theirs:
                blamed[f"{routed}:{keyword}"] += 1
            print(f"{'NEW ' if new else '    '}{key}\t{route}->{routed} gold {gold}\t{reason}\t"
                  f"{routed}{theirs} {route}{mine}\t{text}")
        for key, (route, routed, gold, reason, text) in without.items():
            if key not in with_packs:
                print(f"GONE {key}\t{route}->{routed} gold {gold}\t{reason}\t{text}")
    print(f"\n# totals: packs {total_pack}, hand-written {total_hand}, new with packs {total_new}")
    print("# by pair:", ", ".join(f"{k} {v}" for k, v in pairs.most_common()))
    print("# by keyword:", ", ".join(f"{k} {v}" for k, v in blamed.most_common(40)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
