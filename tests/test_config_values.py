"""Valid configs -> exact Config values: defaults, precedence, merging, ids, the shipped file."""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType

import pytest

from stickyroute.config import (
    DEFAULT_ACKNOWLEDGEMENTS,
    AdminSettings,
    Agent,
    Binding,
    Channel,
    ChannelType,
    ClassifierSettings,
    RoutingSettings,
    ServerSettings,
    Strategy,
    ThreadRoute,
    UpstreamSettings,
    check_config,
    load_config,
    load_rule_pack,
)
from stickyroute.config.rulepack import shipped_packs

REPO = Path(__file__).resolve().parent.parent
MINIMAL = """
[agents.support]
url = "http://127.0.0.1:9102"

[channels.telegram]
default_agent = "support"
"""


def load(tmp_path: Path, text: str, files: dict[str, str] | None = None,
         name: str = "proxy.toml", env: dict[str, str] | None = None):
    for rel, content in (files or {}).items():
        target = tmp_path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return load_config(path, env=env or {})


def test_minimal_config_uses_code_defaults(tmp_path):
    config = load(tmp_path, MINIMAL)
    assert config.path == str(tmp_path / "proxy.toml")
    assert config.server == ServerSettings()
    assert config.admin == AdminSettings(host="127.0.0.1", port=9090)
    assert config.upstream == UpstreamSettings(connect_timeout_s=5.0, timeout_s=30.0,
                                               max_connections=100)
    assert config.routing == RoutingSettings()
    assert config.classifier == ClassifierSettings()
    assert config.server.max_body_bytes == 5 * 1024 * 1024
    assert dict(config.agents) == {"support": Agent(name="support", url="http://127.0.0.1:9102")}
    assert dict(config.channels) == {"telegram": Channel(
        name="telegram", type=ChannelType.TELEGRAM, paths=("/telegram",),
        default_agent="support", routing=RoutingSettings(strategy=Strategy.OFF))}
    assert isinstance(config.agents, MappingProxyType)
    assert isinstance(config.channels, MappingProxyType)


def test_server_values_and_trusted_proxies_normalised(tmp_path):
    config = load(tmp_path, MINIMAL + """
[server]
host = "0.0.0.0"
port = 8443
max_body_bytes = 1024
trusted_proxies = ["10.1.2.3/8", "2001:db8::1/32", "192.168.0.7"]

[admin]
host = "::1"
port = 9999

[upstream]
connect_timeout_s = 1
timeout_s = 2.5
max_connections = 7
""")
    assert config.server == ServerSettings(
        host="0.0.0.0", port=8443, max_body_bytes=1024,
        trusted_proxies=("10.0.0.0/8", "2001:db8::/32", "192.168.0.7/32"))
    assert config.admin == AdminSettings(host="::1", port=9999)
    assert config.upstream == UpstreamSettings(connect_timeout_s=1.0, timeout_s=2.5,
                                               max_connections=7)


def test_ssl_files_are_resolved_relative_to_the_config_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = load(tmp_path, MINIMAL + '[server]\nssl_certfile = "certs/c.pem"\n'
                  'ssl_keyfile = "certs/k.pem"\n',
                  files={"etc/certs/c.pem": "cert", "etc/certs/k.pem": "key"},
                  name="etc/proxy.toml")
    assert config.server.ssl_certfile == str(tmp_path / "etc/certs/c.pem")
    assert config.server.ssl_keyfile == str(tmp_path / "etc/certs/k.pem")


def test_classifier_values(tmp_path):
    config = load(tmp_path, MINIMAL + """
[classifier]
provider = "groq"
model = "llama-3.3-70b-versatile"
timeout_s = 1
api_key_env = "MY_GROQ_KEY"
base_url = "http://127.0.0.1:8000/openai/v1"
context_messages = 2
max_tokens = 4
calls_per_minute = 30
breaker_failures = 3
breaker_cooldown_s = 10
""", env={"MY_GROQ_KEY": "gsk_test"})  # groq needs its key in the environment
    assert config.classifier == ClassifierSettings(
        provider="groq", model="llama-3.3-70b-versatile", timeout_s=1.0,
        api_key_env="MY_GROQ_KEY", base_url="http://127.0.0.1:8000/openai/v1",
        context_messages=2, max_tokens=4, calls_per_minute=30.0, breaker_failures=3,
        breaker_cooldown_s=10.0)


def test_routing_precedence_code_defaults_then_routing_then_overrides(tmp_path):
    config = load(tmp_path, MINIMAL + """
[routing]
short_message_chars = 20
acknowledgements = ["ok", "merci"]
strong_weight = 5
max_conversations = 500
auto_route = "explicit_only"
auto_route_ttl_minutes = 10

[channels.telegram.overrides]
auto_route = "sticky_heuristic"
strong_weight = 7
log_text = true
auto_route_confidence_threshold = 9
auto_route_sticky_bonus = 3
auto_route_divergence_count = 3
auto_route_explicit_pin = false
auto_route_first_message_margin = 6
auto_route_early_confirm_margin = 4
auto_route_keyword_switch_margin = 8
auto_route_contest_confirm = true

[channels.whatsapp]
default_agent = "support"
""")
    global_routing = RoutingSettings(
        strategy=Strategy.EXPLICIT_ONLY, ttl_s=600.0, short_message_chars=20,
        acknowledgements=("ok", "merci"), strong_weight=5, max_conversations=500)
    assert config.routing == global_routing
    assert config.channels["whatsapp"].routing == global_routing
    assert config.channels["telegram"].routing == RoutingSettings(
        strategy=Strategy.STICKY_HEURISTIC, ttl_s=600.0, confidence_threshold=9, sticky_bonus=3,
        divergence_count=3, explicit_pin=False, short_message_chars=20,
        acknowledgements=("ok", "merci"), strong_weight=7, weak_weight=1,
        max_conversations=500, log_text=True, first_message_margin=6, early_confirm_margin=4,
        keyword_switch_margin=8, contest_confirm=True)


def test_ttl_minutes_may_be_fractional(tmp_path):
    config = load(tmp_path, MINIMAL + "[routing]\nauto_route_ttl_minutes = 0.5\n")
    assert config.routing.ttl_s == 30.0


def test_channel_type_paths_and_telegram_settings(tmp_path):
    config = load(tmp_path, """
[agents.support]
url = "http://127.0.0.1:9102"

[channels.telegram]
default_agent = "support"
secret_token = "Abc_123-x"
bot_username = "@Demo_Bot"

[channels.support-bot]
type = "telegram"
paths = ["/tg/a", "/tg/b"]
default_agent = "support"
bot_username = "Other_bot"

[channels.meta]
type = "whatsapp"
path = "/hooks/wa"
default_agent = "support"
app_secret = "app-secret"
verify_token = "verify-me"
""")
    telegram, second, meta = config.channels.values()
    assert (telegram.type, telegram.paths, telegram.bot_username, telegram.secret_token) == (
        ChannelType.TELEGRAM, ("/telegram",), "Demo_Bot", "Abc_123-x")
    assert (second.type, second.paths, second.bot_username) == (
        ChannelType.TELEGRAM, ("/tg/a", "/tg/b"), "Other_bot")
    assert (meta.type, meta.paths, meta.app_secret, meta.verify_token) == (
        ChannelType.WHATSAPP, ("/hooks/wa",), "app-secret", "verify-me")
    assert config.channel_for_path("/tg/b") is second
    assert config.channel_for_path("/tg") is None
    assert "Abc_123-x" not in repr(telegram)
    assert "app-secret" not in repr(meta) and "verify-me" not in repr(meta)


def test_binding_and_thread_route_ids_are_normalised(tmp_path):
    config = load(tmp_path, MINIMAL + """
[agents.coder]
url = "http://127.0.0.1:9101"

[[channels.telegram.bindings]]
user = 111
agent = "coder"

[[channels.telegram.bindings]]
user = "+15550100187"
agent = "support"

[[channels.telegram.bindings]]
chat = -1001000000099
agent = "coder"

[[channels.telegram.bindings]]
user = " US.10000000000000000001 "
agent = "coder"

[[channels.telegram.thread_routes]]
chat = -1001000000001
thread = 558
agent = "coder"
""")
    channel = config.channels["telegram"]
    assert channel.bindings == (
        Binding(agent="coder", user="111"),
        Binding(agent="support", user="15550100187"),
        Binding(agent="coder", chat="-1001000000099"),
        Binding(agent="coder", user="US.10000000000000000001"),
    )
    assert channel.thread_routes == (ThreadRoute(chat="-1001000000001", thread="558",
                                                 agent="coder"),)


def test_same_id_as_user_and_as_chat_is_not_a_duplicate(tmp_path):
    config = load(tmp_path, MINIMAL + '[[channels.telegram.bindings]]\nuser = "5"\n'
                  'agent = "support"\n[[channels.telegram.bindings]]\nchat = "5"\n'
                  'agent = "support"\n')
    assert len(config.channels["telegram"].bindings) == 2


def test_agent_channel_urls_description_and_aliases(tmp_path):
    config = load(tmp_path, MINIMAL.replace('url = "http://127.0.0.1:9102"', """\
url = "http://127.0.0.1:9102"
description = "Helps customers."
aliases = ["HelpDesk", "desk", "helpdesk", "support"]

[agents.support.channels]
telegram = "https://agents.internal/support/tg"
"""))
    agent = config.agents["support"]
    assert agent.description == "Helps customers."
    assert agent.aliases == ("helpdesk", "desk")
    assert dict(agent.channel_urls) == {"telegram": "https://agents.internal/support/tg"}


PACK = """
description = "Pack description."
aliases = ["dev", "Programmer"]
keywords = ["Pull Request", "code review", "regex"]
weak_keywords = ["code", "REGEX", "function"]
"""


def test_rule_pack_is_merged_after_the_agents_own_lists(tmp_path):
    config = load(tmp_path, """
[agents.coder]
url = "http://127.0.0.1:9101"
aliases = ["dev", "hacker"]
keywords = ["pull request", "unit test"]
weak_keywords = ["Function", "script", "unit test"]
rules = "packs/coder.toml"

[channels.telegram]
default_agent = "coder"
""", files={"packs/coder.toml": PACK})
    assert config.agents["coder"] == Agent(
        name="coder", url="http://127.0.0.1:9101", description="Pack description.",
        aliases=("dev", "hacker", "programmer"),
        keywords=("pull request", "unit test", "code review", "regex"),
        weak_keywords=("Function", "script", "code"))


def test_agents_own_description_wins_over_the_packs(tmp_path):
    config = load(tmp_path, MINIMAL.replace(
        'url = "http://127.0.0.1:9102"',
        'url = "http://127.0.0.1:9102"\ndescription = "Mine."\nrules = "coder.toml"'),
        files={"coder.toml": PACK})
    assert config.agents["support"].description == "Mine."


def test_rules_path_is_relative_to_the_config_file_not_the_cwd(tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    text = MINIMAL.replace('url = "http://127.0.0.1:9102"',
                           'url = "http://127.0.0.1:9102"\nrules = "../rules/pack.toml"')
    config = load(tmp_path, text, files={"rules/pack.toml": PACK}, name="config/proxy.toml")
    assert config.agents["support"].keywords == ("Pull Request", "code review", "regex")


def test_load_config_logs_warnings(tmp_path, caplog):
    caplog.set_level("WARNING", logger="stickyroute.config")
    load(tmp_path, MINIMAL)
    assert [r.getMessage() for r in caplog.records] == [
        f"config warning: {tmp_path / 'proxy.toml'}: channels.telegram.secret_token: "
        "no secret configured: anyone who knows the URL can post updates"]


def test_builtin_rule_packs_are_found_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    copied = tmp_path / "anywhere" / "proxy.toml"
    copied.parent.mkdir()
    copied.write_text((REPO / "config" / "proxy.toml").read_text(encoding="utf-8"), encoding="utf-8")
    config = load_config(copied, env={})
    assert config.agents["coder"].keywords == load_rule_pack(REPO / "stickyroute" / "rules" / "coder.toml").keywords
    assert shipped_packs() == ("billing", "coder", "debugger", "devops", "researcher", "sales", "support", "travel",
                               "writer")


# ---- the shipped config/proxy.toml ----------------------------------------------------------


@pytest.fixture(scope="module")
def shipped():
    return load_config(REPO / "config" / "proxy.toml", env={})


def test_shipped_config_settings(shipped):
    assert shipped.server == ServerSettings(host="127.0.0.1", port=8080,
                                            max_body_bytes=5 * 1024 * 1024,
                                            trusted_proxies=("127.0.0.0/8", "::1/128"))
    assert shipped.admin == AdminSettings(host="127.0.0.1", port=9090, token="local-demo-admin-token")
    assert shipped.upstream == UpstreamSettings(connect_timeout_s=5.0, timeout_s=30.0,
                                                max_connections=100)
    assert shipped.routing == RoutingSettings(acknowledgements=DEFAULT_ACKNOWLEDGEMENTS)
    assert shipped.classifier == ClassifierSettings(provider="auto")


def test_shipped_config_agents(shipped):
    assert {name: (a.url, a.aliases) for name, a in shipped.agents.items()} == {
        "coder": ("http://127.0.0.1:9101", ("dev",)),
        "support": ("http://127.0.0.1:9102", ("helpdesk",)),
        "ops": ("http://127.0.0.1:9103", ("devops", "sre")),
        "writer": ("http://127.0.0.1:9104", ("editor",)),
    }
    packs = {"coder": "coder", "support": "support", "ops": "devops", "writer": "writer"}
    for name, pack in packs.items():
        pack_keywords = load_rule_pack(REPO / "stickyroute" / "rules" / f"{pack}.toml").keywords
        assert set(pack_keywords) <= set(shipped.agents[name].keywords), name
    assert shipped.agents["support"].keywords[:3] == ("invoice", "refund", "late fee")
    assert all(agent.description for agent in shipped.agents.values())
    assert all(not agent.channel_urls for agent in shipped.agents.values())


def test_shipped_config_channels(shipped):
    heuristic = RoutingSettings(strategy=Strategy.STICKY_HEURISTIC, ttl_s=1800.0,
                                confidence_threshold=6, sticky_bonus=6, divergence_count=1,
                                explicit_pin=True, first_message_margin=0,
                                keyword_switch_margin=6, contest_confirm=True)  # the recommended settings (README)
    assert dict(shipped.channels) == {
        "telegram": Channel(
            name="telegram", type=ChannelType.TELEGRAM, paths=("/telegram",),
            default_agent="support", routing=heuristic, bot_username="StickyrouteDemoBot",
            bindings=(Binding(agent="coder", user="111"),
                      Binding(agent="ops", chat="-1003456789012")),
            thread_routes=(ThreadRoute(chat="-1002345678901", thread="4790", agent="writer"),)),
        "whatsapp": Channel(
            name="whatsapp", type=ChannelType.WHATSAPP, paths=("/whatsapp",),
            default_agent="support", routing=heuristic,
            bindings=(Binding(agent="coder", user="15550100187"),)),
    }


def test_shipped_config_checks_with_only_the_no_secret_warnings():
    config, problems = check_config(REPO / "config" / "proxy.toml", env={})
    assert config is not None
    assert [(p.key, p.warning) for p in problems] == [
        ("channels.telegram.secret_token", True), ("channels.whatsapp.app_secret", True)]


def test_shipped_config_uses_the_replay_recommended_settings(shipped):
    """config/proxy.toml ships what `stickyroute replay --strategy recommended` measures."""
    from dataclasses import replace

    from stickyroute.replay.cli import RECOMMENDED

    routing = shipped.channels["telegram"].routing
    assert replace(routing, ttl_s=RECOMMENDED.ttl_s) == replace(RECOMMENDED, acknowledgements=routing.acknowledgements)
