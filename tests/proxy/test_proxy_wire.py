"""Wire behaviour against the proxy on a real uvicorn at 127.0.0.1: chunked bodies, hop-by-hop
headers, clients that disconnect early, and the admin listener."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from stickyroute.config import load_config
from stickyroute.config.model import UpstreamSettings
from stickyroute.server.service import Service
from tests.proxy.harness import sha, telegram_text, upstream_set, write_config
from tests.server.listeners import serving
from tests.upstreams import serve_app

GUARD_S = 10.0


@contextlib.contextmanager
def running_proxy(config) -> Iterator[tuple[str, Service]]:
    service = Service(config, env={})
    with serve_app(service.public_app(), lifespan="on") as base:
        yield base, service


@contextlib.contextmanager
def running_edge_proxy(config) -> Iterator[tuple[str, Service]]:
    """The proxy on its own webhook listener (`EdgeProtocol`, as `serve` runs it)."""
    service = Service(config, env={})
    with serving(service) as (public, _admin):
        yield f"http://{public.address[0]}:{public.address[1]}", service


RUNNERS = {"uvicorn": running_proxy, "edge": running_edge_proxy}
"""A plain uvicorn (the hang-up read from `receive`) and the proxy's own listener (reported by
the connection itself)."""


def raw_request(base: str, head: bytes, body: bytes = b"") -> bytes:
    """Send raw bytes on a fresh socket and read the whole reply (the server closes it)."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=GUARD_S) as sock:
        sock.sendall(head + body)
        chunks = []
        while True:
            data = sock.recv(65536)
            if not data:
                break
            chunks.append(data)
    return b"".join(chunks)


async def test_chunked_64k_body_forwarded_whole_with_one_framing_header(tmp_path):
    """T30 + T31: chunked inbound, no Content-Length; upstream gets the same bytes, Content-Length only."""
    body = telegram_text(1, "x" * 65536)

    async def chunks() -> AsyncIterator[bytes]:
        for i in range(0, len(body), 4096):
            yield body[i:i + 4096]

    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        with running_proxy(config) as (base, _service):
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                response = await client.post(base + "/webhooks/telegram", content=chunks(),
                                              headers={"content-type": "application/json"})
        assert response.status_code == 200
        (request,) = ups["general"].requests
        assert sha(request.body) == sha(body)
        assert request.header_values(b"content-length") == [str(len(body)).encode()]
        assert request.header_values(b"transfer-encoding") == []


def test_hop_by_hop_headers_stripped_on_the_wire(tmp_path):
    """T31: Connection and every header it names, Keep-Alive, TE, Upgrade never reach the agent."""
    body = telegram_text(1, "hello there")
    head = (b"POST /webhooks/telegram HTTP/1.1\r\nHost: hooks.example.test\r\nContent-Type: application/json\r\n"
            b"Connection: keep-alive, X-Debug\r\nX-Debug: 1\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\n"
            b"Proxy-Authorization: Basic eDp5\r\nX-Hub-Signature-256: sha256=abc\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    with upstream_set("general") as ups:
        ups["general"].respond(status=200, headers=[(b"content-type", b"application/json"), (b"x-agent-header", b"1")],
                               body=b'{"ok":true}')
        config = write_config(tmp_path, ups)
        with running_proxy(config) as (base, _service):
            reply = raw_request(base, head.replace(b"Connection: keep-alive, X-Debug", b"Connection: close, X-Debug"), body)
        assert reply.startswith(b"HTTP/1.1 200")
        assert b"x-agent-header: 1" in reply.lower()
        (request,) = ups["general"].requests
        names = set(request.header_names)
        assert not names & {b"connection", b"x-debug", b"keep-alive", b"te", b"proxy-authorization", b"upgrade",
                            b"transfer-encoding"}
        assert request.header_values(b"x-hub-signature-256") == [b"sha256=abc"]
        assert request.header_values(b"x-forwarded-host") == [b"hooks.example.test"]
        assert request.header_values(b"x-forwarded-for") == [b"127.0.0.1"]


def test_a_secret_token_named_in_connection_passes_the_check_and_reaches_the_agent(tmp_path):
    """Issue #10: a signature header listed in `Connection` is checked at the edge and forwarded."""
    body = telegram_text(1, "hello there")
    head = (b"POST /webhooks/telegram HTTP/1.1\r\nHost: hooks.example.test\r\nContent-Type: application/json\r\n"
            b"Connection: close, X-Telegram-Bot-Api-Secret-Token\r\nX-Telegram-Bot-Api-Secret-Token: tg-secret-1\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, telegram='secret_token = "tg-secret-1"')
        with running_proxy(config) as (base, _service):
            reply = raw_request(base, head, body)
        assert reply.startswith(b"HTTP/1.1 200")
        (request,) = ups["general"].requests
        assert request.header_values(b"x-telegram-bot-api-secret-token") == [b"tg-secret-1"]
        assert request.header_values(b"connection") == []


async def _until(condition, what: str) -> None:
    """Poll `condition()` (a read of the proxy thread's counters) under the hang guard."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + GUARD_S
    while not condition():
        assert loop.time() < deadline, f"hang guard: {what}"
        await asyncio.sleep(0.01)


@contextlib.contextmanager
def _sent(base: str, payload: bytes) -> Iterator[None]:
    """Send a whole request; hang up (without reading the answer) when the block ends."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=GUARD_S) as sock:
        sock.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
        yield


def _abort(base: str, payload: bytes) -> None:
    with _sent(base, payload):
        pass


async def test_clients_that_disconnect_early_release_upstream_connections(tmp_path):
    """T34: 20 aborted clients against a hanging agent, pool of 4: every forward is cancelled when its
    client hangs up (the agent still hangs), then a normal request succeeds."""
    body = telegram_text(1, "hello there")
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = write_config(tmp_path, ups)
        config = type(config)(**{**{f: getattr(config, f) for f in config.__dataclass_fields__},
                                 "upstream": UpstreamSettings(connect_timeout_s=2.0, timeout_s=5.0, max_connections=4)})
        with running_proxy(config) as (base, service):
            for n in range(20):
                _abort(base, telegram_text(100 + n, "aborted client"))
            pools = service.dispatcher.leg.pools
            await _until(lambda: pools.in_use.get("general") == 0, "forwards of aborted clients still hold the pool")
            assert await ups["general"].until_open_connections_at_most(0) == 0
            ups["general"].respond()
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                response = await client.post(base + "/webhooks/telegram", content=body)
            assert response.status_code == 200
            assert await ups["general"].until_open_connections_at_most(4) <= 4
        assert body in [r.body for r in ups["general"].requests]
        assert len(ups["general"].requests) <= 21


@pytest.mark.parametrize("listener", sorted(RUNNERS))
async def test_a_platform_that_hangs_up_cancels_the_upstream_request_and_its_retry_is_forwarded(tmp_path, listener):
    """Issue #10: the upstream request is cancelled when the platform's connection goes away (its
    pooled connection closes while the agent still hangs); the delivery is released, so the
    platform's retry is forwarded again. On both a plain uvicorn and the proxy's own listener."""
    body = telegram_text(7, "hello there")
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = write_config(tmp_path, ups)
        with RUNNERS[listener](config) as (base, service):
            with _sent(base, body):
                await ups["general"].until_requests(1)
            assert await ups["general"].until_open_connections_at_most(0) == 0
            ups["general"].respond()
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                retry = await client.post(base + "/webhooks/telegram", content=body)
        assert (retry.status_code, len(ups["general"].requests)) == (200, 2)
        assert service.dispatcher.leg.pools.in_use == {"general": 0}
        assert service.dispatcher.leg.failures == {("general", "platform_gone"): 1}


async def test_admin_listener_health_ready_stats_metrics(tmp_path):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, top='[admin]\ntoken = "a-long-enough-admin-token"')
        service = Service(config, env={})
        with serve_app(service.admin_app(), lifespan="off") as admin:
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                health = await client.get(admin + "/healthz")
                not_ready = await client.get(admin + "/readyz")
                await service.start()
                ready = await client.get(admin + "/readyz")
                stats = await client.get(admin + "/stats", headers={"authorization": "Bearer a-long-enough-admin-token"})
                metrics = await client.get(admin + "/metrics")
        await service.aclose()
    assert (health.status_code, health.text) == (200, "ok")
    assert (not_ready.status_code, ready.status_code) == (503, 200)
    assert stats.json()["classifier"]["provider"] == "keywords"
    assert stats.json()["routes"] == {"telegram": 0, "whatsapp": 0}
    assert metrics.status_code == 200 and "stickyroute_classifier" in metrics.text


def test_channel_paths_answer_like_starlettes_router_around_the_shortcut(tmp_path):
    """Issue #8 (performance): exact channel paths skip Starlette's stack, and nothing else changes:
    a method Starlette does not route on them is still 405, a near miss of the path still 404,
    and an exact path reaches the agent."""
    body = telegram_text(1, "hello there")

    def head(method: bytes, path: bytes) -> bytes:
        return (method + b" " + path + b" HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Type: application/json"
                b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")

    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        with running_proxy(config) as (base, _service):
            exact = raw_request(base, head(b"POST", b"/webhooks/telegram"), body)
            trace = raw_request(base, head(b"TRACE", b"/webhooks/telegram"), body)
            slash = raw_request(base, head(b"POST", b"/webhooks/telegram/"), body)
            deeper = raw_request(base, head(b"POST", b"/webhooks/telegram/x"), body)
    assert exact.split(b"\r\n", 1)[0] == b"HTTP/1.1 200 OK"
    assert trace.split(b"\r\n", 1)[0] == b"HTTP/1.1 405 Method Not Allowed"
    assert slash.split(b"\r\n", 1)[0] == b"HTTP/1.1 404 Not Found"
    assert deeper.split(b"\r\n", 1)[0] == b"HTTP/1.1 404 Not Found"
    assert len(ups["general"].requests) == 1


def test_a_channel_path_with_an_encoded_newline_after_it_is_not_found(tmp_path):
    """Channel paths are exact: `/webhooks/telegram%0A` (path "/webhooks/telegram\\n") is 404 and reaches no
    agent (Starlette's route regex ends in `$`, which also matches before a final newline)."""
    body = telegram_text(1, "hello there")
    head = (b"POST /webhooks/telegram%0A HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Type: application/json"
            b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        with running_proxy(config) as (base, _service):
            reply = raw_request(base, head, body)
    assert reply.split(b"\r\n", 1)[0] == b"HTTP/1.1 404 Not Found"
    assert ups["general"].requests == []


def test_a_channel_path_with_braces_is_exact_not_a_pattern(tmp_path):
    """A configured path is exact even when it holds `{...}` (Starlette reads it as a parameter): only
    the path itself reaches the channel, a path the braces would match is 404."""
    body = telegram_text(1, "hello there")

    def head(path: bytes) -> bytes:
        return (b"POST " + path + b" HTTP/1.1\r\nHost: h\r\nConnection: close\r\nContent-Type: application/json"
                b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n")

    with upstream_set("general") as ups:
        write_config(tmp_path, ups)
        toml = tmp_path / "proxy.toml"
        toml.write_text(toml.read_text().replace('path = "/webhooks/telegram"', 'path = "/hooks/{bot}"'))
        config = load_config(toml, env={})
        with running_proxy(config) as (base, _service):
            other = raw_request(base, head(b"/hooks/other"), body)
            exact = raw_request(base, head(b"/hooks/%7Bbot%7D"), body)
    assert other.split(b"\r\n", 1)[0] == b"HTTP/1.1 404 Not Found"
    assert exact.split(b"\r\n", 1)[0] == b"HTTP/1.1 200 OK"
    assert [r.raw_path for r in ups["general"].requests] == [b"/hooks/%7Bbot%7D"]
