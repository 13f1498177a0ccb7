"""The properties every fuzzed body must keep; each check returns the violations (empty: kept).

    check_adapter(platform, body)        never an exception out of handshake or authenticate (any
                                         headers, secrets set), nor but UnparsedUpdate out of parse;
                                         every envelope's ids of the declared types; one str
                                         delivery key per envelope; a split is parts of JSON or a
                                         SplitError
    await Target.create().check(platform, body)
                                         through the real dispatcher, router and adapters (agents
                                         replaced by a leg that answers 200 and records): never a
                                         5xx; every forward byte-identical to the input, or (a
                                         split batch) a JSON part
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any

from stickyroute.channels import ADAPTERS, BodyPart, Request, SplitError
from stickyroute.config import load_config
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.forwarding.inbound import Inbound
from stickyroute.reply import Reply
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.server.service import Service

CONFIG = Path(__file__).resolve().parents[2] / "config" / "proxy.toml"
_OPTIONAL_STR = ("delivery_id", "sender_id", "chat_id", "thread_id", "text")
BATCHED = ("whatsapp", "line", "messenger", "instagram")
"""The platforms whose bodies hold several items (split per agent)."""


def _envelope_problems(envelope: object) -> list[str]:
    if not isinstance(envelope, Envelope):
        return [f"not an Envelope: {type(envelope).__name__}"]
    found = [f"{name} is {type(getattr(envelope, name)).__name__}" for name in _OPTIONAL_STR
             if getattr(envelope, name) is not None and not isinstance(getattr(envelope, name), str)]
    if not isinstance(envelope.kind, MessageKind):
        found.append("kind is not a MessageKind")
    if not isinstance(envelope.sender_aliases, tuple) or not all(isinstance(a, str) for a in envelope.sender_aliases):
        found.append(f"sender_aliases {envelope.sender_aliases!r}")
    if envelope.sender_id is not None and envelope.sender_aliases and envelope.sender_id != envelope.sender_aliases[0]:
        found.append("sender_id is not the first alias")
    if not all(isinstance(p, (int, str)) and not isinstance(p, bool) for p in envelope.item_path):
        found.append(f"item_path {envelope.item_path!r}")
    return found


def check_adapter(platform: str, body: bytes) -> list[str]:
    """Adapter-level properties of one body (module docstring)."""
    adapter = ADAPTERS[ChannelType(platform)]
    edges = _edges(platform, body)
    try:
        envelopes = adapter.parse(body, [], platform)
    except UnparsedUpdate:
        return edges
    except Exception as exc:  # the property: nothing else escapes
        return [*edges, f"parse raised {type(exc).__name__}: {exc}"]
    problems = edges + [p for e in envelopes for p in _envelope_problems(e)]
    if not envelopes:
        problems.append("no envelope")
    try:
        keys = adapter.delivery_ids(envelopes, body)
    except Exception as exc:
        return [*problems, f"delivery_ids raised {type(exc).__name__}: {exc}"]
    if len(keys) != len(envelopes) or not all(isinstance(k, str) for k in keys):
        problems.append(f"delivery ids {keys!r}")
    if platform in BATCHED and len(envelopes) > 1:
        halves = {"a": [e.item_path for e in envelopes[::2]], "b": [e.item_path for e in envelopes[1::2]]}
        signed = dataclasses.replace(_config().channels[platform], app_secret="s", channel_secret="s")
        try:
            parts = adapter.split(signed, body, halves)
            for part in parts.values():
                json.loads(part.body)
        except SplitError:
            pass
        except Exception as exc:
            problems.append(f"split raised {type(exc).__name__}: {exc}")
    return problems


def _edges(platform: str, body: bytes) -> list[str]:
    """handshake and authenticate never raise, whatever the body and headers (secrets set)."""
    adapter = ADAPTERS[ChannelType(platform)]
    channel = dataclasses.replace(_config().channels[platform], app_secret="s", signing_secret="s",
                                  channel_secret="s", public_key="00" * 32, secret_token="s")
    headers = [(b"x-slack-signature", b"v0=" + body[:64]), (b"x-slack-request-timestamp", body[:12]),
               (b"x-signature-ed25519", body[:128]), (b"x-signature-timestamp", body[:10]),
               (b"x-line-signature", body[:44]), (b"x-hub-signature-256", b"sha256=" + body[:64])]
    problems = []
    for method in ("POST", "GET"):
        request = Request(method, body[:64], headers, body)
        for name in ("handshake", "authenticate"):
            try:
                getattr(adapter, name)(channel, request, 1767600000.0)
            except Exception as exc:  # the property: nothing escapes
                problems.append(f"{name} raised {type(exc).__name__}: {exc}")
    return problems


_CACHE: dict[str, Any] = {}


def _config() -> Any:
    """The shipped config, plus a channel of every other platform named after it (no secrets,
    the routing of the shipped Telegram channel)."""
    if "config" not in _CACHE:
        base = load_config(CONFIG, env={})
        template = base.channels["telegram"]
        extra = {kind.value: Channel(kind.value, kind, (f"/{kind.value}",), template.default_agent,
                                     routing=template.routing)
                 for kind in ChannelType if kind.value not in base.channels}
        _CACHE["config"] = dataclasses.replace(base, channels=MappingProxyType({**base.channels, **extra}))
    return _CACHE["config"]


class RecordingLeg:
    """A forwarding leg that answers 200 and records what it was given (agent, body, part)."""

    def __init__(self) -> None:
        self.forwards: list[tuple[str, bytes, BodyPart | None]] = []

    async def forward(self, inbound: Inbound, agent: Agent, channel: str, reason: str,
                      part: BodyPart | None = None, extra: Sequence[tuple[bytes, bytes]] = ()) -> Reply:
        self.forwards.append((agent.name, inbound.body, part))
        return Reply(200, [(b"content-type", b"application/json")], b'{"ok":true}')

    async def aclose(self) -> None:
        return None


class Target:
    """The shipped config's service with a recording leg (one per fuzz run; state accumulates)."""

    def __init__(self, service: Service, leg: RecordingLeg) -> None:
        self.service, self.leg = service, leg

    @classmethod
    async def create(cls) -> Target:
        leg = RecordingLeg()
        service = Service(_config(), env={}, leg=leg)
        await service.start()
        return cls(service, leg)

    async def check(self, platform: str, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> list[str]:
        channel = self.service.config.channels[platform]
        inbound = Inbound("POST", channel.paths[0], channel.paths[0].encode(), b"",
                          [(b"content-type", b"application/json"), *headers], body, "127.0.0.1", "https",
                          "hooks.example.test")
        self.leg.forwards.clear()
        try:
            reply = await self.service.runtime.dispatcher.handle(channel, inbound)
        except Exception as exc:
            return [f"the proxy raised {type(exc).__name__}: {exc}"]
        problems = [f"status {reply.status}"] if reply.status >= 500 else []
        for agent, forwarded, part in self.leg.forwards:
            if part is None and forwarded != body:
                problems.append(f"forwarded body to {agent} differs from the input")
            if part is not None:
                try:
                    json.loads(part.body)
                except ValueError:
                    problems.append(f"split part for {agent} is not JSON")
        return problems

    async def aclose(self) -> None:
        await self.service.aclose()
