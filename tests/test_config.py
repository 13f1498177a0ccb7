"""Config validation: every rule of proxy.config.loader as (broken config -> exact problems).

Each case writes a config to tmp_path and compares the errors as `dotted.key: message` lines
(the file part is checked separately). Valid configs and the values they produce are in
test_config_values.py.
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
TELEGRAM = """
[channels.telegram]
default_agent = "support"
secret_token = "s3cret"
"""
VALID = AGENTS + TELEGRAM
STRATEGIES = "off, explicit_only, sticky_ttl, sticky_heuristic"


def write(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> Path:
    for name, content in (files or {}).items():
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    path = tmp_path / "proxy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def errors(tmp_path: Path, text: str, env: dict[str, str] | None = None,
           files: dict[str, str] | None = None) -> list[str]:
    config, problems = check_config(write(tmp_path, text, files), env={} if env is None else env)
    found = [f"{p.key}: {p.message}" for p in problems if not p.warning]
    assert (config is None) == bool(found)
    return found


def test_valid_base_config_has_no_problem(tmp_path):
    assert errors(tmp_path, VALID) == []


SYNTAX_AND_TOP_LEVEL = [
    pytest.param("[server]\nport = 80 80\n",
                 ["(syntax): invalid TOML at line 2, column 11: Unexpected character: '8'"],
                 id="toml-syntax-error-line-column"),
    pytest.param('x = 1\nkeywords = ["a",\n',
                 ["(syntax): invalid TOML at line 2, column 1: unexpected end of file"],
                 id="toml-unexpected-eof"),
    pytest.param(VALID + "[servr]\nport = 1\n",
                 ['servr: unknown key (did you mean "server"?)'], id="unknown-top-level-table"),
    pytest.param(VALID + "[logging]\nlevel = 1\n", ["logging: unknown key"],
                 id="unknown-top-level-without-hint"),
    pytest.param("", ["agents: at least one agent is required",
                      "channels: at least one channel is required"], id="empty-file"),
    pytest.param("agents = 5\n" + TELEGRAM,
                 ["agents: expected a table, got the integer 5",
                  'channels.telegram.default_agent: no agent named "support"'],
                 id="agents-not-a-table"),
    pytest.param(AGENTS + "[channels]\n", ["channels: at least one channel is required"],
                 id="empty-channels-table"),
]

SERVER_ADMIN_UPSTREAM = [
    pytest.param(VALID + '[server]\nport = "8080"\n',
                 ['server.port: expected an integer, got the string "8080"'], id="port-string"),
    pytest.param(VALID + "[server]\nport = 0\n",
                 ["server.port: must be between 1 and 65535, got 0"], id="port-zero"),
    pytest.param(VALID + "[server]\nport = 65536\n",
                 ["server.port: must be between 1 and 65535, got 65536"], id="port-too-big"),
    pytest.param(VALID + "[server]\nport = 80.0\n",
                 ["server.port: expected an integer, got the float 80.0"], id="port-float"),
    pytest.param(VALID + "[server]\nport = true\n",
                 ["server.port: expected an integer, got the boolean true"], id="port-bool"),
    pytest.param(VALID + '[server]\nhost = ""\n', ["server.host: must not be empty"],
                 id="host-empty"),
    pytest.param(VALID + "[server]\nprot = 1\n",
                 ['server.prot: unknown key (did you mean "port"?)'], id="server-unknown-key"),
    pytest.param(VALID + "[server]\nmax_body_bytes = 0\n",
                 ["server.max_body_bytes: must be >= 1, got 0"], id="max-body-zero"),
    pytest.param(VALID + "[server]\nmax_body_bytes = -5\n",
                 ["server.max_body_bytes: must be >= 1, got -5"], id="max-body-negative"),
    pytest.param(VALID + '[server]\ntrusted_proxies = "10.0.0.0/8"\n',
                 ['server.trusted_proxies: expected an array of strings, got the string '
                  '"10.0.0.0/8"'], id="trusted-proxies-not-a-list"),
    pytest.param(VALID + '[server]\ntrusted_proxies = ["10.0.0.0/8", 5, "10.0.0.300/8"]\n',
                 ["server.trusted_proxies[1]: expected a string, got the integer 5",
                  'server.trusted_proxies[2]: not an IP network (CIDR): "10.0.0.300/8"'],
                 id="trusted-proxies-bad-items"),
    pytest.param(VALID + '[server]\nssl_certfile = "cert.pem"\n',
                 ["server.ssl_certfile: file not found: cert.pem",
                  "server.ssl_keyfile: is required when ssl_certfile is set"],
                 id="ssl-certfile-alone-and-missing"),
    pytest.param(VALID + '[server]\nssl_keyfile = "key.pem"\n',
                 ["server.ssl_keyfile: file not found: key.pem",
                  "server.ssl_certfile: is required when ssl_keyfile is set"],
                 id="ssl-keyfile-alone"),
    pytest.param(VALID + '[server]\nhost = "127.0.0.1"\nport = 8080\n[admin]\nport = 8080\n',
                 ["admin.port: must differ from server.port (8080)"], id="admin-port-clash"),
    pytest.param(VALID + '[admin]\nhost = 127\nport = 70000\n',
                 ["admin.host: expected a string, got the integer 127",
                  "admin.port: must be between 1 and 65535, got 70000"], id="admin-types"),
    pytest.param(VALID + "[upstream]\ntimeout_s = 0\n",
                 ["upstream.timeout_s: must be > 0, got 0"], id="upstream-timeout-zero"),
    pytest.param(VALID + "[upstream]\nconnect_timeout_s = -1.5\n",
                 ["upstream.connect_timeout_s: must be > 0, got -1.5"],
                 id="upstream-connect-timeout-negative"),
    pytest.param(VALID + '[upstream]\ntimeout_s = "30"\n',
                 ['upstream.timeout_s: expected a number, got the string "30"'],
                 id="upstream-timeout-string"),
    pytest.param(VALID + "[upstream]\nmax_connections = 0\nretries = 3\n",
                 ["upstream.retries: unknown key",
                  "upstream.max_connections: must be >= 1, got 0"], id="upstream-connections"),
]

ROUTING = [
    pytest.param(VALID + "[routing]\nshort_message_chars = -1\n",
                 ["routing.short_message_chars: must be >= 0, got -1"], id="short-chars-negative"),
    pytest.param(VALID + '[routing]\nacknowledgements = "ok"\n',
                 ['routing.acknowledgements: expected an array of strings, got the string "ok"'],
                 id="acks-not-a-list"),
    pytest.param(VALID + '[routing]\nacknowledgements = ["ok", 1, " "]\n',
                 ["routing.acknowledgements[1]: expected a string, got the integer 1",
                  "routing.acknowledgements[2]: must not be empty"], id="acks-bad-items"),
    pytest.param(VALID + "[routing]\nstrong_weight = 6.5\nweak_weight = -1\n",
                 ["routing.strong_weight: expected an integer, got the float 6.5",
                  "routing.weak_weight: must be >= 0, got -1"], id="weights"),
    pytest.param(VALID + "[routing]\nmax_conversations = 0\n",
                 ["routing.max_conversations: must be >= 1, got 0"], id="max-conversations"),
    pytest.param(VALID + '[routing]\nlog_text = "no"\n',
                 ['routing.log_text: expected true or false, got the string "no"'],
                 id="log-text-not-bool"),
    pytest.param(VALID + '[routing]\nauto_route = "always"\n',
                 [f'routing.auto_route: expected one of {STRATEGIES}; got "always"'],
                 id="global-auto-route"),
    pytest.param(VALID + "[routing]\nauto_route_ttl = 5\n",
                 ['routing.auto_route_ttl: unknown key (did you mean "auto_route"?)'],
                 id="routing-unknown-key"),
]

OVERRIDES = "[channels.telegram.overrides]\n"
OVERRIDE_CASES = [
    ('auto_route = "sometimes"',
     f'auto_route: expected one of {STRATEGIES}; got "sometimes"'),
    ("auto_route = 1", "auto_route: expected a string, got the integer 1"),
    ("auto_route_ttl_minutes = 0", "auto_route_ttl_minutes: must be > 0, got 0"),
    ("auto_route_ttl_minutes = -30", "auto_route_ttl_minutes: must be > 0, got -30"),
    ("auto_route_confidence_threshold = -1",
     "auto_route_confidence_threshold: must be >= 0, got -1"),
    ("auto_route_sticky_bonus = -4", "auto_route_sticky_bonus: must be >= 0, got -4"),
    ("auto_route_divergence_count = 0", "auto_route_divergence_count: must be >= 1, got 0"),
    ('auto_route_explicit_pin = "yes"',
     'auto_route_explicit_pin: expected true or false, got the string "yes"'),
    ("auto_route_first_message_margin = -1",
     "auto_route_first_message_margin: must be >= 0, got -1"),
    ("auto_route_early_confirm_margin = 1.5",
     "auto_route_early_confirm_margin: expected an integer, got the float 1.5"),
    ("auto_route_keyword_switch_margin = -3",
     "auto_route_keyword_switch_margin: must be >= 0, got -3"),
    ("short_message_chars = -2", "short_message_chars: must be >= 0, got -2"),
    ("max_conversations = 0", "max_conversations: must be >= 1, got 0"),
    ("auto_route_bonus = 4",
     'auto_route_bonus: unknown key (did you mean "auto_route_sticky_bonus"?)'),
]
ROUTING += [
    pytest.param(VALID + OVERRIDES + line + "\n", [f"channels.telegram.overrides.{expected}"],
                 id=f"override-{line.split(' =')[0]}")
    for line, expected in OVERRIDE_CASES
]
ROUTING.append(pytest.param(
    AGENTS + TELEGRAM.replace("secret_token", 'overrides = "x"\nsecret_token'),
    ['channels.telegram.overrides: expected a table, got the string "x"'],
    id="overrides-not-a-table"))

CLASSIFIER = [
    pytest.param(VALID + '[classifier]\nprovider = "openai"\n',
                 ['classifier.provider: expected one of auto, groq, keywords, heuristic; got "openai"'],
                 id="provider"),
    pytest.param(VALID + '[classifier]\nmodel = ""\ntimeout_s = 0\napi_key_env = "GROQ-KEY"\n',
                 ["classifier.model: must not be empty",
                  "classifier.timeout_s: must be > 0, got 0",
                  'classifier.api_key_env: not an environment variable name: "GROQ-KEY"'],
                 id="model-timeout-key-env"),
    pytest.param(VALID + '[classifier]\nbase_url = "localhost:8000"\n',
                 ['classifier.base_url: expected an http:// or https:// URL, got "localhost:8000"'],
                 id="base-url"),
    pytest.param(VALID + "[classifier]\ncontext_messages = -1\nmax_tokens = 0\n"
                 "calls_per_minute = -1\nbreaker_failures = 0\nbreaker_cooldown_s = -0.5\n",
                 ["classifier.context_messages: must be >= 0, got -1",
                  "classifier.max_tokens: must be >= 1, got 0",
                  "classifier.calls_per_minute: must be >= 0, got -1",
                  "classifier.breaker_failures: must be >= 1, got 0",
                  "classifier.breaker_cooldown_s: must be >= 0, got -0.5"], id="numbers"),
    pytest.param(VALID + "[classifier]\ntemperature = 0\n",
                 ["classifier.temperature: unknown key"], id="classifier-unknown-key"),
]


def agent_case(agent_lines: str, expected: list[str], case_id: str):
    """The base config with the coder agent's body replaced by `agent_lines`."""
    text = AGENTS.replace('url = "http://127.0.0.1:9101"\nkeywords = ["pull request"]',
                          agent_lines) + TELEGRAM
    return pytest.param(text, expected, id=case_id)


AGENT_CASES = [
    agent_case('keywords = ["x"]', ["agents.coder.url: is required"], "url-missing"),
    agent_case('url = "ftp://host/x"',
               ['agents.coder.url: expected an http:// or https:// URL, got "ftp://host/x"'],
               "url-scheme"),
    agent_case('url = "http://"',
               ['agents.coder.url: expected an http:// or https:// URL, got "http://"'],
               "url-no-host"),
    agent_case('url = "http://h:99999"',
               ['agents.coder.url: expected an http:// or https:// URL, got "http://h:99999"'],
               "url-bad-port"),
    agent_case("url = 5", ["agents.coder.url: expected a string, got the integer 5"], "url-int"),
    agent_case('url = "http://h"\nkeyword = ["x"]',
               ['agents.coder.keyword: unknown key (did you mean "keywords"?)'], "unknown-key"),
    agent_case('url = "http://h"\nkeywords = "pull request"',
               ['agents.coder.keywords: expected an array of strings, got the string '
                '"pull request"'], "keywords-string"),
    agent_case('url = "http://h"\nkeywords = ["ok", "", "+++"]\nweak_keywords = [1]',
               ["agents.coder.keywords[1]: must not be empty",
                'agents.coder.keywords[2]: "+++" has no letter or digit (never matches)',
                "agents.coder.weak_keywords[0]: expected a string, got the integer 1"],
               "keyword-items"),
    agent_case('url = "http://h"\naliases = ["Dev Ops", "none", "auto"]',
               ['agents.coder.aliases[0]: expected lowercase letters, digits, - or _; '
                'got "Dev Ops"',
                'agents.coder.aliases[1]: "none" is reserved',
                'agents.coder.aliases[2]: "auto" is reserved'], "alias-format-reserved"),
    agent_case('url = "http://h"\naliases = ["Support"]',
               ['agents.coder.aliases: "support" is already the name of agent support'],
               "alias-is-other-agents-name"),
    agent_case('url = "http://h"\ndescription = 5',
               ["agents.coder.description: expected a string, got the integer 5"],
               "description-type"),
    agent_case('url = "http://h"\n[agents.coder.channels]\nslack = "http://h/slack"\n'
               'telegram = "nope"',
               ['agents.coder.channels.slack: no channel named "slack"',
                'agents.coder.channels.telegram: expected an http:// or https:// URL, '
                'got "nope"'], "channel-urls"),
    agent_case('url = "http://h"\nchannels = "telegram"',
               ['agents.coder.channels: expected a table, got the string "telegram"'],
               "channel-urls-not-a-table"),
    agent_case('url = "http://h"\nrules = 5',
               ["agents.coder.rules: expected a string, got the integer 5"], "rules-type"),
    agent_case('url = "http://h"\nrules = "builtin:nope"',
               ['agents.coder.rules: builtin:nope: no rule pack "nope" ships with stickyroute (builtin: billing, '
                'coder, debugger, devops, researcher, sales, support, travel, writer)'], "rules-unknown-builtin"),
]
AGENT_CASES += [
    pytest.param(
        '[agents.coder]\nurl = "http://h"\naliases = ["helpdesk"]\n'
        '[agents.support]\nurl = "http://h"\naliases = ["helpdesk", "desk"]\n' + TELEGRAM,
        ['agents.support.aliases: "helpdesk" is also an alias of agent coder'],
        id="alias-shared"),
    pytest.param('[agents.Coder]\nurl = "http://h"\n[agents.support]\nurl = "http://h"\n'
                 + TELEGRAM,
                 ["agents.Coder: agent name must be lowercase letters, digits, - or _"],
                 id="agent-name-uppercase"),
    pytest.param('[agents."my agent"]\nurl = "http://h"\n[agents.support]\nurl = "http://h"\n'
                 + TELEGRAM,
                 ["agents.my agent: agent name must be lowercase letters, digits, - or _"],
                 id="agent-name-space"),
    pytest.param('[agents.auto]\nurl = "http://h"\n[agents.support]\nurl = "http://h"\n'
                 + TELEGRAM, ['agents.auto: "auto" is reserved'], id="agent-name-reserved"),
    pytest.param('[agents]\ncoder = "http://h"\n[agents.support]\nurl = "http://h"\n'
                 + TELEGRAM, ['agents.coder: expected a table, got the string "http://h"'],
                 id="agent-not-a-table"),
]

RULE_PACK_CASES = [
    pytest.param('keywords = ["a",\n',
                 ["agents.coder.rules: rules/bad.toml: invalid TOML at line 1, column 1: "
                  "unexpected end of file"], id="pack-syntax"),
    pytest.param('keywords = "x"\nkeywordz = []\n',
                 ['agents.coder.rules: rules/bad.toml: keywordz: unknown key '
                  '(did you mean "keywords"?)',
                  'agents.coder.rules: rules/bad.toml: keywords: expected an array of strings, '
                  'got the string "x"'], id="pack-content"),
    pytest.param('weak_keywords = ["ok", "--"]\naliases = ["Bad Alias"]\n',
                 ['agents.coder.rules: rules/bad.toml: aliases[0]: expected lowercase letters, '
                  'digits, - or _; got "Bad Alias"',
                  'agents.coder.rules: rules/bad.toml: weak_keywords[1]: "--" has no letter or '
                  'digit (never matches)'], id="pack-items"),
]


@pytest.mark.parametrize("text, expected", SYNTAX_AND_TOP_LEVEL + SERVER_ADMIN_UPSTREAM
                         + ROUTING + CLASSIFIER + AGENT_CASES)
def test_broken_config_lists_exact_problems(tmp_path, text, expected):
    assert errors(tmp_path, text) == expected


@pytest.mark.parametrize("pack, expected", RULE_PACK_CASES)
def test_invalid_rule_pack_names_key_and_file(tmp_path, pack, expected):
    text = AGENTS.replace('keywords = ["pull request"]', 'rules = "rules/bad.toml"') + TELEGRAM
    assert errors(tmp_path, text, files={"rules/bad.toml": pack}) == expected


def test_missing_file_is_one_problem(tmp_path):
    path = tmp_path / "nope.toml"
    assert check_config(path) == (None, [ConfigProblem(
        str(path), "(file)", "cannot read file: No such file or directory")])


def test_file_that_is_not_utf8_is_one_problem(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes(b'[server]\nhost = "caf\xe9"\n')
    assert check_config(path)[1] == [ConfigProblem(str(path), "(file)", "not UTF-8 text (byte 20)")]


def test_problems_name_the_file_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, VALID + "[server]\nport = 0\n")
    with pytest.raises(ConfigError) as caught:
        load_config("proxy.toml", env={})
    assert caught.value.problems == [
        ConfigProblem("proxy.toml", "server.port", "must be between 1 and 65535, got 0")]
    assert str(caught.value) == "proxy.toml: server.port: must be between 1 and 65535, got 0"


def test_a_missing_rules_file_names_the_resolved_path_it_tried(tmp_path):
    text = AGENTS.replace('keywords = ["pull request"]', 'rules = "../rules/nope.toml"') + TELEGRAM
    (tmp_path / "config").mkdir()
    assert errors(tmp_path / "config", text) == [
        "agents.coder.rules: ../rules/nope.toml: cannot read file: No such file or directory "
        f"(looked for {tmp_path / 'rules' / 'nope.toml'})"]
