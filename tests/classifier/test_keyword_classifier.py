"""KeywordClassifier: the unique top keyword scorer at or above the threshold, else none."""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from groq_fakes import CANDIDATES, request

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.classifier.keywords import KeywordClassifier


def scorer(scores: Mapping[str, int]):
    """A scorer that returns `scores` for any text (the keyword gate is tested elsewhere)."""
    seen: list[str] = []

    def score(text: str) -> Mapping[str, int]:
        seen.append(text)
        return scores

    score.seen = seen  # type: ignore[attr-defined]
    return score


@pytest.mark.parametrize(
    ("scores", "threshold", "expected"),
    [
        ({"coder": 12, "writer": 6}, 6, "coder"),                  # unique top
        ({"coder": 6}, 6, "coder"),                                 # exactly at the threshold
        ({"coder": 5}, 6, None),                                    # below the threshold
        ({"coder": 6, "writer": 6}, 6, None),                       # tie at the top
        ({"coder": 12, "writer": 6, "ops-agent": 6}, 6, "coder"),   # tie below the top is fine
        ({"ops-agent": 7, "writer": 1}, 6, "ops-agent"),
        ({}, 6, None),                                              # no keywords at all
        ({}, 0, None),                                              # a zero score never wins
        ({"translator": 30, "coder": 6}, 6, "coder"),               # only candidates count
        ({"translator": 30}, 6, None),
        ({"coder": 18, "writer": 18, "ops-agent": 24}, 6, "ops-agent"),
    ],
)
async def test_keyword_classifier_table(
    scores: dict[str, int], threshold: int, expected: str | None
) -> None:
    classifier = KeywordClassifier(scorer(scores), threshold)

    result = await classifier.classify(request("check the k8s pods"))

    if expected is None:
        assert result == Classification(outcome=Outcome.NONE)
    else:
        assert result == Classification(outcome=Outcome.AGENT, agent=expected)


async def test_keyword_classifier_scores_the_message_text_and_spends_no_tokens() -> None:
    score = scorer({"writer": 6})
    classifier = KeywordClassifier(score, 6)

    result = await classifier.classify(request("draft a blog post"))

    assert score.seen == ["draft a blog post"]  # type: ignore[attr-defined]
    assert (result.prompt_tokens, result.completion_tokens, result.latency_s) == (0, 0, 0.0)
    assert classifier.name == "keywords"


def test_choose_with_no_candidates_is_none() -> None:
    assert KeywordClassifier(scorer({"coder": 12}), 6).choose("text", ()) is None


def test_candidate_names_come_from_the_request() -> None:
    names = tuple(c.name for c in CANDIDATES)
    assert KeywordClassifier(scorer({"coder": 12}), 6).choose("text", names) == "coder"
