"""The generated reference pages: docs/configuration.md from the config model (every key the loader
accepts is documented; the page is current) and docs/cli.md from the parser. A failure names the
key (or command) and where to fix it."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from stickyroute.cli.reference import render_cli_page
from stickyroute.config import _channels
from stickyroute.config.key_docs import DESCRIPTIONS
from stickyroute.config.model import ServerSettings, StateSettings
from stickyroute.config.reference import accepted_keys, render_page, undocumented

ROOT = Path(__file__).resolve().parent.parent
_ROW = re.compile(r"^\| `([^`]+)` \|")
_SECTION = re.compile(r"^## `\[+([^\]]+)\]+`")


def _stale_names(committed: str, current: str, section_pattern: re.Pattern[str]) -> list[str]:
    """The `section.key` of every table row (or the section of every other line) that differs."""
    names: list[str] = []

    def walk(lines: list[str]) -> dict[int, str]:
        section, out = "", {}
        for i, line in enumerate(lines):
            if found := section_pattern.match(line):
                section = found.group(1)
            row = _ROW.match(line)
            out[i] = f"{section}.{row.group(1)}" if row and section else section or "(intro)"
        return out

    old, new = committed.splitlines(), current.splitlines()
    where_old, where_new = walk(old), walk(new)
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            names += [where_old[i] for i in range(i1, i2)] + [where_new[j] for j in range(j1, j2)]
    return list(dict.fromkeys(names))


def test_every_key_the_loader_accepts_is_documented():
    assert undocumented() == []


def test_the_configuration_page_is_current():
    committed = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    stale = _stale_names(committed, render_page(), _SECTION)
    assert stale == [], f"docs/configuration.md is stale for {', '.join(stale)}: run `make reference`"


def test_the_cli_page_is_current():
    committed = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    stale = _stale_names(committed, render_cli_page(), re.compile(r"^## `([^`]+)`"))
    assert stale == [], f"docs/cli.md is stale for {', '.join(stale)}: run `make reference`"


def test_a_new_key_without_a_description_is_named_with_where_to_describe_it(monkeypatch):
    monkeypatch.setattr(_channels, "CHANNEL_KEYS", (*_channels.CHANNEL_KEYS, "pigeon_secret"))
    monkeypatch.delitem(DESCRIPTIONS, "server.drain_s")
    assert undocumented() == [
        "server.drain_s: undocumented: add 'server.drain_s': \"what it does, its unit\" to DESCRIPTIONS in "
        "stickyroute/config/key_docs.py",
        "channels.NAME.pigeon_secret: undocumented: add 'channels.NAME.pigeon_secret': \"what it does, its unit\" "
        "to DESCRIPTIONS in stickyroute/config/key_docs.py"]


def test_a_stale_page_names_the_keys_that_changed():
    current = render_page()
    edited = current.replace("| `port` | integer | `8080` |", "| `port` | integer | `8081` |", 1)
    assert _stale_names(edited, current, _SECTION) == ["server.port"]


def test_names_types_and_defaults_come_from_the_model_and_the_loader():
    page = render_page()
    assert f"| `port` | integer | `{ServerSettings().port}` |" in page
    assert f'| `key_prefix` | string | `"{StateSettings().key_prefix}"` |' in page
    assert "| `backend` | `memory` \\| `redis` | `\"memory\"` |" in page
    assert set(accepted_keys()["server"]) == {f.name for f in ServerSettings.__dataclass_fields__.values()}


def test_the_keywords_classifier_is_documented():
    row = next(line for line in render_page().splitlines() if line.startswith("| `provider` |"))
    assert row.startswith("| `provider` | `auto` \\| `groq` \\| `keywords` \\| `heuristic` | `\"auto\"` |")
    assert "`keywords`: the offline keyword classifier, no LLM calls" in row
    assert "`keywords`" in (ROOT / "docs" / "classifier.md").read_text(encoding="utf-8")
