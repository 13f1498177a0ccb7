"""The replay's agents file: `rules = "path"` merged as in the config; unknown keys are errors."""

from __future__ import annotations

import pytest

from stickyroute.errors import ConfigError
from stickyroute.replay.agents_file import ExtraPacks, load_agents_file


def write(path, text: str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def problems(path, extra=None) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_agents_file(path, extra)
    return [str(p) for p in info.value.problems]


def test_rules_pack_is_merged_as_in_the_config(tmp_path) -> None:
    write(tmp_path / "packs" / "hotel.toml", 'description = "From the pack."\n'
          'keywords = ["Guesthouse", "wifi", "nights"]\nweak_keywords = ["room", "WIFI", "parking"]\n')
    path = write(tmp_path / "agents.toml", '[[agents]]\nname = "hotel"\nkeywords = ["hotel", "guesthouse"]\n'
                 'weak_keywords = ["room"]\nrules = "packs/hotel.toml"\n'
                 '[[agents]]\nname = "taxi"\ndescription = "Books taxis."\nservices = ["Taxi"]\n')
    hotel, taxi = load_agents_file(path)
    assert (hotel.name, hotel.description, hotel.keywords, hotel.weak_keywords) == (
        "hotel", "From the pack.", ("hotel", "guesthouse", "wifi", "nights"), ("room", "parking"))
    assert (taxi.name, taxi.description, taxi.keywords, taxi.weak_keywords) == ("taxi", "Books taxis.", (), ())


def test_unknown_keys_name_the_file_and_the_key(tmp_path) -> None:
    path = write(tmp_path / "agents.toml", '[[agents]]\nname = "hotel"\nkeyword = ["x"]\n'
                 '[[agents]]\nname = "taxi"\ncolour = "red"\n[extra]\n')
    assert problems(path) == [
        f"{path}: extra: unknown key",
        f'{path}: agents[0].keyword: unknown key (did you mean "keywords"?)',
        f"{path}: agents[1].colour: unknown key",
    ]


@pytest.mark.parametrize("text, expected", [
    ('[[agents]]\ndescription = "x"\n', "agents[0].name: is required"),
    ('[[agents]]\nname = "Hotel"\n', 'agents[0].name: "Hotel": expected lowercase letters, digits, - or _ (not auto or none)'),
    ('[[agents]]\nname = "a"\n[[agents]]\nname = "a"\n', 'agents[1].name: "a" is listed twice'),
    ('[[agents]]\nname = "a"\nkeywords = ["c++", 3]\n', 'agents[0].keywords[1]: expected a string, got the integer 3'),
    ('[[agents]]\nname = "a"\nrules = "missing.toml"\n', "agents[0].rules: missing.toml: cannot read file: No such file or "
     "directory (looked for <tmp>/missing.toml)"),
    ('name = "a"\n', "name: unknown key"),
])
def test_each_problem_is_reported_with_its_key(tmp_path, text, expected) -> None:
    path = write(tmp_path / "agents.toml", text)
    assert f"{path}: {expected.replace('<tmp>', str(tmp_path))}" in problems(path)


def test_a_bad_pack_is_reported_under_the_agents_rules_key(tmp_path) -> None:
    write(tmp_path / "bad.toml", 'keywords = ["ok"]\nkeywordz = []\n')
    path = write(tmp_path / "agents.toml", '[[agents]]\nname = "a"\nrules = "bad.toml"\n')
    assert problems(path) == [f'{path}: agents[0].rules: bad.toml: keywordz: unknown key (did you mean "keywords"?)']


def test_an_extra_pack_folder_merges_or_replaces_each_agents_lists(tmp_path) -> None:
    write(tmp_path / "learned" / "hotel.toml", 'keywords = ["guesthouse", "hotel"]\nweak_keywords = ["stay"]\n')
    path = write(tmp_path / "agents.toml", '[[agents]]\nname = "hotel"\nkeywords = ["hotel", "room"]\n'
                 '[[agents]]\nname = "taxi"\nkeywords = ["taxi"]\n')
    merged = load_agents_file(path, ExtraPacks(str(tmp_path / "learned")))
    assert [(a.name, a.keywords, a.weak_keywords) for a in merged] == [
        ("hotel", ("hotel", "room", "guesthouse"), ("stay",)), ("taxi", ("taxi",), ())]
    alone = load_agents_file(path, ExtraPacks(str(tmp_path / "learned"), only=True))
    assert [(a.name, a.keywords, a.weak_keywords) for a in alone] == [
        ("hotel", ("guesthouse", "hotel"), ("stay",)), ("taxi", ("taxi",), ())]
    assert problems(path, ExtraPacks(str(tmp_path / "nowhere"))) == [
        f'{path}: (rules): no folder "{tmp_path / "nowhere"}"']


def test_sticky_and_confirm_keywords_are_read_and_merged_from_a_pack_folder(tmp_path) -> None:
    write(tmp_path / "learned" / "taxi.toml", 'keywords = ["taxi"]\nconfirm_keywords = ["cab"]\n')
    path = write(tmp_path / "agents.toml", '[[agents]]\nname = "taxi"\nkeywords = ["taxi"]\nconfirm_keywords = ["car"]'
                 '\n[[agents]]\nname = "weather"\nsticky = false\n')
    merged = load_agents_file(path, ExtraPacks(str(tmp_path / "learned")))
    alone = load_agents_file(path, ExtraPacks(str(tmp_path / "learned"), only=True, non_sticky=frozenset({"taxi"})))
    assert ([(a.name, a.confirm_keywords, a.sticky) for a in merged],
            [(a.name, a.confirm_keywords, a.sticky) for a in alone]) == (
        [("taxi", ("car", "cab"), True), ("weather", (), False)], [("taxi", ("cab",), False), ("weather", (), False)])
    assert problems(write(tmp_path / "bad.toml", '[[agents]]\nname = "a"\nsticky = "no"\n')) == [
        f'{tmp_path / "bad.toml"}: agents[0].sticky: expected true or false, got the string "no"']
