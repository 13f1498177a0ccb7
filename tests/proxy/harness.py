"""A running proxy for end-to-end tests: real upstream agents on 127.0.0.1, the app in-process.

    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, default="general", telegram="...", whatsapp="...")
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram", body)

The public app is driven through `httpx.ASGITransport` with client address 203.0.113.7 (an
untrusted peer); the forwarding leg is the product's real pooled client to real servers.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx

from stickyroute.config import load_config
from stickyroute.config.model import Config
from stickyroute.server.service import Service
from tests.upstreams import RecordingUpstream

PAYLOADS = Path(__file__).resolve().parents[1] / "channels" / "payloads"
CLIENT_IP = "203.0.113.7"


def payload(platform: str, name: str) -> bytes:
    """A shipped sample body, byte for byte."""
    return (PAYLOADS / platform / f"{name}.json").read_bytes()


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


@contextlib.contextmanager
def upstream_set(*names: str) -> Iterator[dict[str, RecordingUpstream]]:
    """One recording upstream per agent name."""
    with contextlib.ExitStack() as stack:
        yield {name: stack.enter_context(RecordingUpstream()) for name in names}


def write_config(tmp_path: Path, upstreams: Mapping[str, RecordingUpstream], *, default: str = "general",
                 telegram: str = "", whatsapp: str = "", agents: Mapping[str, str] | None = None,
                 top: str = "") -> Config:
    """Write and load a config: one agent per upstream (extra TOML per agent in `agents`),
    channels telegram (/webhooks/telegram) and whatsapp (/webhooks/whatsapp) with `default`."""
    lines = [top, "[upstream]", "timeout_s = 5.0", "connect_timeout_s = 2.0", ""]
    for name, upstream in upstreams.items():
        lines += [f'[agents."{name}"]', f'url = "{upstream.url}"', f'description = "the {name} agent"']
        lines += [(agents or {}).get(name, ""), ""]
    lines += ["[channels.telegram]", 'path = "/webhooks/telegram"', f'default_agent = "{default}"', telegram, ""]
    lines += ["[channels.whatsapp]", 'path = "/webhooks/whatsapp"', f'default_agent = "{default}"', whatsapp, ""]
    path = tmp_path / "proxy.toml"
    path.write_text("\n".join(lines))
    return load_config(path, env={})


def write_channels(tmp_path: Path, upstreams: Mapping[str, RecordingUpstream], channels: Mapping[str, str],
                   *, agents: Mapping[str, str] | None = None, top: str = "") -> Config:
    """Write and load a config: one agent per upstream (extra TOML per agent in `agents`) and one
    channel per entry of `channels` (name -> its TOML body: type, default_agent, secrets...), on
    the path /webhooks/<name>."""
    lines = [top, "[upstream]", "timeout_s = 5.0", "connect_timeout_s = 2.0", ""]
    for name, upstream in upstreams.items():
        lines += [f'[agents."{name}"]', f'url = "{upstream.url}"', f'description = "the {name} agent"']
        lines += [(agents or {}).get(name, ""), ""]
    for name, body in channels.items():
        lines += [f"[channels.{name}]", f'path = "/webhooks/{name}"', body, ""]
    path = tmp_path / "proxy.toml"
    path.write_text("\n".join(lines))
    return load_config(path, env={})


def telegram_text(update_id: int, text: str, *, user: int = 111, chat: int | None = None,
                  thread: int | None = None, topic: bool = False) -> bytes:
    """A compact Telegram text update (Bot API Update.message)."""
    message: dict[str, Any] = {
        "message_id": update_id, "from": {"id": user, "is_bot": False, "first_name": "Ana"},
        "chat": {"id": chat if chat is not None else user, "type": "private" if chat is None else "supergroup"},
        "date": 1700000000, "text": text,
    }
    if thread is not None:
        message["message_thread_id"] = thread
    if topic:
        message["is_topic_message"] = True
    return json.dumps({"update_id": update_id, "message": message}).encode()


def whatsapp_text(messages: list[tuple[str, str, str]]) -> bytes:
    """A WhatsApp Cloud API body with one change holding (from, wamid, text) messages."""
    value = {
        "messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
        "contacts": [{"wa_id": frm, "profile": {"name": "User"}} for frm, _, _ in messages],
        "messages": [{"from": frm, "id": wamid, "timestamp": "1700000000", "type": "text", "text": {"body": text}}
                     for frm, wamid, text in messages],
    }
    doc = {"object": "whatsapp_business_account",
           "entry": [{"id": "WABA1", "changes": [{"field": "messages", "value": value}]}]}
    return json.dumps(doc, separators=(",", ":")).encode()


class Proxy:
    """The service with its public app behind an in-process client (async context manager)."""

    def __init__(self, config: Config, env: Mapping[str, str] | None = None,
                 groq_http_client: httpx.AsyncClient | None = None, clock: Any = None,
                 client_ip: str = CLIENT_IP, recorder: Any = None) -> None:
        kwargs: dict[str, Any] = {"env": dict(env or {}), "groq_http_client": groq_http_client,
                                  "recorder": recorder}
        if clock is not None:
            kwargs["clock"] = kwargs["guard_clock"] = clock
        self.service = Service(config, **kwargs)
        self.client: httpx.AsyncClient | None = None
        self.client_ip = client_ip

    async def __aenter__(self) -> Proxy:
        await self.service.start()
        transport = httpx.ASGITransport(app=self.service.public_app(), client=(self.client_ip, 40000))
        self.client = httpx.AsyncClient(transport=transport, base_url="http://hooks.example.test")
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.client is not None
        await self.client.aclose()
        await self.service.aclose()

    async def post(self, path: str, body: bytes, headers: Mapping[str, str] | None = None) -> httpx.Response:
        """POST raw bytes to the proxy."""
        assert self.client is not None
        merged = {"content-type": "application/json", **(headers or {})}
        return await self.client.post(path, content=body, headers=merged)

    async def live_routes(self, channel: str) -> int:
        """Live routes of `channel` in the service's state backend, at its clock's time."""
        assert self.service.dispatcher is not None
        return await self.service.state.views.count(channel, self.service.dispatcher.clock())

    async def get(self, path: str) -> httpx.Response:
        assert self.client is not None
        return await self.client.get(path)
