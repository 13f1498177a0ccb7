"""Config of the Slack, Discord, LINE, Messenger and Instagram channels: their keys, the other
platforms' keys refused by name, missing secrets warned (`stickyroute check`), per-channel
`[channels.<name>.upstream]` deadlines."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.config import check_config
from stickyroute.config.model import ChannelType, UpstreamSettings

AGENTS = """
[agents.general]
url = "http://127.0.0.1:9101"

[agents.billing]
url = "http://127.0.0.1:9102"
"""
NO_SECRET = "no secret configured: anyone who knows the URL can post updates"
KEY = "8a88e3dd7409f195fd52db2d3cba5d72ca6709bf1d94121bf3748801b40f6f5c"
FULL = f"""{AGENTS}
[channels.slack]
type = "slack"
signing_secret = "${{SLACK_SIGNING_SECRET}}"

[channels.discord]
type = "discord"
public_key = "${{DISCORD_PUBLIC_KEY}}"

[channels.line]
type = "line"
channel_secret = "${{LINE_CHANNEL_SECRET}}"

[channels.messenger]
type = "messenger"
app_secret = "${{META_APP_SECRET}}"
verify_token = "${{META_VERIFY_TOKEN}}"

[channels.instagram]
type = "instagram"
app_secret = "${{META_APP_SECRET}}"
verify_token = "${{META_VERIFY_TOKEN}}"
"""
ENV = {"SLACK_SIGNING_SECRET": "s1", "DISCORD_PUBLIC_KEY": KEY.upper(), "LINE_CHANNEL_SECRET": "l1",
       "META_APP_SECRET": "m1", "META_VERIFY_TOKEN": "v1"}


def run(tmp_path: Path, text: str, env: dict[str, str] | None = None):
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    config, problems = check_config(path, env=ENV if env is None else env)
    return config, [f"{'warning: ' if p.warning else ''}{p.key}: {p.message}" for p in problems]


def test_the_issue_config_loads_with_every_key_where_it_belongs(tmp_path):
    config, problems = run(tmp_path, FULL)
    assert config is None
    assert problems == [f"channels.{n}.default_agent: is required" for n in
                        ("slack", "discord", "line", "messenger", "instagram")]
    text = FULL.replace('type = "', 'default_agent = "general"\ntype = "')
    config, problems = run(tmp_path, text)
    assert problems == []
    assert config is not None
    channels = config.channels
    assert [channels[n].type for n in channels] == [ChannelType.SLACK, ChannelType.DISCORD, ChannelType.LINE,
                                                    ChannelType.MESSENGER, ChannelType.INSTAGRAM]
    assert channels["slack"].signing_secret == "s1"
    assert channels["discord"].public_key == KEY
    assert channels["line"].channel_secret == "l1"
    assert (channels["messenger"].app_secret, channels["instagram"].verify_token) == ("m1", "v1")
    assert [channels[n].paths for n in channels] == [(f"/{n}",) for n in channels]
    assert "s1" not in repr(channels["slack"]) and KEY not in repr(channels["discord"])


def channel(kind: str, body: str = "", name: str | None = None) -> str:
    return f'{AGENTS}\n[channels.{name or kind}]\ntype = "{kind}"\ndefault_agent = "general"\n{body}\n'


@pytest.mark.parametrize(("text", "expected"), [
    pytest.param(channel("slack", 'app_secret = "x"\nsecret_token = "y"\npublic_key = "z"\n'),
                 ["channels.slack.secret_token: not a slack setting (Telegram only)",
                  "channels.slack.app_secret: not a slack setting (WhatsApp, Messenger and Instagram only)",
                  "channels.slack.public_key: not a slack setting (Discord only)",
                  f"warning: channels.slack.signing_secret: {NO_SECRET}"], id="slack-foreign-keys"),
    pytest.param(channel("discord", 'public_key = "abc"\n'),
                 ["channels.discord.public_key: expected the application's Ed25519 public key as 64 hex digits "
                  "(Discord Developer Portal, General Information)"], id="discord-key-not-hex"),
    pytest.param(channel("discord", f'public_key = "{KEY}0"\n'),
                 ["channels.discord.public_key: expected the application's Ed25519 public key as 64 hex digits "
                  "(Discord Developer Portal, General Information)"], id="discord-key-too-long"),
    pytest.param(channel("line", 'signing_secret = "x"\nchannel_secret = ""\n'),
                 ["channels.line.signing_secret: not a line setting (Slack only)",
                  "channels.line.channel_secret: must not be empty"], id="line-foreign-and-empty"),
    pytest.param(channel("messenger", 'channel_secret = "x"\napp_secret = "a"\n'),
                 ["channels.messenger.channel_secret: not a messenger setting (LINE only)"], id="messenger-foreign"),
    pytest.param(channel("instagram", 'app_secret = "a"\n[[channels.instagram.thread_routes]]\n'
                                      'chat = "1"\nthread = "2"\nagent = "billing"\n'),
                 ["channels.instagram.thread_routes: not a instagram setting "
                  "(Telegram forum topics, Slack and Discord threads only)"], id="instagram-no-threads"),
    pytest.param(channel("telegram", 'secret_token = "s"\nchannel_secret = "x"\n'),
                 ["channels.telegram.channel_secret: not a telegram setting (LINE only)"], id="telegram-foreign"),
    pytest.param(channel("slack", 'signing_secret = "s"\n[channels.slack.upstream]\ntimeout_s = 0\n'
                                  'max_connections = 4\n'),
                 ['channels.slack.upstream.max_connections: unknown key (did you mean "connect_timeout_s"?)',
                  "channels.slack.upstream.timeout_s: must be > 0, got 0"], id="upstream-keys"),
])
def test_platform_keys_are_checked_by_dotted_key(tmp_path, text, expected):
    config, problems = run(tmp_path, text)
    assert problems == expected
    assert (config is None) == any(not p.startswith("warning") for p in problems)


@pytest.mark.parametrize(("kind", "secret"), [("slack", "signing_secret"), ("discord", "public_key"),
                                              ("line", "channel_secret"), ("messenger", "app_secret"),
                                              ("instagram", "app_secret")])
def test_a_missing_secret_warns_and_the_channel_still_loads(tmp_path, kind, secret):
    config, problems = run(tmp_path, channel(kind))
    assert config is not None
    assert problems == [f"warning: channels.{kind}.{secret}: {NO_SECRET}"]


def test_thread_routes_exist_on_slack_and_discord(tmp_path):
    text = channel("slack", 'signing_secret = "s"\n[[channels.slack.thread_routes]]\nchat = "C1"\n'
                            'thread = "1767600100.000200"\nagent = "billing"\n')
    config, problems = run(tmp_path, text)
    assert problems == [] and config is not None
    assert [(t.chat, t.thread, t.agent) for t in config.channels["slack"].thread_routes] == [
        ("C1", "1767600100.000200", "billing")]


def test_a_channels_upstream_deadlines_merge_over_the_global_ones(tmp_path):
    text = ("[upstream]\nconnect_timeout_s = 1.0\ntimeout_s = 20.0\nlate_answer_s = 30.0\n"
            + channel("slack", 'signing_secret = "s"\n[channels.slack.upstream]\ntimeout_s = 2.5\n')
            + '[channels.line]\ndefault_agent = "general"\nchannel_secret = "l"\n')
    config, problems = run(tmp_path, text)
    assert problems == [] and config is not None
    assert config.channels["slack"].upstream == UpstreamSettings(connect_timeout_s=1.0, timeout_s=2.5,
                                                                 late_answer_s=30.0)
    assert config.channels["line"].upstream is None


def test_stickyroute_check_prints_the_new_channels_problems(tmp_path, capsys, monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    path = tmp_path / "proxy.toml"
    path.write_text(FULL.replace('type = "', 'default_agent = "general"\ntype = "')
                    .replace('signing_secret = "${SLACK_SIGNING_SECRET}"\n', ""), encoding="utf-8")
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"warning: {path}: channels.slack.signing_secret: {NO_SECRET}", "ok: 2 agents, 5 channels"]
    monkeypatch.setenv("DISCORD_PUBLIC_KEY", "not-a-key")
    assert main(["check", str(path)]) == 2
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{path}: channels.discord.public_key: expected the application's Ed25519 public key")
