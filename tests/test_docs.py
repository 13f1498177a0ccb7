"""The documentation site (mkdocs.yml, docs/): it builds under --strict, every page is in the nav,
and no user page cites something a user does not have (internal issue numbers, field-report ids,
the project's shared reference folder, the proposal's open questions).

The patterns are checked on the Markdown source; issue-number and field-report patterns only on
prose (fenced and indented code blocks and inline code removed), so a Telegram `#token=` fragment,
a hex colour or a shell comment is never mistaken for a reference.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
MKDOCS_YML = ROOT / "mkdocs.yml"

NOT_IN_NAV: frozenset[str] = frozenset()
"""Markdown files under docs/ that are deliberately not user pages (none today)."""

_FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)

# Anywhere in a page, code included: a user has none of these.
_EVERYWHERE: dict[str, re.Pattern[str]] = {
    "the project's shared reference folder": re.compile(r"\.\./shared\b|/work/(?:shared|main|wt)\b"),
    "the internal platform notes": re.compile(r"\bplatforms\.md\b"),
    "the proposal's open questions": re.compile(r"\bopen question\b|\bthe proposal\b", re.IGNORECASE),
}
# In prose only (code removed).
_PROSE: dict[str, re.Pattern[str]] = {
    # "issue #12", "issues #9-#11", "issue 8", "issue-13"
    "an issue number": re.compile(r"\bissues?[\s-]*#?\d+", re.IGNORECASE),
    # "(#10)", "see #7": one or two digits after '#', not an HTML entity (&#39;), not a URL fragment
    # or colour (#fff, #1a2b3c, #token=...: three or more characters, or letters)
    "a bare issue number": re.compile(r"(?<![\w&#/])#\d{1,2}(?![\w=-])"),
    # "T21", "field reports T21, T28", "(T14)"
    "a field-report id": re.compile(r"\bT(?:[1-9]|[1-3]\d)\b"),
    "a field report": re.compile(r"\bfield[- ]reports?\b", re.IGNORECASE),
}


def prose(markdown: str) -> str:
    """The Markdown text without fenced code blocks, indented code blocks and inline code spans.

    An indented block is four or more leading spaces after a blank line, outside a list (list
    continuation lines are indented too, and are prose).
    """
    kept: list[str] = []
    fence: str | None = None
    previous_blank = True
    in_list = False
    indented_block = False
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is not None:
            if stripped.startswith(fence):
                fence = None
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group("fence")
            continue
        if re.match(r"\s*(?:[-*+]|\d+\.)\s", line):
            in_list = True
        elif stripped and not line.startswith(" "):
            in_list = False
        if line.startswith("    ") and (indented_block or previous_blank) and not in_list:
            indented_block = True
            previous_blank = False
            continue
        indented_block = indented_block and not stripped
        previous_blank = not stripped
        kept.append(line)
    return _INLINE_CODE.sub(" ", "\n".join(kept))


def internal_references(markdown: str) -> list[str]:
    """Every internal reference in a page, as "<what>: <match>" (empty when the page is clean)."""
    found = [f"{what}: {m.group(0)!r}" for what, pattern in _EVERYWHERE.items() for m in pattern.finditer(markdown)]
    text = prose(markdown)
    found += [f"{what}: {m.group(0)!r}" for what, pattern in _PROSE.items() for m in pattern.finditer(text)]
    return found


def _nav_pages(node: object) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return []


def _config() -> dict[str, object]:
    loaded = yaml.safe_load(MKDOCS_YML.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def _user_pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).as_posix() not in NOT_IN_NAV)


def test_mkdocs_build_strict_succeeds(tmp_path: Path) -> None:
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(MKDOCS_YML),
         "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (tmp_path / "site" / "index.html").is_file()
    assert (tmp_path / "site" / "routing" / "index.html").is_file()


def test_config_points_at_docs_and_an_ignored_site_dir() -> None:
    config = _config()
    assert config["docs_dir"] == "docs"
    assert config["strict"] is True
    site_dir = config["site_dir"]
    assert isinstance(site_dir, str)
    assert f"/{site_dir}/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()


def test_every_user_page_is_in_the_nav() -> None:
    nav = _nav_pages(_config()["nav"])
    assert len(nav) == len(set(nav)), f"a page is listed twice: {nav}"
    on_disk = {p.relative_to(DOCS).as_posix() for p in _user_pages()}
    assert sorted(on_disk - set(nav)) == [], "pages missing from mkdocs.yml's nav (orphans)"
    assert sorted(set(nav) - on_disk) == [], "nav entries without a page"


@pytest.mark.parametrize("page", _user_pages(), ids=lambda p: p.relative_to(DOCS).as_posix())
def test_user_page_cites_no_internal_reference(page: Path) -> None:
    assert internal_references(page.read_text(encoding="utf-8")) == []


def test_readme_cites_no_internal_reference() -> None:
    assert internal_references((ROOT / "README.md").read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("Targets missed (issue #8): 300 µs", ["a bare issue number: '#8'", "an issue number: 'issue #8'"]),
    ("everything of issues #9-#11 included", ["an issue number: 'issues #9'", "a bare issue number: '#11'"]),
    ("the first version (issue-13)", ["an issue number: 'issue-13'"]),
    ("fixed in the delivery log (#10).", ["a bare issue number: '#10'"]),
    ("goes to the classifier (field reports T21, T28)",
     ["a field-report id: 'T21'", "a field-report id: 'T28'", "a field report: 'field reports'"]),
    ("see platforms.md 4", ["the internal platform notes: 'platforms.md'"]),
    ("    cp -r ../shared/proxy-bench /tmp/x", ["the project's shared reference folder: '../shared'"]),
    ("at once (the proposal's open question 3)?",
     ["the proposal's open questions: 'open question'", "the proposal's open questions: 'the proposal'"]),
])
def test_internal_reference_patterns_catch_real_leaks(text: str, expected: list[str]) -> None:
    assert sorted(internal_references(text)) == sorted(expected)


@pytest.mark.parametrize("text", [
    "the dashboard at <http://127.0.0.1:9090/#token=local-demo-admin-token>",
    "a link with `#token=<token>` signs in the same way",
    "colours #fff, #1a2b3c and #333333 in a style sheet",
    "an HTML entity &#39; or &#8212;",
    "```sh\n# stop `make run` first (same ports)\n#0 t=1767600000 'Hi'\n```",
    "    #0 t=1767600000 'Hi, my invoice': billing (classified) -> support (default)",
    "see [Decision reasons](routing.md#decision-reasons) and [walkthrough](getting-started.md#a-5-minute-walkthrough)",
    "a T-shirt, TTL 30 min, T=\"Authorization\" in `T=\"x\"`, a Telegram update",
    "report an issue on the tracker; the issue is usually a missing secret",
])
def test_internal_reference_patterns_spare_legitimate_text(text: str) -> None:
    assert internal_references(text) == []
