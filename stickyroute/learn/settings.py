"""`LearnSettings`: the thresholds of `stickyroute learn`, with the values it ships with.

Shares are fractions in [0, 1] (of the messages that contain a term, the part that is one
agent's); counts are messages; z is the log-odds z-score of `stickyroute.learn.scoring`. The defaults
were chosen by cross-validation inside one half of the shipped dev corpora (`make learn-cv`:
learn on a quarter, measure on the other quarter, both ways, three splits); the other half was
measured once per change of method (every run in docs/eval/results.md).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True, slots=True)
class LearnSettings:
    """Thresholds for proposing keywords and for the gate check (see the module docstring)."""

    strong_share: float = 0.95
    """A learned term is proposed strong when at least this share of its messages are one agent's..."""
    min_strong_messages: int = 5
    """...that agent's messages containing it are at least this many (the gate check never makes
    a learned term with fewer strong either)..."""
    min_z: float = 2.0
    """...and its z-score reaches this (weak proposals too)."""
    weak_share: float = 0.5
    """A learned term is proposed weak from this share..."""
    min_weak_messages: int = 5
    """...with at least this many messages of its agent."""
    candidate_share: float = 0.3
    """The gate check may also turn on terms from this share..."""
    min_candidate_messages: int = 2
    """...seen in at least this many of the agent's messages..."""
    candidate_z: float = 1.0
    """...with at least this z-score."""
    keep_share: float = 0.6
    """One of your strong keywords stays strong unless fewer than this share of its messages are
    its agent's (then weak from `drop_share`, dropped below)..."""
    drop_share: float = 0.3
    min_contradicting_messages: int = 1
    """...and only when it was seen in at least this many messages (never seen: kept; one message
    of another agent is already a contradiction)."""
    min_gain: float = 2.0
    """Gate check: messages a keyword must win to be turned on or up."""
    switch_penalty: float = 1.0
    """Gate check: extra cost of a wrong decision that moves the route."""
    overlap_min_gain: float | None = 5.0
    """Gate check: messages a phrase (or a term inside it) must win to be on beside the other for
    the same agent, so that one mention scores twice ("a taxi" and "taxi"); None: never."""
    passes: int = 2
    """Gate check: coordinate-ascent passes."""
    max_sticky_offset: int = 6
    """The largest `sticky_bonus_offset` (points) a pack may give its agent; 0: none."""
    offset_min_gain: float = 5.0
    """Messages an agent's `sticky_bonus_offset` (or its `two_topic_confirm`) must win, summed
    over the validation folds, to be chosen: it changes every message on that agent's routes, so
    it needs more than a keyword."""
    offset_folds: int = 2
    """The validation loop's folds (by conversation): keywords learned on the others, the knobs
    measured on each (`stickyroute.learn.offsets`); below 2: no knobs (no offset, no two-topic
    rule)."""
    two_topic_all: bool = False
    """Every agent gets `two_topic_confirm`, whatever the validation loop measures."""
    prior_messages: float = 100.0
    """alpha0 of the informative Dirichlet prior (scoring), in messages."""
    llm_judge: bool = False
    """Gate check: the packs will run with an LLM classifier that gets a message right when asked
    (a confirmation is a call, not a decision by the same keywords); False: the keyword classifier
    (asking it is deciding by the same keywords)."""
    call_cost: float = 0.0
    """Gate check: what one classifier call costs, in messages (with an LLM: calls are money)."""
    keyword_switch_cost: float = 0.0
    """Gate check: what a switch of a live route by keywords alone costs, in messages, right or
    wrong (what it risks on messages the learning data does not show)."""
    confirm_role: bool = True
    """Gate check: a keyword may also be a confirm keyword (`confirm_keywords`: strong, but a
    decision it leads goes to the classifier, never by keywords alone)."""

    @classmethod
    def for_classifier(cls, llm: bool) -> LearnSettings:
        """The shipped settings for packs that run with an LLM classifier (`llm`) or with the
        keyword classifier alone. With an LLM a call costs half a message (`call_cost`: the rate
        that kept calls under 8 per 100 in every cross-validation run), a phrase may count
        beside a word inside it from 2 messages won (`overlap_min_gain`), every agent confirms a
        second topic (`two_topic_all`: MultiWOZ false switches 0.22 -> 0.06 per 100 at 1.2 more
        calls in cross-validation) and no agent gets a sticky bonus offset (`max_sticky_offset`
        0: with an LLM a tie already reaches a classifier that is right; an offset only trades
        missed switches for calls, -0.24 points of accuracy on SGD inside the learning half)."""
        return (replace(cls(), llm_judge=True, call_cost=0.5, overlap_min_gain=2.0, two_topic_all=True,
                        max_sticky_offset=0) if llm else cls())
