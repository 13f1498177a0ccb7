"""`[state]`: backend, url (${REDIS_URL}), key_prefix, op_timeout_ms; `check` warns when Redis
does not answer; `serve --workers N` needs the Redis backend (issue #9 "Configuration")."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.config import check_config, load_config
from stickyroute.config.model import StateSettings
from tests.redis_server import OwnCluster, OwnSentinel, free_port, require_redis

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


def test_a_delivery_claim_is_a_five_second_lease_by_default(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, 'backend = "redis"\nclaim_lease_s = 2.5\n'), env={})
    assert (StateSettings().claim_lease_s, config.state.claim_lease_s) == (5.0, 2.5)


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
        ("claim_lease_s = 0", "state.claim_lease_s: must be > 0, got 0"),
        ('claim_lease_s = "5"', 'state.claim_lease_s: expected a number, got the string "5"'),
        ('when_unavailable = "drop"', 'state.when_unavailable: expected one of memory, refuse; got "drop"'),
        ('url = "${NO_SUCH_VAR}"', "state.url: environment variable NO_SUCH_VAR is not set"),
        ("op_timeout = 5", 'state.op_timeout: unknown key (did you mean "op_timeout_ms"?)'),
        ('mode = "ring"', 'state.mode: expected one of single, cluster, sentinel; got "ring"'),
        ('mode = "sentinel"\nmaster = "mymaster"',
         'state.sentinels: is required with mode = "sentinel" (the sentinels\' "host:port" addresses)'),
        ('mode = "sentinel"\nsentinels = ["127.0.0.1:26379"]',
         'state.master: is required with mode = "sentinel" (the master name the sentinels monitor)'),
        ('mode = "sentinel"\nmaster = "m"\nsentinels = []',
         'state.sentinels: is required with mode = "sentinel" (the sentinels\' "host:port" addresses)'),
        ('mode = "sentinel"\nmaster = "m"\nsentinels = ["127.0.0.1:26379", "sentinel-b"]',
         'state.sentinels[1]: expected "host:port", got "sentinel-b"'),
        ('mode = "sentinel"\nmaster = "m"\nsentinels = ["127.0.0.1:0"]',
         'state.sentinels[0]: port must be between 1 and 65535, got "127.0.0.1:0"'),
        ('mode = "sentinel"\nmaster = "m"\nsentinels = ["127.0.0.1:26379"]\nurl = "unix:///run/redis.sock"',
         'state.url: mode = "sentinel" needs a redis:// or rediss:// URL (unix sockets are not discovered by '
         "Sentinel)"),
        ('sentinels = ["127.0.0.1:26379"]', 'state.sentinels: only used with mode = "sentinel" (mode is "single")'),
        ('mode = "cluster"\nmaster = "m"', 'state.master: only used with mode = "sentinel" (mode is "cluster")'),
        ('mode = "cluster"\nurl = "unix:///run/redis.sock"',
         'state.url: mode = "cluster" needs a redis:// or rediss:// URL (Redis Cluster has no unix sockets)'),
        ('mode = "cluster"\nurl = "redis://127.0.0.1:7000/2"',
         "state.url: Redis Cluster has only database 0, got /2"),
    ],
)
def test_state_errors_name_file_key_and_problem(tmp_path: Path, state: str, message: str) -> None:
    path = write(tmp_path, state)
    _config, problems = check_config(path, env={})
    assert [str(p) for p in problems if not p.warning] == [f"{path}: {message}"]


def test_cluster_and_sentinel_tables(tmp_path: Path) -> None:
    cluster = load_config(write(tmp_path, 'backend = "redis"\nmode = "cluster"\nurl = "redis://10.0.0.5:7000/0"\n'))
    sentinel = load_config(write(tmp_path, 'backend = "redis"\nmode = "sentinel"\nurl = "redis://:pw@ignored/3"\n'
                                           'sentinels = ["127.0.0.1:26379", "[::1]:26380"]\nmaster = "mymaster"\n'))
    assert (cluster.state.mode, cluster.state.sentinels, cluster.state.master, StateSettings().mode) == (
        "cluster", (), "", "single")
    assert (sentinel.state.mode, sentinel.state.sentinels, sentinel.state.master) == (
        "sentinel", ("127.0.0.1:26379", "[::1]:26380"), "mymaster")


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


def test_check_pings_every_primary_of_a_cluster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OwnCluster() as cluster:
        path = write(tmp_path, f'backend = "redis"\nmode = "cluster"\nurl = "{cluster.url}"\n')
        healthy = main(["check", path]), capsys.readouterr().out.splitlines()
        silent = next(port for port in cluster.primaries() if port != cluster.ports[0])  # the seed stays
        cluster.kill(silent)
        degraded = main(["check", path]), capsys.readouterr().out.splitlines()
    assert healthy == (0, ["ok: 1 agent, 1 channel"])
    assert degraded == (0, [
        f"warning: {path}: state.url: Redis cluster {cluster.url}: primary 127.0.0.1:{silent} does not answer "
        f"(ConnectionError: Error 111 connecting to 127.0.0.1:{silent}. Connect call failed ('127.0.0.1', {silent}).)"
        "; until a replica takes over, the updates whose keys live in its slots answer 503 or are routed from the "
        "last route seen",
        "ok: 1 agent, 1 channel"])


def test_check_asks_the_sentinels_for_the_master_and_pings_it(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    with OwnSentinel() as setup:
        state = (f'backend = "redis"\nmode = "sentinel"\nsentinels = ["{setup.sentinels[0]}"]\n'
                 f'master = "{setup.master}"\n')
        found = main(["check", write(tmp_path, state)]), capsys.readouterr().out.splitlines()
        path = write(tmp_path, state.replace(setup.master, "nobody"))
        unknown = main(["check", path]), capsys.readouterr().out.splitlines()
    assert found == (0, ["ok: 1 agent, 1 channel"])
    assert unknown == (0, [
        f"warning: {path}: state.sentinels: cannot reach Redis at sentinel master 'nobody' via {setup.sentinels[0]} "
        "(redis ping: MasterNotFoundError: No master found for 'nobody'); the proxy would start on its "
        "per-process memory fallback and switch to Redis when it answers",
        "ok: 1 agent, 1 channel"])
