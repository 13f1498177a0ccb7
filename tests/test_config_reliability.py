"""Settings added by issue #10: the reply cap, late answers, per-agent pools and the delivery log."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.config import check_config
from stickyroute.config.model import MIB, StateSettings, UpstreamSettings
from tests.proxy.harness import Proxy, telegram_text, upstream_set, write_config

BASE = """
[agents.coder]
url = "http://127.0.0.1:9101"

[channels.telegram]
default_agent = "coder"
secret_token = "s3cret"
"""


def check(tmp_path: Path, extra: str, agent: str = "") -> tuple[object, list[str]]:
    path = tmp_path / "proxy.toml"
    path.write_text(BASE.replace('url = "http://127.0.0.1:9101"', 'url = "http://127.0.0.1:9101"\n' + agent) + extra)
    config, problems = check_config(path, env={})
    return config, [f"{p.key}: {p.message}" for p in problems if not p.warning]


def test_defaults(tmp_path: Path) -> None:
    config, errors = check(tmp_path, "")
    assert errors == []
    assert config.upstream == UpstreamSettings(max_reply_bytes=5 * MIB, late_answer_s=60.0)
    assert config.state == StateSettings(backend="memory", delivery_ttl_hours=24.0, delivery_log_max_bytes=64 * MIB)
    assert config.agents["coder"].max_connections is None


def test_values_are_read(tmp_path: Path) -> None:
    config, errors = check(tmp_path, "[upstream]\nmax_reply_bytes = 1024\nlate_answer_s = 0\n"
                           "[state]\nbackend = \"memory\"\ndelivery_ttl_hours = 168\ndelivery_log_max_bytes = 4096\n",
                           agent="max_connections = 8")
    assert errors == []
    assert (config.upstream.max_reply_bytes, config.upstream.late_answer_s) == (1024, 0.0)
    assert config.state == StateSettings(backend="memory", delivery_ttl_hours=168.0, delivery_log_max_bytes=4096)
    assert config.agents["coder"].max_connections == 8


@pytest.mark.parametrize(("extra", "agent", "expected"), [
    ("[upstream]\nmax_reply_bytes = 0\n", "", ["upstream.max_reply_bytes: must be >= 1, got 0"]),
    ("[upstream]\nlate_answer_s = -1\n", "", ["upstream.late_answer_s: must be >= 0, got -1"]),
    ("", "max_connections = 0", ["agents.coder.max_connections: must be >= 1, got 0"]),
    ('[state]\nbackend = "postgres"\n', "", ['state.backend: expected one of memory, redis; got "postgres"']),
    ("[state]\ndelivery_ttl_hours = 0\n", "", ["state.delivery_ttl_hours: must be > 0, got 0"]),
    ("[state]\ndelivery_log_max_bytes = 0\n", "", ["state.delivery_log_max_bytes: must be >= 1, got 0"]),
    ("[state]\nttl = 1\n", "", ["state.ttl: unknown key"]),
], ids=["reply-cap", "late", "agent-pool", "backend", "ttl", "log-bound", "unknown"])
def test_bad_values_name_the_key(tmp_path: Path, extra: str, agent: str, expected: list[str]) -> None:
    assert check(tmp_path, extra, agent)[1] == expected


async def test_stats_show_the_delivery_log_size_and_bound_and_the_leg_counters(tmp_path: Path) -> None:
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, top="[state]\ndelivery_log_max_bytes = 100000\n",
                              agents={"general": "max_connections = 3"})
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            stats = await proxy.service.stats_snapshot()
    deliveries = stats["delivery_log"]
    assert (deliveries["size"], deliveries["max_bytes"], deliveries["ttl_s"]) == (1, 100000, 86400.0)
    assert 512 < deliveries["stored_bytes"] < 2000
    assert stats["forwarding"] == {"pools": {"general": {"max_connections": 3, "in_use": 0}},
                                   "late_answers": {"pending": 0}}
    assert (stats["upstream"]["general"]["forwards"], stats["upstream"]["general"]["failures"]) == (1, {})
