"""`stickyroute init [DIR]`: a starter config that passes `check` with the variables it names, the
rule packs it references beside it, the next steps; `serve` without `--config` finds
./stickyroute.toml or says exactly what to do."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from stickyroute.cli.main import main
from stickyroute.cli.serve import NO_CONFIG
from stickyroute.config import check_config
from stickyroute.config.rulepack import shipped_rules_dir
from stickyroute.starter import CHANNEL_TEMPLATES
from tests.proxy.harness import telegram_text
from tests.redis_server import free_port

ROOT = Path(__file__).resolve().parent.parent
GUARD_S = 20.0
ENV = {"STICKYROUTE_ADMIN_TOKEN": "init-admin-token-0123456789", "TELEGRAM_SECRET_TOKEN": "tg-secret",
       "TELEGRAM_BOT_TOKEN": "123:abc", "WHATSAPP_APP_SECRET": "wa-secret", "WHATSAPP_VERIFY_TOKEN": "wa-verify",
       "META_APP_ID": "42"}


def test_init_writes_a_config_that_checks_and_the_rule_packs_it_uses(tmp_path, capsys):
    folder = tmp_path / "bot"
    assert main(["init", str(folder), "--channel", "telegram", "--channel", "whatsapp"]) == 0
    out = capsys.readouterr().out.splitlines()
    config, problems = check_config(folder / "stickyroute.toml", env=ENV)
    assert config is not None and [str(p) for p in problems] == []
    assert list(config.channels) == ["telegram", "whatsapp"] and list(config.agents) == ["support", "coder"]
    assert {c.name: (c.paths, c.default_agent) for c in config.channels.values()} == {
        "telegram": (("/telegram",), "support"), "whatsapp": (("/whatsapp",), "support")}
    assert config.admin.token == ENV["STICKYROUTE_ADMIN_TOKEN"]
    assert config.channels["telegram"].api.bot_token == "${TELEGRAM_BOT_TOKEN}"  # read by `webhook` only
    for pack in ("support", "coder"):
        assert (folder / "rules" / f"{pack}.toml").read_text() == (shipped_rules_dir() / f"{pack}.toml").read_text()
    assert out[:4] == [f"wrote {folder / 'stickyroute.toml'}", f"wrote {folder / 'rules' / 'support.toml'}",
                       f"wrote {folder / 'rules' / 'coder.toml'}", ""]
    text = (folder / "stickyroute.toml").read_text()
    named = set(re.findall(r"export (\w+)=", "\n".join(out)))
    assert named == set(re.findall(r"^[^#\n]*\$\{(\w+)\}", text, re.MULTILINE)) == set(ENV)
    assert f"  3. stickyroute check {folder / 'stickyroute.toml'}" in out
    assert (f"       stickyroute webhook set telegram --config {folder / 'stickyroute.toml'} --url "
            "https://<your host>/telegram") in out


def test_a_copied_init_folder_keeps_working(tmp_path, capsys):
    assert main(["init", str(tmp_path / "one")]) == 0
    shutil.copytree(tmp_path / "one", tmp_path / "elsewhere" / "two")
    config, problems = check_config(tmp_path / "elsewhere" / "two" / "stickyroute.toml", env=ENV)
    assert config is not None and [p for p in problems if not p.warning] == []
    assert config.agents["coder"].keywords  # from rules/coder.toml beside the copy


def test_init_never_overwrites_without_force(tmp_path, capsys):
    assert main(["init", str(tmp_path)]) == 0
    (tmp_path / "stickyroute.toml").write_text("# mine\n")
    capsys.readouterr()
    assert main(["init", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"stickyroute init: {tmp_path / 'stickyroute.toml'}, "
                                       f"{tmp_path / 'rules' / 'support.toml'}, {tmp_path / 'rules' / 'coder.toml'} "
                                       "already exist(s): nothing written (--force overwrites)\n")
    assert (tmp_path / "stickyroute.toml").read_text() == "# mine\n"
    assert main(["init", str(tmp_path), "--force"]) == 0
    assert "[channels.telegram]" in (tmp_path / "stickyroute.toml").read_text()


def test_init_refuses_a_channel_without_a_template_and_a_bad_agent_name(tmp_path, capsys):
    assert main(["init", str(tmp_path), "--channel", "telegram", "--channel", "carrier-pigeon"]) == 2
    assert capsys.readouterr().err == ("stickyroute init: no starter template for channel carrier-pigeon (templates: "
                                       f"{', '.join(CHANNEL_TEMPLATES)})\n")
    assert main(["init", str(tmp_path), "--agent", "Billing"]) == 2
    assert capsys.readouterr().err == ("stickyroute init: Billing: an agent name is lowercase letters, digits, - or _ "
                                       "(not auto or none)\n")
    assert list(tmp_path.iterdir()) == []


def test_init_agents_without_a_pack_get_keyword_placeholders(tmp_path, capsys):
    assert main(["init", str(tmp_path), "--agent", "concierge", "--agent", "coder"]) == 0
    config, problems = check_config(tmp_path / "stickyroute.toml", env=ENV)
    assert config is not None and [p for p in problems if not p.warning] == []
    assert config.agents["concierge"].keywords == ("a distinctive phrase", "another one")
    assert sorted(p.name for p in (tmp_path / "rules").iterdir()) == ["coder.toml"]


def test_serve_without_a_config_says_exactly_what_to_do(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["serve"]) == 2
    assert capsys.readouterr().err == NO_CONFIG + "\n"
    assert NO_CONFIG.splitlines()[1:] == [
        "  stickyroute init                 write a starter ./stickyroute.toml (and the rule packs it uses) in this "
        "folder,", "                                   then edit it and run `stickyroute serve` again, or",
        "  stickyroute serve --config PATH  serve the config at PATH."]


def test_serve_finds_the_init_config_in_the_current_folder_and_routes_to_a_demo_agent(tmp_path, capsys):
    assert main(["init", str(tmp_path)]) == 0
    config = tmp_path / "stickyroute.toml"
    for placeholder in ("9101", "9102"):  # free ports for this test's demo agents
        config.write_text(config.read_text().replace(f"127.0.0.1:{placeholder}", f"127.0.0.1:{free_port()}"))
    port, admin = free_port(), free_port()
    process = subprocess.Popen([sys.executable, "-m", "stickyroute", "serve", "--demo-agents", "--port", str(port),
                                "--admin-port", str(admin)], cwd=tmp_path, env={**os.environ, **ENV},
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + GUARD_S
        while True:
            assert process.poll() is None and time.monotonic() < deadline, "serve did not come up"
            try:
                if httpx.get(f"http://127.0.0.1:{admin}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.05)
        reply = httpx.post(f"http://127.0.0.1:{port}/telegram", content=telegram_text(1, "refactor my python code"),
                           headers={"content-type": "application/json",
                                    "x-telegram-bot-api-secret-token": ENV["TELEGRAM_SECRET_TOKEN"]}, timeout=GUARD_S)
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        output = process.communicate(timeout=GUARD_S)[0].decode()
    assert (reply.status_code, reply.json()) == (200, {"ok": True, "agent": "coder"})  # the demo agent answered
    assert "started: config stickyroute.toml hash" in output


VALID = {"DISCORD_PUBLIC_KEY": "ab" * 32}
"""Values a platform checks the shape of (the others take any string)."""


def test_every_channel_template_makes_a_config_that_checks(tmp_path, capsys):
    every = list(CHANNEL_TEMPLATES)
    args = ["init", str(tmp_path)] + [arg for channel in every for arg in ("--channel", channel)]
    assert main(args) == 0
    out = capsys.readouterr().out
    named = re.findall(r"export (\w+)=", out)
    assert len(named) == len(set(named))  # a variable two channels share (META_APP_ID) is listed once
    env = {name: VALID.get(name, f"value-of-{name.lower()}") for name in named}
    config, problems = check_config(tmp_path / "stickyroute.toml", env=env)
    assert config is not None and [str(p) for p in problems] == []
    assert [c.type.value for c in config.channels.values()] == every
