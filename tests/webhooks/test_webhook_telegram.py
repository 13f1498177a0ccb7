"""`stickyroute webhook set|info|delete` for Telegram against a fake Bot API on 127.0.0.1: the
exact calls (url, secret_token, allowed_updates, max_connections, drop_pending_updates), the exact
lines printed, the errors, and the bot token never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.channels.telegram import KNOWN_KINDS
from stickyroute.cli.main import main
from tests.webhooks.fakes import fake_telegram

TOKEN = "123456789:AAE-fake_bot_token-0123456789"
SECRET = "telegram-secret_0123"
URL = "https://bots.example.com/telegram"


def write(tmp_path: Path, extra: str = "", agent: str = "") -> Path:
    path = tmp_path / "stickyroute.toml"
    path.write_text(f'[agents.coder]\nurl = "http://127.0.0.1:9\"\nkeywords = ["python"]\n{agent}\n'
                    '[channels.telegram]\ndefault_agent = "coder"\n'
                    f'secret_token = "{SECRET}"\nbot_token = "${{TELEGRAM_BOT_TOKEN}}"\n{extra}', encoding="utf-8")
    return path


@pytest.fixture
def token_env(monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)


def run(capsys, *args: str) -> tuple[int, list[str], list[str]]:
    code = main(["webhook", *args])
    out, err = capsys.readouterr()
    assert TOKEN not in out + err and "AAE-fake" not in out + err and SECRET not in out + err
    return code, out.splitlines(), err.splitlines()


def test_set_registers_the_channels_secret_the_routed_kinds_and_the_default_connections(tmp_path, capsys, token_env):
    config = write(tmp_path)
    with fake_telegram(TOKEN) as bot:
        code, out, err = run(capsys, "set", "telegram", "--config", str(config), "--url", URL, "--api-base", bot.url)
    assert (code, err) == (0, [])
    assert bot.calls == [("setWebhook", {"url": URL, "allowed_updates": list(KNOWN_KINDS), "max_connections": 40,
                                         "drop_pending_updates": False, "secret_token": SECRET})]
    assert out == [f"channel telegram: Telegram webhook set to {URL}",
                   "  secret_token: channels.telegram.secret_token (checked on every update)",
                   f"  allowed_updates: {', '.join(KNOWN_KINDS)}",
                   "  max_connections: 40",
                   "  pending updates: kept",
                   "next: stickyroute webhook info telegram (pending updates, the last delivery error)"]
    assert {"chat_member", "message_reaction", "message_reaction_count", "callback_query"} <= set(KNOWN_KINDS)


def test_set_with_options_and_a_small_agent_pool(tmp_path, capsys, token_env):
    config = write(tmp_path, agent="max_connections = 8")
    with fake_telegram(TOKEN) as bot:
        default = run(capsys, "set", "telegram", "--config", str(config), "--url", URL, "--api-base", bot.url)
        chosen = run(capsys, "set", "telegram", "--config", str(config), "--url", "https://h.example/other",
                     "--api-base", bot.url, "--max-connections", "5", "--drop-pending-updates",
                     "--allowed-updates", "message,callback_query")
    assert (default[0], chosen[0]) == (0, 0)
    assert [call[1]["max_connections"] for call in bot.calls] == [8, 5]
    assert bot.calls[1][1] == {"url": "https://h.example/other", "allowed_updates": ["message", "callback_query"],
                               "max_connections": 5, "drop_pending_updates": True, "secret_token": SECRET}
    assert chosen[1][4:6] == ["  pending updates: dropped", "warning: the URL's path /other is not a path of channel "
                              "telegram (/telegram): stickyroute answers it 404 unless a proxy in front rewrites the path"]


def test_info_shows_pending_updates_and_the_last_error(tmp_path, capsys, token_env):
    config = write(tmp_path)
    with fake_telegram(TOKEN) as bot:
        bot.webhook.update(url=URL, pending_update_count=3, last_error_date=1_796_112_043,
                           last_error_message="Wrong response from the webhook: 502 Bad Gateway", max_connections=40,
                           allowed_updates=["message"], ip_address="203.0.113.7")
        code, out, err = run(capsys, "info", "telegram", "--config", str(config), "--api-base", bot.url)
        bot.webhook.update(url="", pending_update_count=0)
        none = run(capsys, "info", "telegram", "--config", str(config), "--api-base", bot.url)
    assert (code, err) == (0, [])
    assert out == [f"channel telegram: Telegram webhook {URL}", "  pending updates: 3",
                   "  last error: 2026-12-01 08:00:43 UTC: Wrong response from the webhook: 502 Bad Gateway",
                   "  max_connections: 40", "  allowed_updates: message", "  ip address: 203.0.113.7"]
    assert none[1] == ["channel telegram: no webhook is set (Telegram keeps the updates for getUpdates)",
                       "  pending updates: 0"]


def test_delete_drops_pending_updates_when_asked(tmp_path, capsys, token_env):
    config = write(tmp_path)
    with fake_telegram(TOKEN) as bot:
        code, out, _err = run(capsys, "delete", "telegram", "--config", str(config), "--api-base", bot.url,
                              "--drop-pending-updates")
    assert (code, out, bot.calls) == (0, ["channel telegram: Telegram webhook deleted (pending updates dropped)"],
                                      [("deleteWebhook", {"drop_pending_updates": True})])


def test_a_refused_token_says_so_without_printing_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    config = write(tmp_path)
    with fake_telegram("987:another-bot") as bot:
        code, out, err = run(capsys, "set", "telegram", "--config", str(config), "--url", URL, "--api-base", bot.url)
    assert (code, out, err) == (1, [], ["stickyroute webhook set: Telegram refused setWebhook: 401 Unauthorized (check "
                                        "channels.telegram.bot_token: Telegram does not know this token)"])


def test_the_platforms_own_refusal_is_printed(tmp_path, capsys, token_env):
    config = write(tmp_path)
    with fake_telegram(TOKEN) as bot:
        code, _out, err = run(capsys, "set", "telegram", "--config", str(config), "--url", "http://plain.example/t",
                              "--api-base", bot.url)
    assert (code, err) == (1, ["stickyroute webhook set: Telegram refused setWebhook: 400 Bad Request: bad webhook: "
                               "An HTTPS URL must be provided for webhook"])


def test_an_unset_token_variable_names_the_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("TELEGRAM_BOT_TOKEN", raising=False)
    config = write(tmp_path)
    code, out, err = run(capsys, "info", "telegram", "--config", str(config), "--api-base", "http://127.0.0.1:9")
    assert (code, out, err) == (2, [], [f"{config}: channels.telegram.bot_token: environment variable "
                                        "TELEGRAM_BOT_TOKEN is not set"])


def test_an_unreachable_api_never_shows_the_token(tmp_path, capsys, token_env):
    from tests.redis_server import free_port

    base = f"http://127.0.0.1:{free_port()}"
    code, _out, err = run(capsys, "info", "telegram", "--config", str(write(tmp_path)), "--api-base", base)
    assert code == 1 and err[0].startswith(f"stickyroute webhook info: cannot reach the Telegram Bot API at {base}: "
                                           "ConnectError")


def test_an_unknown_channel_lists_the_configured_ones(tmp_path, capsys, token_env):
    code, _out, err = run(capsys, "info", "whatsapp", "--config", str(write(tmp_path)))
    assert (code, err) == (2, [f"stickyroute webhook: no channel 'whatsapp' in {tmp_path / 'stickyroute.toml'} "
                               "(channels: telegram)"])
