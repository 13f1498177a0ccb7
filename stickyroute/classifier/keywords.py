"""The keyword gate as a classifier: offline, zero tokens, the default when no API key is set.

Rule (issue 4, `provider = "keywords"`, also accepted as `"heuristic"`): among
`request.candidates`, the unique top keyword
scorer whose score is at or above `threshold` (keyword points, e.g. 6 = one strong keyword) is
the answer; a tie at the top, a top score below the threshold (or 0) or no candidates give none.
The server and the replay give it the gate's `decisive` scores: `confirm_keywords` ask the
classifier and never decide alone, and this classifier is keywords deciding alone (issue #22).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stickyroute.classifier.base import Classification, ClassificationRequest, Outcome


class KeywordClassifier:
    """Classifier that answers from keyword scores alone.

    `score(text) -> {agent name: points}` is any scorer (the routing engine's keyword gate);
    agents missing from its result score 0. Never raises for a well-behaved scorer.
    """

    name = "keywords"

    def __init__(self, score: Callable[[str], Mapping[str, int]], threshold: int) -> None:
        self._score = score
        self._threshold = threshold

    def __repr__(self) -> str:
        return f"KeywordClassifier(threshold={self._threshold})"

    def choose(self, text: str, names: tuple[str, ...]) -> str | None:
        """The unique top scorer among `names` at or above the threshold, else None."""
        scores = self._score(text)
        ranked = sorted(((scores.get(n, 0), n) for n in names), reverse=True)
        if not ranked:
            return None
        top_score, top_name = ranked[0]
        if top_score <= 0 or top_score < self._threshold:
            return None
        if len(ranked) > 1 and ranked[1][0] == top_score:
            return None
        return top_name

    async def classify(self, request: ClassificationRequest) -> Classification:
        """Outcome.AGENT with the unique top scorer, else Outcome.NONE; zero tokens, latency 0."""
        return self.classify_now(request)

    def classify_now(self, request: ClassificationRequest) -> Classification:
        """`classify` without the event loop: it never waits, so the guard needs no task or
        timeout around it (`GuardedClassifier.classify_now`)."""
        agent = self.choose(request.text, tuple(c.name for c in request.candidates))
        if agent is None:
            return Classification(outcome=Outcome.NONE)
        return Classification(outcome=Outcome.AGENT, agent=agent)
