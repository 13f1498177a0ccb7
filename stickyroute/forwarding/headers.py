"""Header rules of the forwarding leg: hop-by-hop stripping, X-Forwarded-*, our own markers.

Pure functions over ASGI-style raw headers: `list[tuple[bytes, bytes]]`, names in any case,
values as received (latin-1 bytes), order and duplicates kept.

Sources: RFC 9110 section 7.6.1 (hop-by-hop fields, including every field named in
`Connection`); RFC 9112 section 6.3 (never send `Transfer-Encoding` next to a `Content-Length`);
de-facto `X-Forwarded-For/Proto/Host` (extended behind a trusted proxy, replaced otherwise).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from urllib.parse import quote

RawHeaders = list[tuple[bytes, bytes]]

HOP_BY_HOP: frozenset[bytes] = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-connection",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
    }
)
"""Lower-case names never forwarded in either direction (RFC 9110 7.6.1, plus the
non-standard `Proxy-Connection` some clients still send)."""

SIGNATURE_HEADERS: frozenset[bytes] = frozenset(
    {
        b"x-hub-signature-256",
        b"x-hub-signature",
        b"x-telegram-bot-api-secret-token",
        b"authorization",
        b"x-slack-signature",
        b"x-slack-request-timestamp",
        b"x-slack-retry-num",
        b"x-slack-retry-reason",
        b"x-signature-ed25519",
        b"x-signature-timestamp",
        b"x-line-signature",
        b"x-twilio-signature",
        b"x-viber-content-signature",
    }
)
"""End-to-end authentication headers (platforms.md 2.2): forwarded even when a client names them
in `Connection`, which would otherwise make them hop-by-hop; the agent verifies them."""

_CLAIMS_OF_ORIGIN = frozenset({b"forwarded", b"x-real-ip"})
"""Other headers claiming the client's origin: dropped when the peer is not trusted."""
X_FORWARDED_FOR = b"x-forwarded-for"
X_FORWARDED_PROTO = b"x-forwarded-proto"
X_FORWARDED_HOST = b"x-forwarded-host"
X_STICKYROUTE_AGENT = b"x-stickyroute-agent"
X_STICKYROUTE_REASON = b"x-stickyroute-reason"
X_STICKYROUTE_CONVERSATION = b"x-stickyroute-conversation"
"""Set by the proxy for agents with an API token (proxy.hints); never passed on from a client."""
X_STICKYROUTE_DELIVERY = b"x-stickyroute-delivery"
"""`<channel>:<delivery id>` of each platform delivery in the forwarded body (comma-separated)."""
X_STICKYROUTE_ATTEMPT = b"x-stickyroute-attempt"
"""Which attempt of each of those deliveries this forward is (1 on the first; same order)."""
_ID_SAFE = "!$&'()*+;=:@._~-"
"""Kept as they are in a delivery header; anything else is percent-encoded (RFC 3986 2.1), so an
id from a body can never break the header (no comma, space, CR or LF gets through)."""

_SET_BY_CLIENT = frozenset({b"host", b"content-length"})
"""Recomputed by httpx from the upstream URL and the body bytes (RFC 9110 7.2, RFC 9112 6.3)."""
_REPLACED = frozenset(
    {X_FORWARDED_FOR, X_FORWARDED_PROTO, X_FORWARDED_HOST, X_STICKYROUTE_AGENT, X_STICKYROUTE_REASON,
     X_STICKYROUTE_CONVERSATION, X_STICKYROUTE_DELIVERY, X_STICKYROUTE_ATTEMPT}
)


_DROP_UPSTREAM_TRUSTED = HOP_BY_HOP | _SET_BY_CLIENT | _REPLACED
"""What never goes upstream from a trusted peer (before the `Connection`-listed names)."""
_DROP_UPSTREAM_UNTRUSTED = _DROP_UPSTREAM_TRUSTED | _CLAIMS_OF_ORIGIN
_DROP_RELAYED = HOP_BY_HOP | {b"content-length"}
_CONNECTION = b"connection"


def _connection_listed(headers: RawHeaders) -> set[bytes]:
    """Lower-case field names listed in every `Connection` header (comma lists, any case)."""
    listed: set[bytes] = set()
    for name, value in headers:
        if name.lower() == _CONNECTION:
            listed.update(token.strip().lower() for token in value.split(b","))
    listed.discard(b"")
    return listed


def _kept(headers: RawHeaders, drop: frozenset[bytes]) -> RawHeaders:
    """`headers` without the names in `drop` and without every field named in `Connection`
    (except the `SIGNATURE_HEADERS`); each name lowered once, against one precomputed set."""
    lowered = [name.lower() for name, _value in headers]
    if _CONNECTION in lowered:
        drop = drop | (_connection_listed(headers) - SIGNATURE_HEADERS)
    return [header for header, name in zip(headers, lowered, strict=True) if name not in drop]


def strip_hop_by_hop(headers: RawHeaders) -> RawHeaders:
    """`headers` without the `HOP_BY_HOP` fields and without every field named in `Connection`,
    except the `SIGNATURE_HEADERS` (a signature checked at the edge reaches the agent too)."""
    return _kept(headers, HOP_BY_HOP)


def _values(headers: RawHeaders, name: bytes) -> list[bytes]:
    return [value for key, value in headers if key.lower() == name]


def upstream_request_headers(
    inbound: RawHeaders,
    *,
    client_ip: str,
    scheme: str,
    host: str,
    peer_trusted: bool,
    agent: str,
    reason: str,
) -> RawHeaders:
    """The headers to send upstream for one inbound request.

    Hop-by-hop fields, `Host` and `Content-Length` are dropped (the leg sets the last two from
    the upstream URL and the body bytes); every other field, signature headers and
    `Authorization` included, is kept in order. Then appended:

    - `X-Forwarded-For`: the received value(s) + `, <client_ip>` when the peer is trusted, else
      `<client_ip>` alone (a client cannot forge its address through an untrusted hop).
    - `X-Forwarded-Proto` / `X-Forwarded-Host`: the received values when the peer is trusted and
      sent them, else `scheme` (http/https of the inbound connection) and `host` (inbound `Host`;
      omitted when empty).
    - `X-Stickyroute-Agent: <agent>` and `X-Stickyroute-Reason: <reason>` (inbound ones dropped,
      as is an inbound `X-Stickyroute-Conversation`: only the proxy sets it, issue #12).
    - `Forwarded` / `X-Real-IP` pass only from a trusted peer (an untrusted client could forge them).
    """
    kept = _kept(inbound, _DROP_UPSTREAM_TRUSTED if peer_trusted else _DROP_UPSTREAM_UNTRUSTED)
    client = client_ip.encode("latin-1")
    received_for = _values(inbound, X_FORWARDED_FOR) if peer_trusted else []
    received_proto = _values(inbound, X_FORWARDED_PROTO) if peer_trusted else []
    received_host = _values(inbound, X_FORWARDED_HOST) if peer_trusted else []
    forwarded_for = b", ".join([*received_for, client]) if client else b", ".join(received_for)
    if forwarded_for:
        kept.append((X_FORWARDED_FOR, forwarded_for))
    kept.append((X_FORWARDED_PROTO, b", ".join(received_proto) or scheme.encode("latin-1")))
    forwarded_host = b", ".join(received_host) or host.encode("latin-1")
    if forwarded_host:
        kept.append((X_FORWARDED_HOST, forwarded_host))
    kept.append((X_STICKYROUTE_AGENT, agent.encode("latin-1")))
    kept.append((X_STICKYROUTE_REASON, reason.encode("latin-1")))
    return kept


def delivery_headers(deliveries: Sequence[tuple[str, str, int]]) -> RawHeaders:
    """`X-Stickyroute-Delivery: <channel>:<delivery id>` and `X-Stickyroute-Attempt: N` for the
    (channel, delivery id, attempt) of each item a forward carries, comma-separated in body order
    (one item: one value each); ids percent-encoded outside `_ID_SAFE`. None: no headers."""
    if not deliveries:
        return []
    ids = b",".join(quote(f"{channel}:{delivery}", safe=_ID_SAFE).encode("ascii")
                    for channel, delivery, _n in deliveries)
    attempts = b",".join(str(n).encode("ascii") for _c, _d, n in deliveries)
    return [(X_STICKYROUTE_DELIVERY, ids), (X_STICKYROUTE_ATTEMPT, attempts)]


def relay_response_headers(headers: RawHeaders) -> RawHeaders:
    """Upstream reply headers to relay: hop-by-hop stripped, `Content-Length` dropped.

    The relayed body length is set by the response we build; `Content-Encoding` is kept because
    the body is relayed raw (still encoded).
    """
    return _kept(headers, _DROP_RELAYED)


_Network = ipaddress.IPv4Network | ipaddress.IPv6Network
CACHED_PEERS = 4096
"""Peer addresses whose trust `TrustedProxies` remembers before it starts over."""


@dataclass(frozen=True, slots=True)
class TrustedProxies:
    """Peers whose `X-Forwarded-*` headers we extend (`server.trusted_proxies`, CIDR strings).

    Built once from the config; `ValueError` for a string that is not a network. The answer
    for each peer address is cached (at most `CACHED_PEERS` addresses, then the cache starts over):
    a webhook platform calls from a handful of addresses, and parsing one costs more than the rest
    of the header rules.
    """

    networks: tuple[_Network, ...]
    _seen: dict[str, bool] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @classmethod
    def from_cidrs(cls, cidrs: Iterable[str]) -> TrustedProxies:
        return cls(tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs))

    def __contains__(self, ip: object) -> bool:
        """True when `ip` (an address string) lies in one of the networks; False for non-addresses."""
        if not isinstance(ip, str):
            return False
        seen = self._seen.get(ip)
        if seen is None:
            if len(self._seen) >= CACHED_PEERS:
                self._seen.clear()
            seen = self._seen[ip] = self._contains(ip)
        return seen

    def _contains(self, ip: str) -> bool:
        try:
            address = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return False
        if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
            address = address.ipv4_mapped
        return any(address.version == net.version and address in net for net in self.networks)


def is_trusted(ip: str, cidrs: TrustedProxies | Iterable[str]) -> bool:
    """True when the peer address `ip` is inside `cidrs` (a `TrustedProxies` or CIDR strings)."""
    trusted = cidrs if isinstance(cidrs, TrustedProxies) else TrustedProxies.from_cidrs(cidrs)
    return ip in trusted
