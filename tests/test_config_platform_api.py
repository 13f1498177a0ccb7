"""The platform API keys of a channel (`bot_token`, `app_id`, `access_token`): used only by
`stickyroute webhook`, their `${VAR}`s resolved when it runs (never a load error), never in a repr;
and `${VAR}` in `[state] url` (the container reads `${REDIS_URL}`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config, load_config
from stickyroute.config.platform_api import PlatformApi, resolve

AGENT = '[agents.coder]\nurl = "http://127.0.0.1:9101"\nkeywords = ["pull request"]\n'
TOKEN = "123456789:AAE-secret_bot-token"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(AGENT + text, encoding="utf-8")
    return path


def errors(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    _config, problems = check_config(write(tmp_path, text), env=env or {})
    return [f"{p.key}: {p.message}" for p in problems if not p.warning]


def test_unset_variables_in_api_keys_wait_for_the_webhook_command(tmp_path):
    config = load_config(write(tmp_path, '[channels.telegram]\ndefault_agent = "coder"\nsecret_token = "s"\n'
                                         'bot_token = "${TELEGRAM_BOT_TOKEN}"\n'
                                         '[channels.whatsapp]\ndefault_agent = "coder"\napp_secret = "x"\n'
                                         'app_id = "${META_APP_ID}"\naccess_token = "${META_APP_TOKEN}"\n'), env={})
    assert config.channels["telegram"].api == PlatformApi(bot_token="${TELEGRAM_BOT_TOKEN}")
    assert config.channels["whatsapp"].api == PlatformApi(app_id="${META_APP_ID}", access_token="${META_APP_TOKEN}")
    assert resolve("${TELEGRAM_BOT_TOKEN}", {"TELEGRAM_BOT_TOKEN": TOKEN}) == (TOKEN, [])
    assert resolve("${META_APP_ID}|${META_APP_SECRET}", {"META_APP_ID": "1"}) == (None, ["META_APP_SECRET"])


def test_api_keys_never_appear_in_a_repr(tmp_path):
    config = load_config(write(tmp_path, f'[channels.telegram]\ndefault_agent = "coder"\nsecret_token = "s"\n'
                                         f'bot_token = "{TOKEN}"\n'), env={})
    assert config.channels["telegram"].api.bot_token == TOKEN
    assert TOKEN not in repr(config) and "AAE" not in repr(config.channels["telegram"])


@pytest.mark.parametrize(("text", "expected"), [
    ('[channels.telegram]\ndefault_agent = "coder"\nbot_token = "not a token"\n',
     ["channels.telegram.bot_token: expected <digits>:<letters, digits, _ and -> (or ${VAR})"]),
    ('[channels.whatsapp]\ndefault_agent = "coder"\nbot_token = "1:a"\napp_id = "my-app"\n',
     ["channels.whatsapp.bot_token: not a whatsapp setting (Telegram only)",
      "channels.whatsapp.app_id: expected digits (or ${VAR})"]),
    ('[channels.telegram]\ndefault_agent = "coder"\napp_id = "1"\naccess_token = "t"\n',
     ["channels.telegram.app_id: not a telegram setting (WhatsApp, Messenger and Instagram only)",
      "channels.telegram.access_token: not a telegram setting (WhatsApp, Messenger and Instagram only)"]),
], ids=["bot-token-shape", "whatsapp-foreign-and-app-id", "telegram-foreign"])
def test_api_key_errors_name_the_key(tmp_path, text, expected):
    assert errors(tmp_path, text) == expected


def test_the_state_url_reads_the_environment(tmp_path):
    text = ('[channels.telegram]\ndefault_agent = "coder"\nsecret_token = "s"\n'
            '[state]\nbackend = "redis"\nurl = "${REDIS_URL}"\n')
    config = load_config(write(tmp_path, text), env={"REDIS_URL": "redis://:pw@cache:6380/2"})
    assert (config.state.url, "pw" in repr(config.state)) == ("redis://:pw@cache:6380/2", False)
    assert errors(tmp_path, text) == ["state.url: environment variable REDIS_URL is not set"]
    assert errors(tmp_path, text, {"REDIS_URL": "http://cache"}) == [
        "state.url: expected a redis://, rediss:// or unix:// URL, got scheme 'http'"]
