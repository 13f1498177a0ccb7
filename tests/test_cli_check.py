"""`stickyroute check PATH`: exact output lines and exit codes (0 ok/warnings, 2 errors)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stickyroute.cli.main import main

REPO = Path(__file__).resolve().parent.parent
NO_SECRET = "no secret configured: anyone who knows the URL can post updates"
GOOD = """
[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["pull request"]

[channels.telegram]
default_agent = "coder"
secret_token = "s3cret"
"""
BROKEN = """
[server]
port = 0

[agents.coder]
url = "ftp://coder"

[channels.telegram]
default_agent = "nobody"

[channels.telegram.overrides]
auto_route = "sometimes"
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_valid_config_prints_ok_and_exits_0(tmp_path, capsys):
    path = write(tmp_path, GOOD)
    assert main(["check", path]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines() == ["ok: 1 agent, 1 channel"]
    assert captured.err == ""


def test_warnings_are_prefixed_and_exit_0(tmp_path, capsys):
    path = write(tmp_path, GOOD.replace('secret_token = "s3cret"\n', "") + """
[agents.writer]
url = "http://127.0.0.1:9104"

[channels.telegram.overrides]
auto_route = "sticky_heuristic"
""")
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"warning: {path}: channels.telegram.secret_token: {NO_SECRET}",
        f"warning: {path}: agents.writer.keywords: no keywords while channel telegram uses "
        "sticky_heuristic: the keyword gate never suggests this agent",
        "ok: 2 agents, 1 channel",
    ]


def test_errors_are_all_listed_then_warnings_and_exit_2(tmp_path, capsys):
    path = write(tmp_path, BROKEN)
    assert main(["check", path]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: server.port: must be between 1 and 65535, got 0",
        f'{path}: agents.coder.url: expected an http:// or https:// URL, got "ftp://coder"',
        f'{path}: channels.telegram.default_agent: no agent named "nobody"',
        f"{path}: channels.telegram.overrides.auto_route: expected one of off, explicit_only, "
        'sticky_ttl, sticky_heuristic; got "sometimes"',
        f"warning: {path}: channels.telegram.secret_token: {NO_SECRET}",
        "invalid: 4 errors, 1 warning",
    ]


def test_unreadable_file_exits_2(tmp_path, capsys):
    path = str(tmp_path / "missing.toml")
    assert main(["check", path]) == 2
    assert capsys.readouterr().out.splitlines() == [
        f"{path}: (file): cannot read file: No such file or directory",
        "invalid: 1 error, 0 warnings",
    ]


def test_unset_env_variable_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("STICKYROUTE_CHECK_UNSET", raising=False)
    path = write(tmp_path, GOOD.replace('"s3cret"', '"${STICKYROUTE_CHECK_UNSET}"'))
    assert main(["check", path]) == 2
    assert capsys.readouterr().out.splitlines()[0] == (
        f"{path}: channels.telegram.secret_token: environment variable "
        "STICKYROUTE_CHECK_UNSET is not set")


def test_check_without_path_reads_stickyroute_toml_or_says_what_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert capsys.readouterr().err == ("stickyroute check: no config to check: there is no ./stickyroute.toml here "
                                       "(`stickyroute init` writes one); or name it: stickyroute check PATH\n")
    (tmp_path / "stickyroute.toml").write_text(GOOD, encoding="utf-8")
    assert main(["check"]) == 0
    assert capsys.readouterr().out == "ok: 1 agent, 1 channel\n"


def test_every_command_is_registered(capsys):
    with pytest.raises(SystemExit) as caught:
        main(["--help"])
    assert caught.value.code == 0
    out = capsys.readouterr().out
    for command in ("check", "serve", "stats", "replay", "explain"):
        assert f"    {command} " in out, command


def test_console_script_checks_the_shipped_config():
    script = Path(sys.executable).parent / "stickyroute"
    result = subprocess.run([str(script), "check", "config/proxy.toml"], cwd=REPO, check=False,
                            capture_output=True, text=True, timeout=60)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.splitlines() == [
        f"warning: config/proxy.toml: channels.telegram.secret_token: {NO_SECRET}",
        f"warning: config/proxy.toml: channels.whatsapp.app_secret: {NO_SECRET}",
        "ok: 4 agents, 2 channels",
    ]
