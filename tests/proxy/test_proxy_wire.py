"""Wire behaviour against the proxy on a real uvicorn at 127.0.0.1: chunked bodies, hop-by-hop
headers, clients that disconnect early, and the admin listener."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import AsyncIterator, Iterator

import httpx

from proxy.config.model import UpstreamSettings
from proxy.server.service import Service
from tests.proxy.harness import sha, telegram_text, upstream_set, write_config
from tests.upstreams import serve_app

GUARD_S = 10.0


@contextlib.contextmanager
def running_proxy(config) -> Iterator[tuple[str, Service]]:
    service = Service(config, env={})
    with serve_app(service.public_app(), lifespan="on") as base:
        yield base, service


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


async def test_clients_that_disconnect_early_release_upstream_connections(tmp_path):
    """T34: 20 aborted clients against a slow agent, pool of 4; then a normal request succeeds."""
    body = telegram_text(1, "hello there")
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = write_config(tmp_path, ups)
        config = type(config)(**{**{f: getattr(config, f) for f in config.__dataclass_fields__},
                                 "upstream": UpstreamSettings(connect_timeout_s=2.0, timeout_s=5.0, max_connections=4)})
        with running_proxy(config) as (base, _service):
            host, port = base.removeprefix("http://").split(":")
            for n in range(20):
                payload = telegram_text(100 + n, "aborted client")
                with socket.create_connection((host, int(port)), timeout=GUARD_S) as sock:
                    sock.sendall(b"POST /webhooks/telegram HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
            await ups["general"].until_requests(4)
            ups["general"].respond()
            ups["general"].release()
            async with httpx.AsyncClient(timeout=GUARD_S) as client:
                response = await client.post(base + "/webhooks/telegram", content=body)
            assert response.status_code == 200
            assert await ups["general"].until_open_connections_at_most(4) <= 4
        assert body in [r.body for r in ups["general"].requests]


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
