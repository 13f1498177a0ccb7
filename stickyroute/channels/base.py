"""The channel protocol: what the dispatcher asks of a platform, and nothing platform-specific.

    handshake(channel, request, now) -> Reply | None   a verification answered by the proxy
    authenticate(channel, request, now) -> bool        the platform's secret / signature holds
    parse(body, headers, channel) -> envelopes         1..n routable items, body order
    delivery_ids(envelopes, body) -> ids               one redelivery key per envelope
    split(channel, body, parts) -> {agent: BodyPart}   one body per agent (batch platforms)
    agent_list(envelope, agents, current) -> Reply|None  `/agent` alone, or an envelope addressed
                                                       `to_proxy`, answered by the proxy

Every method is pure (no I/O, no clock: `now` is the dispatcher's wall-clock reading, seconds).
`handshake` runs first and sees the whole request: a verification that the platform signs (Slack
`url_verification`, Discord PING, LINE's empty `events`) is answered only when its signature
holds, else it returns None and `authenticate` answers 401; an unsigned one (Meta's GET, Slack's
`ssl_check`) is answered as it comes. `parse` raises `UnparsedUpdate` for a body it cannot read
(the dispatcher forwards it unchanged to the default agent); `split` raises `SplitError` when the
body cannot be split (the dispatcher forwards it whole to the default agent).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from stickyroute.config.ids import bounded_id
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import StickyrouteError
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope

ItemPath = tuple[int | str, ...]
"""Where an item sits inside a batch body (`Envelope.item_path`); `()` for a one-item body."""


class SplitError(StickyrouteError, ValueError):
    """A batch body cannot be split into per-agent bodies (unknown item, too deep...)."""


@dataclass(frozen=True, slots=True)
class Request:
    """What authentication may look at: method, raw query (no `?`), raw headers, body bytes."""

    method: str
    query: bytes
    headers: RawHeaders
    body: bytes


@dataclass(frozen=True, slots=True)
class BodyPart:
    """One agent's part of a split batch: its body and the headers that change with it.

    `drop` names (lower-case bytes) inbound headers not to forward with this part (the
    original signature); `add` are appended (the part's own signature).
    """

    body: bytes
    drop: frozenset[bytes] = frozenset()
    add: RawHeaders = field(default_factory=list)


class ChannelAdapter(Protocol):
    """One platform's rules, behind one registry keyed by `ChannelType` (proxy.channels)."""

    type: ChannelType
    lists_agents: bool
    """The proxy can answer `/agent` alone itself (see `agent_list`)."""

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """The proxy's own answer to a platform verification request, or None (not one, or a
        signed one whose signature does not hold: `authenticate` then answers 401)."""
        ...

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """True when the request carries the channel's secret or a valid signature (or when the
        channel configures none); `now` (seconds) bounds a signed timestamp's age (Slack)."""
        ...

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """The envelopes of one webhook body, in body order; UnparsedUpdate for a bad body."""
        ...

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """One redelivery key per envelope, in order (see `ids_or_positions`)."""
        ...

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """One body per agent holding only that agent's items; SplitError when impossible."""
        ...

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """The proxy's answer to `/agent` alone or to an envelope addressed `to_proxy` (every
        agent, `current` marked: the agent the conversation is on after the decision), or None
        to forward it to the current agent."""
        ...


def ids_or_positions(envelopes: Sequence[Envelope], body: bytes) -> list[str]:
    """Each envelope's delivery id (`bounded_id`: a long one as its digest), or for an item without
    one (an account event) its place in this exact body (`<16 hex of SHA-256(body)>:<item path>`),
    so a retried POST finds it."""
    digest: str | None = None
    keys = []
    for envelope in envelopes:
        if envelope.delivery_id is not None:
            keys.append(bounded_id(envelope.delivery_id))  # `<wamid>:<status>` is built, not normalised
            continue
        if digest is None:
            digest = hashlib.sha256(body).hexdigest()[:16]
        keys.append(f"{digest}:{'/'.join(map(str, envelope.item_path))}")
    return keys
