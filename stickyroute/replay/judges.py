"""Judges for replays: classifiers that know the turn being routed, and a counting wrapper.

    OracleJudge        answers the turn's gold; none for `general` turns (a context-free judge)
    NoisyJudge(p, seed) the oracle, but with probability p a uniformly random *other* corpus agent
    CountingClassifier wraps any Classifier: calls and estimated prompt tokens
                       (len(system prompt + user content) / 4 characters a token, as Groq gets it)

The replay sets `TurnCursor.turn` before routing each message; judges read it. A gold of `oos`
(CLINC150) is answered none: the default agent is right there.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from stickyroute.classifier.base import Candidate, Classification, ClassificationRequest, Classifier, Outcome
from stickyroute.classifier.groq import system_prompt, user_content
from stickyroute.replay.corpus import OOS, Turn

CHARS_PER_TOKEN = 4


@dataclass(slots=True)
class TurnCursor:
    """The turn the replay is routing right now (None between conversations)."""

    turn: Turn | None = None


class OracleJudge:
    """Answers the current turn's gold agent; none for general and `oos` turns."""

    name = "oracle"

    def __init__(self, cursor: TurnCursor) -> None:
        self.cursor = cursor

    def answer(self) -> str | None:
        """The oracle's agent for the current turn, or None."""
        turn = self.cursor.turn
        if turn is None or turn.general or turn.gold == OOS:
            return None
        return turn.gold

    async def classify(self, request: ClassificationRequest) -> Classification:
        agent = self.answer()
        if agent is None:
            return Classification(Outcome.NONE, raw_answer="none")
        return Classification(Outcome.AGENT, agent, raw_answer=agent)


class NoisyJudge(OracleJudge):
    """The oracle, except that with probability `p` it answers a uniformly random other agent.

    "Other" = any of `agents` but the oracle's answer (for a none answer: any of `agents`).
    Seeded: the same seed and call sequence give the same answers.
    """

    name = "noisy"

    def __init__(self, cursor: TurnCursor, p: float, agents: tuple[str, ...], seed: int = 0) -> None:
        super().__init__(cursor)
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"noise probability must be in [0, 1], got {p}")
        self.p = p
        self.agents = tuple(agents)
        self.rng = random.Random(seed)

    async def classify(self, request: ClassificationRequest) -> Classification:
        agent = self.answer()
        if self.rng.random() < self.p:
            others = [a for a in self.agents if a != agent]
            if others:
                agent = self.rng.choice(others)
        if agent is None:
            return Classification(Outcome.NONE, raw_answer="none")
        return Classification(Outcome.AGENT, agent, raw_answer=agent)


def estimate_tokens(request: ClassificationRequest, context_messages: int = 0) -> int:
    """Prompt tokens of `request` as the Groq classifier would send it: characters / 4, rounded up."""
    chars = len(_system(request.candidates)) + len(user_content(request.text, request.context, context_messages))
    return -(-chars // CHARS_PER_TOKEN)


_SYSTEM_CACHE: dict[tuple[Candidate, ...], str] = {}


def _system(candidates: tuple[Candidate, ...]) -> str:
    text = _SYSTEM_CACHE.get(candidates)
    if text is None:
        text = _SYSTEM_CACHE[candidates] = system_prompt(candidates)
    return text


@dataclass(slots=True)
class CountingClassifier:
    """Counts the classifier calls of a replay and their estimated prompt tokens.

    `estimate=False` for a zero-token classifier (the keyword heuristic): calls counted, tokens 0.
    """

    inner: Classifier
    context_messages: int = 0
    estimate: bool = True
    calls: int = 0
    tokens: int = 0
    name: str = field(init=False)

    def __post_init__(self) -> None:
        self.name = self.inner.name

    async def classify(self, request: ClassificationRequest) -> Classification:
        self.calls += 1
        if self.estimate:
            self.tokens += estimate_tokens(request, self.context_messages)
        return await self.inner.classify(request)
