"""Failed authentication, throttled per client address, on every authenticated admin route.

    wait = throttle.retry_after(address, now, failures, window_s)   None, or seconds to wait (429)
    throttle.failed(address, now, failures, window_s)              a wrong admin token, sign-in
                                                                   token or agent token
    throttle.succeeded(address)                                    right credentials: forgotten

A window opens at an address's first failure and lasts `[admin] auth_window_s`; after
`[admin] auth_failures` failures in it the address gets 429 with `Retry-After` (the seconds
left in the window) wherever it presents a token, right ones included (a guess that happens to
be right must not tell the guesser so), until the window ends; a browser signed in before keeps
its session (proxy.admin.auth). The moment an address
is throttled is logged once per window. Only presented credentials that are wrong count: a
request without any (a signed-out dashboard) is answered 401 and not counted; nor is a stale
session cookie (a session id is 256 random bits, not guessable).

An IPv6 client counts by its /64 (one host usually holds a whole /64). The table is an LRU of
`max_addresses`: an attacker rotating addresses cannot grow it past that; each address it uses
gets `auth_failures` guesses per window (docs/security.md). Time is an argument (seconds).
"""

from __future__ import annotations

import ipaddress
import logging
import math
from functools import lru_cache

from cachetools import LRUCache
from starlette.responses import JSONResponse
from starlette.types import Scope

from stickyroute.forwarding.headers import TrustedProxies

__all__ = ["MAX_ADDRESSES", "AuthThrottle", "client_address", "too_many"]

log = logging.getLogger("stickyroute.admin")
MAX_ADDRESSES = 10_000
"""Client addresses whose failures are remembered (least recently failing dropped first)."""


class _Window:
    __slots__ = ("count", "opened_at")

    def __init__(self, opened_at: float) -> None:
        self.opened_at = opened_at
        self.count = 0


class AuthThrottle:
    """Failures per client address (see the module docstring)."""

    def __init__(self, max_addresses: int = MAX_ADDRESSES) -> None:
        self._windows: LRUCache[str, _Window] = LRUCache(maxsize=max_addresses)

    def __len__(self) -> int:
        """Addresses remembered now."""
        return len(self._windows)

    def retry_after(self, address: str, now: float, failures: int, window_s: float) -> float | None:
        """Seconds until `address` may authenticate again (its window's end), or None when it may now."""
        window = self._windows.get(_key(address))
        if window is None or window.count < failures or now - window.opened_at >= window_s:
            return None
        return window.opened_at + window_s - now

    def failed(self, address: str, now: float, failures: int, window_s: float) -> None:
        """Count one failure of `address` at `now`; log when it reaches `failures`."""
        key = _key(address)
        window = self._windows.get(key)
        if window is None or now - window.opened_at >= window_s:
            window = self._windows[key] = _Window(now)
        window.count += 1
        if window.count == failures:
            log.warning("admin listener: %s failed to authenticate %d times in %g s: answered 429 for %g s",
                        key, failures, now - window.opened_at, window.opened_at + window_s - now)

    def succeeded(self, address: str) -> None:
        """Right credentials from `address`: its failures are forgotten."""
        self._windows.pop(_key(address), None)


@lru_cache(maxsize=4096)
def _key(address: str) -> str:
    """The address itself, or its /64 for IPv6."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else ip)


@lru_cache(maxsize=16)
def _trusted(cidrs: tuple[str, ...]) -> TrustedProxies:
    return TrustedProxies.from_cidrs(cidrs)


def client_address(scope: Scope, trusted: tuple[str, ...]) -> str:
    """The client the throttle counts: the peer, or, when the peer is one of the `trusted`
    proxies (CIDRs), the last `X-Forwarded-For` entry outside them."""
    client = scope.get("client")
    peer = str(client[0]) if client else ""
    if not trusted or peer not in _trusted(trusted):
        return peer
    proxies = _trusted(trusted)
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    forwarded = [value.decode("latin-1") for name, value in headers if name == b"x-forwarded-for"]
    hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
    for hop in reversed(hops):
        if hop not in proxies:
            return str(hop)
    return str(hops[0]) if hops else peer


def too_many(wait_s: float) -> JSONResponse:
    """429 with `Retry-After` (whole seconds, at least 1)."""
    seconds = max(1, math.ceil(wait_s))
    return JSONResponse({"error": "too many requests",
                         "detail": f"too many failed authentications from this address; retry in {seconds} s"},
                        status_code=429, headers={"retry-after": str(seconds)})
