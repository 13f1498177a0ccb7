"""The classifier interface the routing engine relies on: text + candidates -> agent or none.

Implementations: `heuristic.KeywordClassifier` (offline, zero tokens) and `groq.GroqClassifier`
(LLM). A classifier never raises to the engine's caller: `classify` returns a `Classification`
whose `outcome` says what happened; errors, timeouts and `none` all mean "stay".
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Candidate:
    """An agent the classifier may choose: name, description (one line), aliases."""

    name: str
    description: str = ""
    aliases: tuple[str, ...] = ()


class Outcome(enum.Enum):
    """What a classification attempt came to."""

    AGENT = "agent"          # a valid candidate was chosen (`Classification.agent` is set)
    NONE = "none"            # the classifier answered none / nothing usable
    ERROR = "error"          # the provider failed (timeout, rate limit, 5xx, unparseable...)
    BUDGET = "budget"        # not called: the channel's calls-per-minute budget is spent
    OPEN = "open"            # not called: the circuit breaker is open
    DEADLINE = "deadline"    # not called: the request's classifier deadline had passed (routing.deadline)


@dataclass(frozen=True, slots=True)
class Classification:
    """Result of one classification.

    `agent` is a candidate name when `outcome` is AGENT, else None. `error_kind` names the
    failure (`timeout`, `rate_limit`, `auth`, `server_error`, `unparseable`) when `outcome` is ERROR.
    `latency_s` in seconds; tokens as reported by the provider (0 for the heuristic).
    """

    outcome: Outcome
    agent: str | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error_kind: str | None = None
    raw_answer: str | None = None


@dataclass(frozen=True, slots=True)
class ClassificationRequest:
    """What the engine asks: classify `text` among `candidates`, knowing the `current` agent.

    `context` holds the sender's previous messages (oldest first), only when the classifier's
    `context_messages` setting is above 0. `timeout_s` is what is left of the request's
    classifier deadline (seconds; None: the classifier's own `timeout_s` alone bounds the call).
    """

    channel: str
    text: str
    candidates: tuple[Candidate, ...]
    current: str | None = None
    context: tuple[str, ...] = ()
    timeout_s: float | None = None


class Classifier(Protocol):
    """Anything that can classify a message among candidate agents."""

    name: str
    """Short provider name for logs and stats (`heuristic`, `groq`, `oracle`...)."""

    async def classify(self, request: ClassificationRequest) -> Classification:
        """Classify `request.text`; never raises (failures come back as Outcome.ERROR)."""
        ...


def parse_answer(answer: str | None, candidates: Sequence[Candidate]) -> str | None:
    """Map a raw classifier answer to a candidate name, strictly.

    Trims whitespace, quotes, backticks and one trailing period, then matches the whole answer
    case-insensitively against candidate names and aliases. `none`, the empty answer and anything
    else give None: never a fuzzy or partial match ("I think coder" -> None).
    """
    if answer is None:
        return None
    text = answer.strip().strip("\"'`").strip()
    if text.endswith("."):
        text = text[:-1]
    text = text.strip().strip("\"'`").strip().casefold()
    if not text or text == "none":
        return None
    for candidate in candidates:
        if text == candidate.name.casefold() or any(text == a.casefold() for a in candidate.aliases):
            return candidate.name
    return None
