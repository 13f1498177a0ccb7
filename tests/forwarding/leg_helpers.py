"""Shared set-up of the forwarding leg tests: inbound requests, agents, a real upstream."""

from __future__ import annotations

import asyncio
import socket

from stickyroute.channels.base import BodyPart
from stickyroute.config.model import Agent, ServerSettings, UpstreamSettings
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.leg import Leg
from stickyroute.reply import Reply
from tests.upstreams import RecordingUpstream

HANG_GUARD_S = 10.0
SETTINGS = UpstreamSettings(connect_timeout_s=5.0, timeout_s=10.0, max_connections=10)
SERVER = ServerSettings(trusted_proxies=("127.0.0.0/8",))
JSON = [(b"content-type", b"application/json")]
TELEGRAM_UPDATE = b'{"update_id":5001,"message":{"message_id":10,"from":{"id":111,"is_bot":false,"first_name":"Ana"},"chat":{"id":111,"type":"private"},"date":1700000000,"text":"what is my balance?"}}'
BODY_64K = (bytes(range(256)) * 256)[: 64 * 1024]
UNTRUSTED = "203.0.113.7"
MARKERS = [(b"x-forwarded-for", UNTRUSTED.encode()), (b"x-forwarded-proto", b"https"),
           (b"x-forwarded-host", b"hooks.example.test"), (b"x-stickyroute-agent", b"billing"),
           (b"x-stickyroute-reason", b"binding")]
"""What the leg appends for an untrusted peer (tests/forwarding/test_headers.py has every rule)."""


def inbound(body: bytes = TELEGRAM_UPDATE, *, method: str = "POST", path: bytes = b"/webhooks/telegram",
            query: bytes = b"", headers: list[tuple[bytes, bytes]] | None = None, client_ip: str = UNTRUSTED) -> Inbound:
    return Inbound(method, path.decode("latin-1"), path, query, JSON if headers is None else headers, body,
                   client_ip, "https", "hooks.example.test")


def agent(up: RecordingUpstream | str, name: str = "billing", **channel_urls: str) -> Agent:
    return Agent(name, up if isinstance(up, str) else up.url, channel_urls=channel_urls)


async def forward(leg: Leg, up: RecordingUpstream | str, request: Inbound | None = None, *,
                  part: BodyPart | None = None, name: str = "billing") -> Reply:
    return await asyncio.wait_for(
        leg.forward(request or inbound(), agent(up, name), "telegram", "binding", part), HANG_GUARD_S)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
