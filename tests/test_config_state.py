"""`[state]`: backend, url (${REDIS_URL}), key_prefix, op_timeout_ms; `check` warns when Redis
does not answer; `serve --workers N` needs the Redis backend (issue #9 "Configuration")."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.config import check_config, load_config
from stickyroute.config.model import StateSettings
from tests.redis_server import free_port, require_redis

BASE = """
[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["pull request"]

[channels.telegram]
default_agent = "coder"
secret_token = "s3cret"
"""


def write(tmp_path: Path, state: str) -> str:
    path = tmp_path / "proxy.toml"
    path.write_text(BASE + "\n[state]\n" + state)
    return str(path)


def test_defaults_are_the_memory_backend() -> None:
    assert (StateSettings(), StateSettings().shared, StateSettings().op_timeout_s) == (
        StateSettings("memory", "redis://127.0.0.1:6379/0", "stickyroute:", 250.0, "memory"), False, 0.25)


@pytest.mark.parametrize("choice", ["memory", "refuse"])
def test_when_unavailable_is_memory_or_refuse(tmp_path: Path, choice: str) -> None:
    config = load_config(write(tmp_path, f'backend = "redis"\nwhen_unavailable = "{choice}"\n'), env={})
    assert config.state.when_unavailable == choice


def test_a_full_redis_table_with_an_environment_url(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'backend = "redis"\nurl = "${REDIS_URL}"\nkey_prefix = "team-a:"\n'
                                         "op_timeout_ms = 80\n"),
                         env={"REDIS_URL": "rediss://:pa55@redis.internal:6380/2"})
    assert (config.state, config.state.shared) == (
        StateSettings("redis", "rediss://:pa55@redis.internal:6380/2", "team-a:", 80.0), True)
    assert "pa55" not in repr(config)


@pytest.mark.parametrize(
    ("state", "message"),
    [
        ('backend = "etcd"', 'state.backend: expected one of memory, redis; got "etcd"'),
        ('url = "http://127.0.0.1:6379"', "state.url: expected a redis://, rediss:// or unix:// URL, got scheme 'http'"),
        ('url = "redis://:6379/0"', "state.url: the URL has no host (redis://host:6379/0)"),
        ('url = "redis://h:99999/0"', "state.url: not a valid URL (Port out of range 0-65535)"),
        ('url = "redis://h:6379/x"', "state.url: the database after the host must be a number (/0), got /x"),
        ('url = "unix://"', "state.url: a unix:// URL needs the socket path (unix:///run/redis.sock)"),
        ('key_prefix = "a{b}:"', "state.key_prefix: must not contain { or } (Redis Cluster hash tags are the first "
                                 "{...} of a key)"),
        ("op_timeout_ms = 0", "state.op_timeout_ms: must be > 0, got 0"),
        ('when_unavailable = "drop"', 'state.when_unavailable: expected one of memory, refuse; got "drop"'),
        ('url = "${NO_SUCH_VAR}"', "state.url: environment variable NO_SUCH_VAR is not set"),
        ("op_timeout = 5", 'state.op_timeout: unknown key (did you mean "op_timeout_ms"?)'),
    ],
)
def test_state_errors_name_file_key_and_problem(tmp_path: Path, state: str, message: str) -> None:
    path = write(tmp_path, state)
    _config, problems = check_config(path, env={})
    assert [str(p) for p in problems if not p.warning] == [f"{path}: {message}"]


def test_check_warns_with_the_exact_error_when_redis_does_not_answer(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    path = write(tmp_path, f'backend = "redis"\nurl = "redis://:secret@127.0.0.1:{port}/0"\n')
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"warning: {path}: state.url: cannot reach Redis at redis://:***@127.0.0.1:{port}/0 (redis ping: "
        f"ConnectionError: Error 111 connecting to 127.0.0.1:{port}. Connect call failed ('127.0.0.1', {port}).); "
        "the proxy would start on its per-process memory fallback and switch to Redis when it answers",
        "ok: 1 agent, 1 channel"]


def test_check_is_quiet_when_redis_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, f'backend = "redis"\nurl = "{require_redis()}"\n')
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.splitlines() == ["ok: 1 agent, 1 channel"]


def test_serve_refuses_several_workers_on_the_memory_backend(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, 'backend = "memory"\n')
    assert main(["serve", "--config", path, "--workers", "2"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f'{path}: state.backend: --workers 2 needs backend = "redis": with "memory" every worker process keeps its '
        "own routes and delivery log, so a conversation would change agent from one message to the next and a "
        "platform retry reaching another worker would be forwarded twice"]
