"""Config validation of channels, bindings, thread routes, `${ENV}` substitution and warnings.

Same shape as test_config.py: a broken config -> the exact `dotted.key: message` problems.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config, load_config
from stickyroute.errors import ConfigError, ConfigProblem

AGENTS = """
[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["pull request"]

[agents.support]
url = "http://127.0.0.1:9102"
keywords = ["password reset"]
"""
NO_SECRET = "no secret configured: anyone who knows the URL can post updates"


def run_check(tmp_path: Path, text: str, env: dict[str, str] | None = None):
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return check_config(path, env={} if env is None else env)


def errors(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    config, problems = run_check(tmp_path, text, env)
    found = [f"{p.key}: {p.message}" for p in problems if not p.warning]
    assert (config is None) == bool(found)
    return found


def warnings(tmp_path: Path, text: str) -> list[str]:
    _, problems = run_check(tmp_path, text)
    return [f"{p.key}: {p.message}" for p in problems if p.warning]


def telegram(*lines: str, name: str = "telegram") -> str:
    """AGENTS plus one channel table holding `lines` (a default agent and secret unless set)."""
    body = "\n".join(lines)
    if "default_agent" not in body:
        body += '\ndefault_agent = "support"'
    if "secret_token" not in body and "type" not in body:
        body += '\nsecret_token = "s3cret"'
    return f"{AGENTS}\n[channels.{name}]\n{body}\n"


CHANNEL_CASES = [
    pytest.param(telegram(name="tg"),
                 ['channels.tg.type: is required: the table name "tg" is not a channel type '
                  '(telegram, whatsapp, slack, discord, line, messenger, instagram)'],
                 id="type-missing-not-derivable"),
    pytest.param(telegram('type = "viber"'),
                 ['channels.telegram.type: expected one of telegram, whatsapp, slack, discord, line, messenger, '
                  'instagram; got "viber"'],
                 id="type-unknown"),
    pytest.param(telegram('type = "telegram"', 'secret_token = "s"', name="Tele"),
                 ["channels.Tele: channel name must be lowercase letters, digits, - or _"],
                 id="channel-name"),
    pytest.param(telegram('path = "telegram"'),
                 ['channels.telegram.path: must start with "/", got "telegram"'],
                 id="path-no-slash"),
    pytest.param(telegram('path = "/tg?token=1"'),
                 ['channels.telegram.path: must be a path without query or fragment, '
                  'got "/tg?token=1"'], id="path-with-query"),
    pytest.param(telegram('path = ""'), ["channels.telegram.path: must not be empty"],
                 id="path-empty"),
    pytest.param(telegram('path = "/a"', 'paths = ["/b"]'),
                 ["channels.telegram.paths: set path or paths, not both"], id="path-and-paths"),
    pytest.param(telegram("paths = []"), ["channels.telegram.paths: must not be empty"],
                 id="paths-empty"),
    pytest.param(telegram('paths = ["/a", "b", "/a"]'),
                 ['channels.telegram.paths[1]: must start with "/", got "b"',
                  'channels.telegram.paths[2]: "/a" is listed twice'], id="paths-items"),
    pytest.param(telegram('path = "/hook"') + '[channels.whatsapp]\npath = "/hook"\n'
                 'default_agent = "support"\napp_secret = "a"\n',
                 ['channels.whatsapp.path: "/hook" is already the path of channel telegram'],
                 id="path-shared-by-two-channels"),
    pytest.param(telegram('type = "whatsapp"', 'app_secret = "a"', 'path = "/telegram"',
                          name="wa") + '[channels.telegram]\ndefault_agent = "support"\n'
                 'secret_token = "s"\n',
                 ['channels.telegram.path: "/telegram" is already the path of channel wa'],
                 id="default-path-clash"),
    pytest.param(f"{AGENTS}\n[channels.telegram]\nsecret_token = \"s\"\n",
                 ["channels.telegram.default_agent: is required"], id="default-agent-missing"),
    pytest.param(telegram('default_agent = "nobody"'),
                 ['channels.telegram.default_agent: no agent named "nobody"'],
                 id="default-agent-unknown"),
    pytest.param(telegram('app_secret = "a"', 'verify_token = "v"'),
                 ["channels.telegram.app_secret: not a telegram setting (WhatsApp, Messenger and Instagram only)",
                  "channels.telegram.verify_token: not a telegram setting (WhatsApp, Messenger and Instagram only)"],
                 id="telegram-rejects-whatsapp-keys"),
    pytest.param(telegram('type = "whatsapp"', 'app_secret = "a"', 'secret_token = "has space"',
                          'bot_username = "@my bot"', name="wa"),
                 ["channels.wa.secret_token: not a whatsapp setting (Telegram only)",
                  "channels.wa.bot_username: not a whatsapp setting (Telegram only)"],
                 id="whatsapp-rejects-telegram-keys"),
    pytest.param(telegram('type = "whatsapp"', 'app_secret = "a"', name="whatsapp")
                 + '[[channels.whatsapp.thread_routes]]\nchat = "1"\nthread = "2"\n'
                 'agent = "coder"\n',
                 ["channels.whatsapp.thread_routes: not a whatsapp setting "
                  "(Telegram forum topics, Slack and Discord threads only)"], id="whatsapp-rejects-thread-routes"),
    pytest.param(f"{AGENTS}[channels.whatsapp]\napp_secret = 5\nverify_token = \"\"\n",
                 ["channels.whatsapp.default_agent: is required",
                  "channels.whatsapp.app_secret: expected a string, got the integer 5",
                  "channels.whatsapp.verify_token: must not be empty"],
                 id="secrets-checked-even-when-channel-is-incomplete"),
    pytest.param(telegram('secret_token = "has space"'),
                 ["channels.telegram.secret_token: expected 1-256 characters of A-Z, a-z, 0-9, "
                  "_ and - (Telegram setWebhook secret_token)"], id="secret-token-charset"),
    pytest.param(telegram(f'secret_token = "{"a" * 257}"'),
                 ["channels.telegram.secret_token: expected 1-256 characters of A-Z, a-z, 0-9, "
                  "_ and - (Telegram setWebhook secret_token)"], id="secret-token-length"),
    pytest.param(telegram('bot_username = "@my bot"'),
                 ['channels.telegram.bot_username: expected letters, digits and _, '
                  'got "my bot"'], id="bot-username"),
    pytest.param(telegram('default = "support"'),
                 ['channels.telegram.default: unknown key (did you mean "default_agent"?)'],
                 id="channel-unknown-key"),
    pytest.param(f'{AGENTS}\n[channels]\ntelegram = "/telegram"\n',
                 ['channels.telegram: expected a table, got the string "/telegram"'],
                 id="channel-not-a-table"),
]


def binding(*tables: str, kind: str = "bindings") -> str:
    """`telegram()` plus one `[[channels.telegram.<kind>]]` per entry of `tables`."""
    text = telegram()
    for body in tables:
        text += f"[[channels.telegram.{kind}]]\n{body}\n"
    return text


BINDING_CASES = [
    pytest.param(binding('agent = "coder"'),
                 ["channels.telegram.bindings[0]: expected exactly one of user or chat"],
                 id="binding-neither-user-nor-chat"),
    pytest.param(binding('user = "1"\nchat = "2"\nagent = "coder"'),
                 ["channels.telegram.bindings[0]: expected exactly one of user or chat"],
                 id="binding-user-and-chat"),
    pytest.param(binding('user = "1"'), ["channels.telegram.bindings[0].agent: is required"],
                 id="binding-agent-missing"),
    pytest.param(binding('user = "1"\nagent = "ghost"'),
                 ['channels.telegram.bindings[0].agent: no agent named "ghost"'],
                 id="binding-agent-unknown"),
    pytest.param(binding('user = true\nagent = "coder"'),
                 ["channels.telegram.bindings[0].user: expected a string or an integer, "
                  "got the boolean true"], id="binding-id-bool"),
    pytest.param(binding('chat = 1.5\nagent = "coder"'),
                 ["channels.telegram.bindings[0].chat: expected a string or an integer, "
                  "got the float 1.5"], id="binding-id-float"),
    pytest.param(binding('user = "+"\nagent = "coder"'),
                 ["channels.telegram.bindings[0].user: must not be empty"], id="binding-id-empty"),
    pytest.param(binding('user = "111"\nagent = "coder"', 'user = 111\nagent = "support"'),
                 ['channels.telegram.bindings[1].user: user "111" is already bound by '
                  'bindings[0]'], id="binding-duplicate-user-string-and-int"),
    pytest.param(binding('chat = "-1001"\nagent = "coder"', 'user = "-1001"\nagent = "coder"',
                         'chat = -1001\nagent = "support"'),
                 ['channels.telegram.bindings[2].chat: chat "-1001" is already bound by '
                  'bindings[0]'], id="binding-duplicate-chat"),
    pytest.param(binding('user = "1"\nthread = "2"\nagent = "coder"'),
                 ['channels.telegram.bindings[0].thread: unknown key'], id="binding-unknown-key"),
    pytest.param(telegram('bindings = "coder"'),
                 ['channels.telegram.bindings: expected an array of tables, got the string '
                  '"coder"'], id="bindings-not-an-array"),
    pytest.param(telegram("bindings = [1]"),
                 ["channels.telegram.bindings[0]: expected a table, got the integer 1"],
                 id="bindings-item-not-a-table"),
    pytest.param(binding('chat = "-100"\nagent = "coder"', kind="thread_routes"),
                 ["channels.telegram.thread_routes[0].thread: is required"],
                 id="thread-route-thread-missing"),
    pytest.param(binding('thread = "5"', kind="thread_routes"),
                 ["channels.telegram.thread_routes[0].chat: is required",
                  "channels.telegram.thread_routes[0].agent: is required"],
                 id="thread-route-chat-and-agent-missing"),
    pytest.param(binding('chat = "-100"\nthread = "5"\nagent = "qa"', kind="thread_routes"),
                 ['channels.telegram.thread_routes[0].agent: no agent named "qa"'],
                 id="thread-route-agent-unknown"),
    pytest.param(binding('chat = "-100"\nthread = "5"\nagent = "coder"',
                         'chat = -100\nthread = 5\nagent = "support"', kind="thread_routes"),
                 ['channels.telegram.thread_routes[1]: chat "-100" thread "5" already has a '
                  'route (thread_routes[0])'], id="thread-route-duplicate"),
    pytest.param(binding('chat = "-100"\nthread = "5"\nuser = "1"\nagent = "coder"',
                         kind="thread_routes"),
                 ["channels.telegram.thread_routes[0].user: unknown key"],
                 id="thread-route-unknown-key"),
]


@pytest.mark.parametrize("text, expected", CHANNEL_CASES + BINDING_CASES)
def test_broken_channel_lists_exact_problems(tmp_path, text, expected):
    assert errors(tmp_path, text) == expected


# ---- ${ENV} substitution ---------------------------------------------------------------


def test_unset_env_variable_names_key_and_variable(tmp_path):
    text = telegram('secret_token = "${TG_SECRET}"')
    assert errors(tmp_path, text) == [
        "channels.telegram.secret_token: environment variable TG_SECRET is not set"]


def test_every_unset_variable_is_listed_once_per_key(tmp_path):
    text = telegram('secret_token = "${A}-${B}-${A}"', 'path = "/${P}"')
    text = text.replace('keywords = ["pull request"]', 'keywords = ["pull request", "${K}"]')
    assert errors(tmp_path, text) == [
        "agents.coder.keywords[1]: environment variable K is not set",
        "channels.telegram.secret_token: environment variable A is not set",
        "channels.telegram.secret_token: environment variable B is not set",
        "channels.telegram.path: environment variable P is not set",
    ]


def test_unresolved_value_is_not_reported_twice(tmp_path):
    text = telegram('default_agent = "${DEFAULT}"', 'path = "${HOOK}"')
    text += '[[channels.telegram.bindings]]\nuser = "${BOSS}"\nagent = "${BOSS_AGENT}"\n'
    assert errors(tmp_path, text) == [
        "channels.telegram.default_agent: environment variable DEFAULT is not set",
        "channels.telegram.path: environment variable HOOK is not set",
        "channels.telegram.bindings[0].user: environment variable BOSS is not set",
        "channels.telegram.bindings[0].agent: environment variable BOSS_AGENT is not set",
    ]


def test_set_env_variables_are_substituted(tmp_path):
    text = telegram('secret_token = "${TG_SECRET}"', 'bot_username = "${BOT}_bot"')
    text = text.replace('url = "http://127.0.0.1:9101"', 'url = "http://${HOST}:9101"')
    config, problems = run_check(tmp_path, text,
                                 env={"TG_SECRET": "abc_123", "BOT": "Demo", "HOST": "10.0.0.7"})
    assert problems == []
    assert config.channels["telegram"].secret_token == "abc_123"
    assert config.channels["telegram"].bot_username == "Demo_bot"
    assert config.agents["coder"].url == "http://10.0.0.7:9101"


def test_env_defaults_to_process_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("STICKYROUTE_TEST_SECRET", "from-os-environ")
    path = tmp_path / "proxy.toml"
    path.write_text(telegram('secret_token = "${STICKYROUTE_TEST_SECRET}"'), encoding="utf-8")
    assert load_config(path).channels["telegram"].secret_token == "from-os-environ"


def test_dollar_without_braces_or_a_name_is_kept(tmp_path):
    text = telegram().replace('keywords = ["pull request"]', 'keywords = ["pull request"]\n'
                              'description = "costs $5, see $HOME or ${not a name}"', 1)
    config, problems = run_check(tmp_path, text)
    assert problems == []
    assert config.agents["coder"].description == "costs $5, see $HOME or ${not a name}"


# ---- warnings ----------------------------------------------------------------------------


def test_telegram_without_secret_token_warns(tmp_path):
    assert warnings(tmp_path, f'{AGENTS}[channels.telegram]\ndefault_agent = "support"\n') == [
        f"channels.telegram.secret_token: {NO_SECRET}"]


def test_whatsapp_without_app_secret_warns_and_with_it_does_not(tmp_path):
    bare = f'{AGENTS}[channels.whatsapp]\ndefault_agent = "support"\nverify_token = "v"\n'
    assert warnings(tmp_path, bare) == [f"channels.whatsapp.app_secret: {NO_SECRET}"]
    assert warnings(tmp_path, bare + 'app_secret = "a"\n') == []


def test_agent_without_keywords_warns_only_under_sticky_heuristic(tmp_path):
    text = AGENTS + '[agents.writer]\nurl = "http://h"\n' + telegram().replace(AGENTS, "")
    assert warnings(tmp_path, text) == []
    heuristic = text + '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\n'
    assert warnings(tmp_path, heuristic) == [
        "agents.writer.keywords: no keywords while channel telegram uses sticky_heuristic: "
        "the keyword gate never suggests this agent"]
    both = heuristic.replace("[channels.telegram.overrides]",
                             '[channels.whatsapp]\ndefault_agent = "support"\napp_secret = "a"\n'
                             '[channels.telegram.overrides]') + (
        '[channels.whatsapp.overrides]\nauto_route = "sticky_heuristic"\n')
    assert warnings(tmp_path, both) == [
        "agents.writer.keywords: no keywords while channels telegram, whatsapp use "
        "sticky_heuristic: the keyword gate never suggests this agent"]


def test_warnings_do_not_stop_loading(tmp_path):
    config, problems = run_check(tmp_path, f'{AGENTS}[channels.telegram]\n'
                                           f'default_agent = "support"\n')
    assert config is not None
    assert problems == [ConfigProblem(str(tmp_path / "proxy.toml"),
                                      "channels.telegram.secret_token", NO_SECRET, warning=True)]


# ---- every error at once -----------------------------------------------------------------

EVERYTHING_WRONG = """
[server]
port = 99999
trusted_proxies = ["10.0.0.0/8", "not-a-cidr"]

[upstream]
timeout_s = -1

[routing]
strong_weight = "six"

[agents.coder]
url = "ftp://coder"
aliases = ["support"]

[agents.support]
url = "http://127.0.0.1:9102"
colour = "blue"

[channels.telegram]
default_agent = "nobody"
app_secret = "x"
secret_token = "${TG_SECRET}"

[channels.telegram.overrides]
auto_route = "sometimes"

[[channels.telegram.bindings]]
user = 111
agent = "ghost"
"""

EVERYTHING_WRONG_PROBLEMS = [
    "channels.telegram.secret_token: environment variable TG_SECRET is not set",
    "server.port: must be between 1 and 65535, got 99999",
    'server.trusted_proxies[1]: not an IP network (CIDR): "not-a-cidr"',
    "upstream.timeout_s: must be > 0, got -1",
    'routing.strong_weight: expected an integer, got the string "six"',
    'agents.coder.url: expected an http:// or https:// URL, got "ftp://coder"',
    "agents.support.colour: unknown key",
    'agents.coder.aliases: "support" is already the name of agent support',
    'channels.telegram.default_agent: no agent named "nobody"',
    "channels.telegram.app_secret: not a telegram setting (WhatsApp, Messenger and Instagram only)",
    'channels.telegram.overrides.auto_route: expected one of off, explicit_only, sticky_ttl, '
    'sticky_heuristic; got "sometimes"',
    'channels.telegram.bindings[0].agent: no agent named "ghost"',
]


def test_load_config_lists_every_error_not_just_the_first(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text(EVERYTHING_WRONG, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config(path, env={})
    assert [f"{p.key}: {p.message}" for p in caught.value.problems] == EVERYTHING_WRONG_PROBLEMS
    assert {p.file for p in caught.value.problems} == {str(path)}
    assert str(caught.value) == "\n".join(f"{path}: {line}" for line in EVERYTHING_WRONG_PROBLEMS)
