"""End to end on a hand-made corpus: exact keyword lists, and the same packs for the same input."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from stickyroute.learn.labels import from_corpus
from stickyroute.learn.learner import LearnedPack, learn
from stickyroute.learn.proposals import Seeds
from stickyroute.learn.settings import LearnSettings
from stickyroute.replay.cli import RECOMMENDED
from stickyroute.replay.corpus import Conversation, Turn

H, T = "hotel", "taxi"


def conv(cid: str, *turns: tuple[str, str, bool]) -> Conversation:
    return Conversation(cid, tuple(Turn(text, gold, general) for text, gold, general in turns))


CORPUS = [
    conv("1", ("I need a guesthouse in the north", H, False), ("does the guesthouse have wifi", H, False),
         ("and a taxi to the museum", T, False), ("thanks, that is all", T, True)),
    conv("2", ("looking for a guesthouse with wifi", H, False), ("please book it for two nights", H, False),
         ("thanks, bye now", H, True)),
    conv("3", ("I need a cab from the guesthouse", T, False), ("the cab should arrive by noon", T, False),
         ("what car type is it", T, False)),
    conv("4", ("book a cab to the station", T, False), ("and a cheap hotel room tonight", H, False)),
    conv("5", ("we plan a visit, any guesthouse with parking", H, False),
         ("yes the guesthouse with parking works", H, False)),
]
SEEDS = {H: Seeds(("hotel",)), T: Seeds(("taxi", "visit", "Guesthouse"))}
# this corpus is tiny: no z-score threshold, a keyword needs to win one message, and two
# messages are support enough to be strong
SMALL = LearnSettings(min_z=0.0, candidate_z=0.0, min_gain=1.0, min_strong_messages=2)


def lists(pack: LearnedPack) -> tuple[list[tuple[str, int]], list[str], list[str]]:
    return ([(k.spelling, round(k.gate_effect)) for k in pack.keywords], [k.spelling for k in pack.weak_keywords],
            [k.spelling for k in pack.dropped])


def test_learns_exact_lists_from_a_hand_made_corpus() -> None:
    hotel, taxi = learn(from_corpus(CORPUS, {H, T}), SEEDS, RECOMMENDED, "default", SMALL)
    # "parking" and "wifi": only hotel messages use them; "guesthouse" is hotel's in 5 of 6
    # messages (one taxi message starts "a cab from the guesthouse"): shared, so weak. The gate
    # effect is the number of learning messages each keyword routes right (net).
    assert lists(hotel) == ([("parking", 1), ("wifi", 1), ("hotel", 1)], ["guesthouse"], [])
    # "cab": 3 of 3 taxi messages; your "visit" is seen once, in a hotel message, and your
    # "Guesthouse" is taxi's in 1 of 6 messages: both contradicted, left out.
    assert lists(taxi) == ([("cab", 2), ("taxi", 1)], [], ["Guesthouse", "visit"])
    assert (hotel.messages, taxi.messages) == (7, 5)  # general turns count as background, not credit
    guesthouse = hotel.weak_keywords[0].score
    assert (guesthouse.owner_messages, guesthouse.messages, guesthouse.others) == (5, 6, (("taxi", 1),))


def test_a_learned_term_is_strong_only_with_min_strong_messages_of_support() -> None:
    def learned(min_strong_messages: int) -> tuple[tuple[list[tuple[str, int]], list[str], list[str]], ...]:
        settings = replace(SMALL, min_strong_messages=min_strong_messages)
        return tuple(lists(p) for p in learn(from_corpus(CORPUS, {H, T}), SEEDS, RECOMMENDED, "default", settings))

    # "parking" and "wifi" (2 hotel messages each) can no longer be strong; "guesthouse" (5)
    # takes their place, and your "Guesthouse" of taxi comes back weak (no strong hotel word left
    # in "a cab from the guesthouse")
    assert learned(3) == (([("guesthouse", 3), ("hotel", 1)], [], []),
                          ([("cab", 3), ("taxi", 1)], ["Guesthouse"], ["visit"]))
    # "cab" rests on 3 messages: not strong at 4 (your own "taxi" is not a learned term)
    assert learned(4)[1] == ([("taxi", 1)], [], ["Guesthouse", "visit"])


def test_without_evidence_nothing_is_learned_and_a_harmful_keyword_of_yours_goes() -> None:
    hotel, taxi = learn(from_corpus(CORPUS, {H, T}), SEEDS, RECOMMENDED, "default")  # shipped thresholds: z >= 2
    assert lists(hotel) == ([("hotel", 1)], [], [])
    # without "parking", your "visit" sends "we plan a visit, any guesthouse..." to taxi: turned off
    assert lists(taxi) == ([("taxi", 1)], [], ["Guesthouse", "visit"])


def test_the_same_input_gives_byte_identical_packs_whatever_the_hash_seed(tmp_path) -> None:
    corpus = Path(__file__).parents[1] / "replay" / "data" / "dev_first50.jsonl"
    agents = Path(__file__).parents[1] / "replay" / "data" / "agents.toml"
    outputs = []
    for seed in ("1", "2"):
        out = tmp_path / f"out{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "stickyroute.cli.main", "learn", str(corpus), "--agents", str(agents),
                        "--out", str(out)], check=True, env=env, capture_output=True, timeout=120)
        outputs.append({p.name: p.read_bytes() for p in sorted(out.iterdir())})
    assert outputs[0] == outputs[1]
    assert len(outputs[0]) == 7 and all(b.startswith(b"# Rule pack") for b in outputs[0].values())


def test_a_word_of_an_idiom_is_never_a_strong_learned_keyword() -> None:
    texts = ["what is the weather forecast for paris", "weather forecast for rome please",
             "the weather forecast for tomorrow", "is the weather forecast good for berlin"]
    corpus = [conv(str(i), (text, "weather", False), ("and book a table for dinner", "food", False))
              for i, text in enumerate(texts)]
    weather, food = learn(from_corpus(corpus, {"weather", "food"}), {"weather": Seeds(), "food": Seeds()},
                          RECOMMENDED, "default", SMALL)
    # "weather" is in every weather message, but "under the weather" is an idiom: never strong
    # (weak would add nothing here: "forecast" already decides every one of them)
    assert ([k.spelling for k in weather.keywords], [k.spelling for k in weather.weak_keywords]) == (["forecast"], [])
    assert [k.spelling for k in food.keywords] == ["a table", "and book", "book a", "dinner", "table for"]
