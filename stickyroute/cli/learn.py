"""`stickyroute learn`: mine keyword rule packs from a labelled corpus or recorded traffic.

    stickyroute learn CORPUS.jsonl --agents AGENTS.toml --out DIR [--holdout-fraction F] [--seed N]
        [--split conversation|intent] [--classifier auto|llm|keywords]
    stickyroute learn RECORDED.jsonl [--config CONFIG] --out DIR [--classifier auto|llm|keywords]

The file's first line decides the mode, as in `replay`: a `serve --record` file (labels from the
router's decisions, `stickyroute.learn.recorded`; its config from the header unless --config) or a
corpus (labels from `gold`, `stickyroute.learn.labels`). Writes `DIR/<agent>.toml` for every agent
(`stickyroute.learn.pack`), learned under the shipped routing settings (`replay.cli.RECOMMENDED`; a
recording: its config's first Telegram channel, else its first channel). With
--holdout-fraction, learns on the rest and prints the before/after table of the held-out
conversations (`stickyroute.learn.holdout`; `--split intent` holds out part of each CLINC150
intent's examples). `--classifier` says what the packs will run with (issue #22): `llm` (the gate
check asks an LLM that is right, at a price per call) or `keywords` (asking the classifier is
deciding by the same keywords); `auto`: `llm` for a corpus, and for a recording `llm` when its
config's classifier is Groq (or `auto` with the API key set), else `keywords`. Exit 0, or 2 with a
message naming the file on bad input.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from stickyroute.config.model import Agent, Config, RoutingSettings
from stickyroute.errors import ConfigError
from stickyroute.learn.holdout import format_rows, measure, split_by_intent, split_conversations
from stickyroute.learn.labels import LabelledConversation, evidence_counts, from_corpus
from stickyroute.learn.learner import LearnedPack, learn
from stickyroute.learn.pack import write_packs
from stickyroute.learn.proposals import Seeds
from stickyroute.learn.recorded import NoDecisions, labels_from_recording
from stickyroute.learn.settings import LearnSettings
from stickyroute.routing.explicit import AgentNames

EXIT_OK = 0
EXIT_INVALID = 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The `learn` subcommand's arguments."""
    parser.add_argument("file", help="labelled corpus JSONL (eval/corpus) or a `serve --record` file")
    parser.add_argument("--agents", help="corpus: its agents TOML ([[agents]] name, keywords, rules...)")
    parser.add_argument("--config", help="recording: the config whose agents to learn for (default: the header's)")
    parser.add_argument("--out", required=True, metavar="DIR", help="folder for the packs (DIR/<agent>.toml)")
    parser.add_argument("--holdout-fraction", type=float, metavar="F",
                        help="corpus: learn on 1-F of the conversations, report before/after on the other F")
    parser.add_argument("--seed", type=int, default=0, help="which conversations are held out (default 0)")
    parser.add_argument("--split", choices=("conversation", "intent"), default="conversation",
                        help="hold out whole conversations, or part of each intent's examples (CLINC150)")
    parser.add_argument("--classifier", choices=("auto", "llm", "keywords"), default="auto",
                        help="the classifier the packs will run with (default auto: llm for a corpus, "
                             "a recording's config for a recording)")


def run(args: argparse.Namespace) -> int:
    """Learn and write the packs; 2 with a message on unreadable or invalid input."""
    try:
        return _run(args)
    except ConfigError as exc:
        for problem in exc.problems:
            print(f"learn: {problem}", file=sys.stderr)
    except (OSError, ValueError) as exc:  # NoDecisions is a ValueError
        print(f"learn: {args.file}: {exc}" if isinstance(exc, NoDecisions) else f"learn: {exc}", file=sys.stderr)
    return EXIT_INVALID


def _run(args: argparse.Namespace) -> int:
    from stickyroute.replay.recorded import is_recording

    with open(args.file, encoding="utf-8") as handle:
        first = handle.readline()
    if is_recording(first):
        return _from_recording(args)
    if not args.agents:
        print("learn: a corpus needs --agents AGENTS.toml", file=sys.stderr)
        return EXIT_INVALID
    return _from_corpus(args)


def _from_corpus(args: argparse.Namespace) -> int:
    from stickyroute.replay.agents_file import ExtraPacks
    from stickyroute.replay.cli import RECOMMENDED
    from stickyroute.replay.corpus import DEFAULT_AGENT, Conversation, load_agents, load_corpus

    agents = load_agents(args.agents)
    conversations = load_corpus(args.file)
    held: list[Conversation] = []
    if args.holdout_fraction is not None:
        split = split_by_intent if args.split == "intent" else split_conversations
        conversations, held = split(conversations, args.holdout_fraction, args.seed)
    labelled = from_corpus(conversations, {a.name for a in agents})
    llm = args.classifier != "keywords"
    packs = learn(labelled, seeds_of(agents), RECOMMENDED, DEFAULT_AGENT, LearnSettings.for_classifier(llm))
    source = args.file + (f" (all but the {args.holdout_fraction:g} held out with seed {args.seed})" if held else "")
    _report(packs, labelled, write_packs(packs, args.out, source), args)
    if held:
        variants = {"before": agents, "merged": load_agents(args.agents, ExtraPacks(args.out)),
                    "pack only": load_agents(args.agents, ExtraPacks(args.out, only=True))}
        rows = measure(held, variants, RECOMMENDED)
        messages = sum(len(c.turns) for c in held)
        print(f"\nheld out: {len(held)} conversations, {messages} messages (seed {args.seed}, split by {args.split}); "
              f"settings: recommended (the shipped ones); packs learned for "
              f"{'an LLM' if llm else 'the keyword classifier'}")
        print(format_rows(rows))
    print(f"\nnext: stickyroute replay {args.file} --agents {args.agents} --rules {args.out} [--rules-only]")
    return EXIT_OK


def _from_recording(args: argparse.Namespace) -> int:
    from stickyroute.config.loader import load_config
    from stickyroute.replay.recorded import load_recording

    recording = load_recording(args.file)
    path = args.config or recording.config
    if not path:
        print("learn: the recording names no config: pass --config CONFIG", file=sys.stderr)
        return EXIT_INVALID
    if args.holdout_fraction is not None:
        print("learn: --holdout-fraction needs a labelled corpus; on recorded traffic, compare decisions with "
              "`stickyroute replay RECORDING --config NEW` (what-if)", file=sys.stderr)
        return EXIT_INVALID
    config = load_config(path, warn=False)  # warnings are `check`'s and `serve`'s business
    labelled = labels_from_recording(recording.records, config, recording.version)
    channel = _first_telegram(config)
    names = AgentNames((a.name, a.aliases) for a in config.agents.values())
    llm = args.classifier == "llm" or (args.classifier == "auto" and _runs_an_llm(config))
    packs = learn(labelled, seeds_of(config.agents.values()), channel[1], channel[0],
                  LearnSettings.for_classifier(llm), names)
    _report(packs, labelled, write_packs(packs, args.out, f"{args.file} (config {path})"), args)
    print(f"\nnext: {next_step(args.out, path, args.file)}")
    return EXIT_OK


def next_step(out: str, config_path: str, recording: str) -> str:
    """The hint after learning from a recording: the packs' path as a `rules` value, relative to the
    config's folder (where `rules` paths are resolved), so it loads from a copy next to the config."""
    folder = Path(config_path).absolute().parent
    packs = Path(os.path.relpath(Path(out).absolute(), folder)).as_posix()
    return (f'add rules = "{packs}/<agent>.toml" to each [agents.<agent>] of a copy of {config_path} in the same '
            f"folder (rules paths are relative to the config file), then stickyroute replay {recording} --config COPY "
            "(what-if), and reload")


def _runs_an_llm(config: Config) -> bool:
    """The config's classifier is Groq (`groq`, or `auto` with the API key in the environment)."""
    provider = config.classifier.provider
    key = os.environ.get(config.classifier.api_key_env, "").strip()
    return provider == "groq" or (provider == "auto" and bool(key))


def seeds_of(agents: Iterable[Agent]) -> dict[str, Seeds]:
    """Each agent's current keyword lists (own lists merged with its rule pack) as seeds."""
    return {a.name: Seeds(tuple(a.keywords), tuple(a.weak_keywords)) for a in agents}


def _first_telegram(config: Config) -> tuple[str, RoutingSettings]:
    """(default agent, routing) of the config's first Telegram channel, else its first channel."""
    channels = list(config.channels.values())
    channel = next((c for c in channels if c.type.value == "telegram"), channels[0])
    return channel.default_agent, channel.routing


def _report(packs: Sequence[LearnedPack], labelled: Sequence[LabelledConversation], paths: Sequence[object],
            args: argparse.Namespace) -> None:
    counts = evidence_counts(labelled)
    total = sum(counts.values())
    print(f"learned from {args.file}: {len(labelled)} conversations, {total} messages "
          f"({counts['credit']} labelled, {counts['background']} background, {counts['context']} context)")
    for pack, path in zip(packs, paths, strict=True):
        yours = sum(k.origin == "yours" for k in pack.keywords + pack.weak_keywords)
        print(f"  {path}: {len(pack.keywords)} strong, {len(pack.weak_keywords)} weak ({yours} of them yours), "
              f"{len(pack.dropped)} of yours left out; {pack.messages} messages{_knobs(pack)}")


def _knobs(pack: LearnedPack) -> str:
    """The routing knobs a pack sets, as the summary line's tail ("" when none)."""
    parts = [f"sticky_bonus_offset {pack.sticky_bonus_offset}"] if pack.sticky_bonus_offset else []
    parts += ["two_topic_confirm"] if pack.two_topic_confirm else []
    return f"; {', '.join(parts)}" if parts else ""
