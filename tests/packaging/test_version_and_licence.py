"""One version in one place, `stickyroute --version`, the changelog and the licence."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from pathlib import Path

import pytest

import stickyroute
from stickyroute.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_version_lives_in_one_place_and_the_metadata_reads_it():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"]
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "stickyroute.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", stickyroute.__version__)
    assert importlib.metadata.version("stickyroute") == stickyroute.__version__


def test_version_flag_prints_the_version(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"stickyroute {stickyroute.__version__}\n"


def test_the_changelog_has_a_section_for_the_current_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(rf"^## \[{re.escape(stickyroute.__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text, re.MULTILINE)
    assert "## [Unreleased]" in text


def test_the_licence_is_apache_2_and_the_corpora_keep_their_own():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["license"] == "Apache-2.0"
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    corpus = (ROOT / "eval" / "corpus" / "README.md").read_text(encoding="utf-8")
    for licence_name in ("CC BY-SA 4.0", "CC BY 3.0", "MIT / CC BY 4.0"):
        assert licence_name in notice and licence_name in corpus, licence_name
    assert "eval/corpus/" in notice
