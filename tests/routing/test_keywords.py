"""Keyword gate (issue #3, "Keyword gate"): weights, distinct keywords, casefold, Unicode word
boundaries, phrases across punctuation, substring scripts; `top_agent`."""

from __future__ import annotations

import pytest

from stickyroute.routing.keywords import _WORD, AgentKeywords, KeywordScorer, top_agent, words

OPS = AgentKeywords("ops", keywords=("deploy", "k8s", "stack trace", "check in"), weak_keywords=("server", "logs"))
CAFE = AgentKeywords("cafe", keywords=("café", "straße"), weak_keywords=("api",))
CJK = AgentKeywords("cjk", keywords=("测试", "請求書", "デプロイ", "docker"), weak_keywords=("サーバー",))


def score(text: str, *agents: AgentKeywords, strong: int = 6, weak: int = 1) -> dict[str, int]:
    return KeywordScorer(agents or (OPS, CAFE, CJK), strong_weight=strong, weak_weight=weak).scores(text)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("please deploy it", {"ops": 6}, id="one-strong-6"),
        pytest.param("the server is slow", {"ops": 1}, id="one-weak-1"),
        pytest.param("deploy to the server", {"ops": 7}, id="strong-plus-weak"),
        pytest.param("deploy the k8s server, read the logs", {"ops": 14}, id="two-strong-two-weak"),
        pytest.param("deploy deploy DEPLOY deploy", {"ops": 6}, id="distinct-keyword-counted-once"),
        pytest.param("server server logs logs", {"ops": 2}, id="distinct-weak-counted-once"),
        pytest.param("nothing relevant here", {}, id="no-match-empty"),
        pytest.param("", {}, id="empty-text"),
    ],
)
def test_weights_and_distinct_keywords(text: str, expected: dict[str, int]) -> None:
    assert score(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("DEPLOY NOW", {"ops": 6}, id="upper"),
        pytest.param("Deploy now", {"ops": 6}, id="title"),
        pytest.param("K8S is down", {"ops": 6}, id="upper-with-digit"),
        pytest.param("STRASSE gesperrt", {"cafe": 6}, id="casefold-sharp-s"),
        pytest.param("die Straße", {"cafe": 6}, id="sharp-s-itself"),
        pytest.param("CAFÉ au lait", {"cafe": 6}, id="accented-upper"),
    ],
)
def test_casefold(text: str, expected: dict[str, int]) -> None:
    assert score(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("un café noir", {"cafe": 6}, id="accented-word"),
        pytest.param("deux cafés", {}, id="longer-accented-word-no-match"),
        pytest.param("cafétéria", {}, id="prefix-of-longer-word"),
        pytest.param("un cafe noir", {}, id="unaccented-is-another-word"),
        pytest.param("un cafe\u0301 noir", {"cafe": 6}, id="decomposed-accent-same-word"),
        pytest.param("redeploy it", {}, id="suffix-inside-word"),
        pytest.param("deployment done", {}, id="prefix-inside-word"),
        pytest.param("rapid growth", {}, id="weak-inside-word"),
        pytest.param("(api)", {"cafe": 1}, id="brackets-are-boundaries"),
        pytest.param("api, deploy.", {"ops": 6, "cafe": 1}, id="punctuation-after"),
        pytest.param("deploy_script", {}, id="underscore-joins-words"),
        pytest.param("k8s-cluster", {"ops": 6}, id="dash-is-boundary"),
    ],
)
def test_unicode_word_boundaries(text: str, expected: dict[str, int]) -> None:
    assert score(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("here is the stack trace", {"ops": 6}, id="single-space"),
        pytest.param("stack   trace", {"ops": 6}, id="many-spaces"),
        pytest.param("stack-trace", {"ops": 6}, id="dash"),
        pytest.param("Stack,\ntrace", {"ops": 6}, id="comma-newline"),
        pytest.param("stack... trace!", {"ops": 6}, id="punctuation-run"),
        pytest.param("stacktrace", {}, id="joined-is-another-word"),
        pytest.param("stack of trace", {}, id="word-between"),
        pytest.param("trace stack", {}, id="order-matters"),
        pytest.param("a stack", {}, id="first-word-only"),
        pytest.param("check check-in", {"ops": 6}, id="phrase-after-repeated-first-word"),
        pytest.param("check-in and check in", {"ops": 6}, id="phrase-counted-once"),
    ],
)
def test_phrases_across_spaces_and_punctuation(text: str, expected: dict[str, int]) -> None:
    assert score(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("帮我测试一下", {"cjk": 6}, id="chinese-substring"),
        pytest.param("测试测试", {"cjk": 6}, id="chinese-counted-once"),
        pytest.param("请开发票", {}, id="chinese-no-match"),
        pytest.param("請求書を送ってください", {"cjk": 6}, id="japanese-kanji-substring"),
        pytest.param("本番にデプロイしたい", {"cjk": 6}, id="japanese-katakana-substring"),
        pytest.param("サーバーが落ちた", {"cjk": 1}, id="japanese-weak-substring"),
        pytest.param("用docker部署", {"cjk": 6}, id="latin-word-between-han"),
        pytest.param("dockerを使う", {"cjk": 6}, id="latin-word-before-kana"),
    ],
)
def test_scripts_without_spaces_match_as_substrings(text: str, expected: dict[str, int]) -> None:
    assert score(text) == expected


def test_weights_are_configurable() -> None:
    assert score("deploy to the server", strong=10, weak=3) == {"ops": 13}


def test_each_agent_scores_a_shared_keyword() -> None:
    a = AgentKeywords("a", keywords=("deploy",))
    b = AgentKeywords("b", weak_keywords=("deploy",))
    assert score("deploy", a, b) == {"a": 6, "b": 1}


@pytest.mark.parametrize(
    ("agent", "text", "expected"),
    [
        pytest.param(AgentKeywords("a", keywords=("deploy", "Deploy", "DEPLOY ")), "deploy", {"a": 6},
                     id="case-duplicates-once"),
        pytest.param(AgentKeywords("a", keywords=("deploy",), weak_keywords=("deploy",)), "deploy", {"a": 6},
                     id="strong-and-weak-duplicate-counts-strong-once"),
        pytest.param(AgentKeywords("a", keywords=("stack trace", "stack-trace")), "stack trace", {"a": 6},
                     id="same-phrase-spelt-twice-once"),
        pytest.param(AgentKeywords("a", keywords=("测试", "测试")), "测试", {"a": 6}, id="substring-duplicate-once"),
    ],
)
def test_a_keyword_listed_twice_counts_once(agent: AgentKeywords, text: str, expected: dict[str, int]) -> None:
    assert score(text, agent) == expected


def test_keywords_without_word_characters_are_ignored() -> None:
    assert score("!!! ???", AgentKeywords("a", keywords=("!!!", "  "))) == {}


def test_agents_lists_every_agent_in_order() -> None:
    assert KeywordScorer((OPS, CAFE, CJK)).agents == ("ops", "cafe", "cjk")


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        pytest.param({}, (None, 0, 0), id="empty"),
        pytest.param({"a": 0, "b": 0}, (None, 0, 0), id="all-zero"),
        pytest.param({"a": 6}, ("a", 6, 0), id="single"),
        pytest.param({"a": 6, "b": 6}, (None, 6, 6), id="tie"),
        pytest.param({"a": 6, "b": 6, "c": 8}, ("c", 8, 6), id="tie-below-unique-top"),
        pytest.param({"a": 3, "b": 6, "c": 6}, (None, 6, 6), id="tie-at-top-after-lower"),
        pytest.param({"a": 8, "b": 3, "c": 5}, ("a", 8, 5), id="runner-up-after-top"),
        pytest.param({"a": 5, "b": 8}, ("b", 8, 5), id="top-after-runner-up"),
        pytest.param({"a": 18, "b": 16}, ("a", 18, 16), id="content-writer-18-vs-16"),
    ],
)
def test_top_agent(scores: dict[str, int], expected: tuple[str | None, int, int]) -> None:
    assert top_agent(scores) == expected


@pytest.mark.parametrize(
    ("folded", "expected"),
    [
        ("check-in at 9:30, e-mail_me", ["check", "in", "at", "9", "30", "e", "mail_me"]),
        ("\ta__b\x00c\x7fd  ", ["a__b", "c", "d"]),
        ("!@#$%^&*()", []),
        ("", []),
        ("caf\u00e9 au lait", ["caf\u00e9", "au", "lait"]),
        ("docker\u90e8\u7f72k8s", ["docker", "k8s"]),
    ],
    ids=["ascii-punctuation", "ascii-controls", "ascii-no-word", "empty", "non-ascii-regex-path", "cjk-run"],
)
def test_words_are_the_same_on_the_ascii_fast_path_and_the_regex_path(folded: str, expected: list[str]) -> None:
    assert (words(folded), _WORD.findall(folded)) == (expected, expected)


def test_the_last_text_scored_is_remembered_and_each_caller_gets_its_own_dict() -> None:
    """The engine and the keyword classifier score a first message one after the other: the
    second asks the same text and gets equal scores, never the same dict."""
    scorer = KeywordScorer((OPS, CAFE, CJK))
    first = scorer.scores("the deploy failed on the server")
    first["ops"] = -1  # a caller's own change never reaches the next caller
    again = scorer.scores("the deploy failed on the server")
    other = scorer.scores("a latte please")
    assert (again, again is not first, scorer.decisive("the deploy failed on the server")) == (
        {"ops": 7}, True, {"ops": 7})
    assert other == score("a latte please") == {}
