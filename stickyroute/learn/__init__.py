"""Keyword learning (`stickyroute learn`, issue #13): rule packs mined from labelled messages.

    labels / recorded   where labels come from: a corpus's gold, or the router's recorded verdicts
    terms, stoplist     candidate terms in the keyword gate's normal form; what never counts
    counts, scoring     messages per (term, agent); weighted log-odds z-scores (Monroe et al. 2008)
    proposals           candidates and their starting strength (learned, or yours)
    gate, selection     the gate check: keep what makes the router decide right
    offsets             per-agent routing knobs (sticky_bonus_offset, two_topic_confirm), by a validation loop
    learner             the pipeline: learn(conversations, seeds, routing, default) -> packs
    pack                the packs as commented TOML rule packs (tomlkit)
    holdout             split by conversation; before/after with the replay's own code
"""

from stickyroute.learn.holdout import HoldoutRow, format_rows, measure, split_conversations
from stickyroute.learn.labels import Evidence, LabelledConversation, LabelledMessage, from_corpus
from stickyroute.learn.learner import LearnedKeyword, LearnedPack, learn
from stickyroute.learn.pack import render_pack, write_packs
from stickyroute.learn.proposals import Seeds
from stickyroute.learn.recorded import NoDecisions, labels_from_recording
from stickyroute.learn.settings import LearnSettings

__all__ = [
    "Evidence",
    "HoldoutRow",
    "LabelledConversation",
    "LabelledMessage",
    "LearnSettings",
    "LearnedKeyword",
    "LearnedPack",
    "NoDecisions",
    "Seeds",
    "format_rows",
    "from_corpus",
    "labels_from_recording",
    "learn",
    "measure",
    "render_pack",
    "split_conversations",
    "write_packs",
]
