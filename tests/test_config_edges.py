"""Config of the listeners' edge limits, the admin body cap, the sign-in throttle and sessions:
defaults, values read, and broken values -> exact problems."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config, load_config
from stickyroute.config.listeners import MIB

BASE = """
[agents.support]
url = "http://127.0.0.1:9102"

[channels.telegram]
secret_token = "s3cret"
default_agent = "support"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "proxy.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return path


def errors(tmp_path: Path, text: str) -> list[str]:
    config, found = check_config(write(tmp_path, text), env={})
    problems = [f"{p.key}: {p.message}" for p in found if not p.warning]
    assert (config is None) == bool(problems)
    return problems


def test_defaults_of_both_listeners_and_the_admin_api(tmp_path) -> None:
    config = load_config(write(tmp_path, ""), env={})
    server, admin = config.server, config.admin
    assert (server.header_timeout_s, server.body_timeout_s, server.keepalive_timeout_s, server.max_connections,
            server.max_header_bytes, server.max_body_bytes) == (10.0, 30.0, 5.0, 256, 32768, 5 * MIB)
    assert (admin.header_timeout_s, admin.body_timeout_s, admin.keepalive_timeout_s, admin.max_connections,
            admin.max_header_bytes, admin.max_body_bytes) == (10.0, 10.0, 5.0, 50, 32768, 65536)
    assert (admin.auth_failures, admin.auth_window_s, admin.trusted_proxies, admin.session_max_age_s,
            admin.behind_tls) == (10, 60.0, (), 28800.0, False)


def test_every_limit_is_read(tmp_path) -> None:
    config = load_config(write(tmp_path, """
[server]
header_timeout_s = 3
body_timeout_s = 4.5
keepalive_timeout_s = 2
max_connections = 64
max_header_bytes = 8192

[admin]
max_body_bytes = 4096
header_timeout_s = 1.5
body_timeout_s = 2
keepalive_timeout_s = 1
max_connections = 8
max_header_bytes = 2048
auth_failures = 3
auth_window_s = 30
trusted_proxies = ["10.0.0.0/8", "fd00::1/64"]
session_max_age_s = 600
behind_tls = true
"""), env={})
    server, admin = config.server, config.admin
    assert (server.header_timeout_s, server.body_timeout_s, server.keepalive_timeout_s, server.max_connections,
            server.max_header_bytes) == (3.0, 4.5, 2.0, 64, 8192)
    assert (admin.max_body_bytes, admin.header_timeout_s, admin.body_timeout_s, admin.keepalive_timeout_s,
            admin.max_connections, admin.max_header_bytes) == (4096, 1.5, 2.0, 1.0, 8, 2048)
    assert (admin.auth_failures, admin.auth_window_s, admin.trusted_proxies, admin.session_max_age_s,
            admin.behind_tls) == (3, 30.0, ("10.0.0.0/8", "fd00::/64"), 600.0, True)


@pytest.mark.parametrize(("table", "line", "problem"), [
    ("server", "header_timeout_s = 0", "server.header_timeout_s: must be > 0, got 0"),
    ("admin", "body_timeout_s = -1", "admin.body_timeout_s: must be > 0, got -1"),
    ("server", "keepalive_timeout_s = \"5\"", "server.keepalive_timeout_s: expected a number, got the string \"5\""),
    ("admin", "max_connections = 0", "admin.max_connections: must be >= 1, got 0"),
    ("server", "max_header_bytes = 512", "server.max_header_bytes: must be >= 1024, got 512"),
    ("admin", "max_body_bytes = 0", "admin.max_body_bytes: must be >= 1, got 0"),
    ("admin", "auth_failures = 0", "admin.auth_failures: must be >= 1, got 0"),
    ("admin", "auth_window_s = 0", "admin.auth_window_s: must be > 0, got 0"),
    ("admin", "session_max_age_s = 0", "admin.session_max_age_s: must be > 0, got 0"),
    ("admin", "behind_tls = \"yes\"", "admin.behind_tls: expected true or false, got the string \"yes\""),
    ("admin", "trusted_proxies = [\"not-a-network\"]",
     "admin.trusted_proxies[0]: not an IP network (CIDR): \"not-a-network\""),
])
def test_a_bad_limit_names_its_key(tmp_path, table, line, problem) -> None:
    assert errors(tmp_path, f"\n[{table}]\n{line}\n") == [problem]
