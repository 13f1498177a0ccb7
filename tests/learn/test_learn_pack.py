"""Written packs: readable TOML with a comment per keyword, loaded by the config loader and `check`."""

from __future__ import annotations

from stickyroute.cli.main import main
from stickyroute.config import load_config, load_rule_pack
from stickyroute.learn.labels import from_corpus
from stickyroute.learn.learner import learn
from stickyroute.learn.pack import render_pack, write_packs
from stickyroute.replay.cli import RECOMMENDED
from tests.learn.test_learn_learner import CORPUS, SEEDS, SMALL, H, T

CONFIG = """
[agents.hotel]
url = "http://127.0.0.1:9101"
keywords = ["hotel", "suite"]
rules = "learned/hotel.toml"

[agents.taxi]
url = "http://127.0.0.1:9102"
rules = "learned/taxi.toml"

[agents.general]
url = "http://127.0.0.1:9103"

[channels.telegram]
default_agent = "general"
secret_token = "s3cret"
"""


def packs():
    return learn(from_corpus(CORPUS, {H, T}), SEEDS, RECOMMENDED, "default", SMALL)


def test_the_pack_text_is_commented_per_keyword() -> None:
    text = render_pack(packs()[1], "hand.jsonl")
    assert text.startswith('# Rule pack "taxi", learned by `stickyroute learn` from hand.jsonl\n')
    assert '#   "Guesthouse": yours; taxi 1/6 (17%), hotel 5, z -0.4\n' in text
    assert '#   "visit": yours; taxi 0/1 (0%), hotel 1, z -0.2\n' in text
    assert text.endswith('keywords = [\n'
                         '    "cab", # taxi 3/3 (100%), z 0.7, gate +2\n'
                         '    "taxi", # yours; taxi 1/1 (100%), z 0.4, gate +1\n'
                         ']\n'
                         'weak_keywords = []\n')


def test_written_packs_merge_through_the_config_loader_and_pass_check(tmp_path, capsys) -> None:
    paths = write_packs(packs(), tmp_path / "learned", "hand.jsonl")
    assert [p.name for p in paths] == ["hotel.toml", "taxi.toml"]
    assert load_rule_pack(paths[0]).keywords == ("parking", "wifi", "hotel")
    assert load_rule_pack(paths[0]).weak_keywords == ("guesthouse",)
    config_path = tmp_path / "proxy.toml"
    config_path.write_text(CONFIG, encoding="utf-8")
    config = load_config(config_path, env={})
    assert config.agents["hotel"].keywords == ("hotel", "suite", "parking", "wifi")
    assert config.agents["hotel"].weak_keywords == ("guesthouse",)
    assert config.agents["taxi"].keywords == ("cab", "taxi")
    assert main(["check", str(config_path)]) == 0
    assert capsys.readouterr().out == "ok: 3 agents, 1 channel\n"


def test_rendering_is_a_function_of_the_pack() -> None:
    assert [render_pack(p, "x") for p in packs()] == [render_pack(p, "x") for p in packs()]


def test_confirm_keywords_are_written_and_load_back(tmp_path) -> None:
    from dataclasses import replace

    from stickyroute.learn.learner import LearnedPack

    taxi = packs()[1]
    with_confirm = LearnedPack(taxi.agent, taxi.keywords[1:], taxi.weak_keywords, taxi.dropped, taxi.messages,
                               (replace(taxi.keywords[0], strength="confirm"),))
    write_packs([with_confirm], tmp_path, "hand.jsonl")
    text = (tmp_path / "taxi.toml").read_text()
    pack = load_rule_pack(tmp_path / "taxi.toml")
    assert ("# Strong, but never deciding alone" in text, pack.confirm_keywords,
            taxi.keywords[0].spelling in pack.keywords) == (True, (taxi.keywords[0].spelling,), False)
