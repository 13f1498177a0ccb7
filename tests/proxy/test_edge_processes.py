"""The listeners' edge in a real `stickyroute serve` process: a flood of idle connections holds at
most `max_connections` descriptors of the process (counted in /proc/<pid>/fd) while the admin
listener keeps answering; with `--workers 2` each worker caps its own share and the body
deadline cuts a slow body."""

from __future__ import annotations

import asyncio
import os
import select
import socket
import time
from pathlib import Path

import httpx

from tests.proxy.harness import upstream_set, write_config
from tests.proxy.processes import ProxyProcess
from tests.redis_server import flush_prefix, private_prefix, require_redis
from tests.server.listeners import HANG_GUARD_S, closed_after, connect, read_until_closed

FLOOD = 200
CAP = 20
SLACK = 12
"""Descriptors the process may open besides the held connections meanwhile (logs, pools, probes)."""
PARTIAL = b"GET /webhooks/telegram HTTP/1.1\r\nHost: hooks.example.test\r\n"


def descriptors(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def flood(address: tuple[str, int], count: int) -> list[socket.socket]:
    """`count` connections, each with half a request line sent (never finished)."""
    socks = []
    for _ in range(count):
        sock = connect(address)
        sock.sendall(PARTIAL)
        socks.append(sock)
    return socks


def refusals(socks: list[socket.socket], wanted: int) -> tuple[list[bytes], list[socket.socket]]:
    """Read the connections the server answers and closes until `wanted` of them were (hang-
    guarded); (their answers, the connections still open)."""
    answers: list[bytes] = []
    open_ = list(socks)
    deadline = time.monotonic() + HANG_GUARD_S
    while len(answers) < wanted and time.monotonic() < deadline:
        readable, _, _ = select.select(open_, [], [], 0.2)
        for sock in readable:
            answers.append(read_until_closed(sock))
            open_.remove(sock)
    return answers, open_


def edge_toml(**limits: object) -> str:
    return "[server]\n" + "\n".join(f"{k} = {v}" for k, v in limits.items()) + "\n"


def test_an_idle_connection_flood_holds_at_most_max_connections_descriptors(tmp_path: Path) -> None:
    with upstream_set("general") as ups:
        write_config(tmp_path, ups, top=edge_toml(max_connections=CAP, header_timeout_s=60))
        with ProxyProcess(tmp_path / "proxy.toml") as proxy:
            assert proxy.process is not None
            pid = proxy.process.pid
            address = ("127.0.0.1", proxy.port)
            before = descriptors(pid)
            socks = flood(address, FLOOD)
            try:
                answers, held = refusals(socks, FLOOD - CAP)
                during = descriptors(pid)
                probe = httpx.get(proxy.admin + "/healthz", timeout=HANG_GUARD_S)
                with connect(address) as late:
                    late.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
                    webhook = read_until_closed(late)
            finally:
                for sock in socks:
                    sock.close()
    assert (len(answers), len(held)) == (FLOOD - CAP, CAP)
    assert {a.split(b"\r\n", 1)[0] for a in answers} == {b"HTTP/1.1 503 Service Unavailable"}
    assert during <= before + CAP + SLACK, (before, during)
    assert probe.status_code == 200  # the admin listener has its own cap
    assert webhook.startswith(b"HTTP/1.1 503 ")  # a clear answer past the cap


def test_with_two_workers_each_caps_its_connections_and_the_body_deadline_holds(tmp_path: Path) -> None:
    url, prefix = require_redis(), private_prefix()
    state = f'[state]\nbackend = "redis"\nurl = "{url}"\nkey_prefix = "{prefix}"\nop_timeout_ms = 1000\n'
    cap, workers, count = 3, 2, 12
    try:
        with upstream_set("general") as ups:
            write_config(tmp_path, ups, top=state + edge_toml(max_connections=cap, header_timeout_s=60,
                                                               body_timeout_s=1))
            with ProxyProcess(tmp_path / "proxy.toml", workers=workers) as proxy:
                address = ("127.0.0.1", proxy.port)
                socks = flood(address, count)
                try:  # at most cap x workers are held: the others are refused (which worker took which varies)
                    answers, held = refusals(socks, count - cap * workers)
                finally:
                    for sock in socks:
                        sock.close()
                elapsed = None
                deadline = time.monotonic() + HANG_GUARD_S
                while elapsed is None and time.monotonic() < deadline:  # until a worker has room again
                    with connect(address) as slow:
                        started = time.monotonic()
                        slow.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 100\r\n\r\n{")
                        readable, _, _ = select.select([slow], [], [], 0.5)
                        if readable and slow.recv(64, socket.MSG_PEEK).startswith(b"HTTP/1.1 503"):
                            continue
                        elapsed = closed_after(slow, started)
            forwarded = ups["general"].requests
    finally:
        asyncio.run(flush_prefix(url, prefix))
    assert len(answers) >= count - cap * workers and len(held) <= cap * workers
    assert {a.split(b"\r\n", 1)[0] for a in answers} == {b"HTTP/1.1 503 Service Unavailable"}
    assert elapsed is not None and 1.0 <= elapsed < 1.0 + 6.0, elapsed
    assert forwarded == []
