"""The forwarding leg when things go wrong: every foreign error the exchange can meet translated in
one place (httptools' whole public exception tree, every built-in OSError and every ssl error, in
both phases), refused / slow / oversized replies, pools released after aborted requests (T34),
one pool per agent."""

from __future__ import annotations

import asyncio
import builtins
import inspect
import ssl

import httptools
import pytest

from stickyroute.config.model import UpstreamSettings
from stickyroute.errors import UpstreamConnectError, UpstreamError, UpstreamTimeout
from stickyroute.forwarding.exchange import EarlyClose, translate
from stickyroute.forwarding.leg import Leg
from stickyroute.reply import Reply
from tests.forwarding.leg_helpers import HANG_GUARD_S, SERVER, TELEGRAM_UPDATE, _closed_port, agent, forward, inbound
from tests.upstreams import RecordingUpstream

# --- the exception tree ------------------------------------------------------------------------------

CONNECT, TIMEOUT, OTHER = UpstreamConnectError, UpstreamTimeout, UpstreamError


def _foreign_errors() -> dict[str, type[BaseException]]:
    """Every exception the exchange can meet: httptools' public errors, every built-in OSError
    (socket errors, resets, refusals, DNS `socket.gaierror`), every ssl error, our EarlyClose."""
    found: dict[str, type[BaseException]] = {}
    for name in httptools.__all__:
        value = getattr(httptools, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            found[f"httptools.{name}"] = value
    for name in dir(builtins):
        value = getattr(builtins, name)
        if inspect.isclass(value) and issubclass(value, OSError):
            found[name] = value
    for name in dir(ssl):
        value = getattr(ssl, name)
        if inspect.isclass(value) and issubclass(value, OSError) and not name.startswith("_"):
            found[f"ssl.{name}"] = value
    import socket
    found["socket.gaierror"] = socket.gaierror
    found["EarlyClose"] = EarlyClose
    return found


def _expected(name: str, cls: type[BaseException], connecting: bool) -> type[UpstreamError]:
    """While connecting every OSError (ssl and DNS included) and a timeout are "unreachable";
    during the exchange a timeout is 504 and everything else (parser errors, resets, an early
    close) a plain 502."""
    if issubclass(cls, TimeoutError):
        return CONNECT if connecting else TIMEOUT
    if connecting and issubclass(cls, OSError):
        return CONNECT
    return OTHER


def test_the_tree_covers_httptools_public_errors_and_the_os_and_ssl_families() -> None:
    names = set(_foreign_errors())
    assert {"httptools.HttpParserError", "httptools.HttpParserCallbackError", "httptools.HttpParserInvalidStatusError",
            "httptools.HttpParserInvalidMethodError", "httptools.HttpParserInvalidURLError",
            "httptools.HttpParserUpgrade", "ConnectionRefusedError", "ConnectionResetError", "TimeoutError",
            "ssl.SSLError", "ssl.SSLCertVerificationError", "socket.gaierror", "EarlyClose"} <= names


@pytest.mark.parametrize("connecting", [True, False], ids=["connecting", "exchange"])
@pytest.mark.parametrize("name", sorted(_foreign_errors()))
def test_every_foreign_error_is_translated(name: str, connecting: bool) -> None:
    cls = _foreign_errors()[name]
    exc = cls("failed")
    assert type(translate(exc, connecting=connecting)) is _expected(name, cls, connecting)


def test_an_error_of_the_tree_passes_through_translate_unchanged() -> None:
    error = UpstreamTimeout("already ours")
    assert translate(error) is error


# --- on the wire -------------------------------------------------------------------------------------


async def test_connection_refused_is_upstream_connect_error(leg: Leg) -> None:
    with pytest.raises(UpstreamConnectError) as caught:
        await forward(leg, f"http://127.0.0.1:{_closed_port()}")
    assert (caught.value.status_code, type(caught.value.__cause__)) == (502, ConnectionRefusedError)


async def test_read_timeout_is_upstream_timeout(upstream: RecordingUpstream) -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=5.0, timeout_s=0.2, max_connections=4, late_answer_s=0.0), SERVER)
    try:
        upstream.respond(hang=True)
        with pytest.raises(UpstreamTimeout) as caught:
            await forward(leg, upstream)
        await upstream.until_requests(1)
    finally:
        await leg.aclose()
    assert (caught.value.status_code, type(caught.value.__cause__)) == (504, TimeoutError)


@pytest.mark.parametrize("url", ["http://up-billing:8002/p\x00", "http://[::1/x", "http://up-billing:8002/\u2603"])
async def test_unusable_url_is_an_upstream_error(leg: Leg, url: str) -> None:
    with pytest.raises(UpstreamError, match="invalid upstream URL") as caught:
        await leg.forward(inbound(path=b""), agent(url), "telegram", "binding")
    assert type(caught.value) is UpstreamError


async def test_reply_over_the_cap_is_relayed_without_its_body_and_frees_the_connection(upstream: RecordingUpstream) -> None:
    """Issue #10: an over-cap reply was a 502 after the agent had handled the update (the platform's
    retry delivered it twice); now the agent's status and headers are relayed, the body dropped."""
    leg = Leg(UpstreamSettings(connect_timeout_s=5.0, timeout_s=2.0, max_connections=1), SERVER, max_reply_bytes=1024)
    try:
        upstream.respond(status=201, headers=[(b"content-type", b"application/json"), (b"x-agent", b"1")],
                         body=b"x" * 4096)
        dropped = await forward(leg, upstream)
        upstream.respond(body=b"y" * 1024)
        after = await forward(leg, upstream)  # a leaked connection would block the pool of one
    finally:
        await leg.aclose()
    kept = [(n, v) for n, v in dropped.headers if n not in (b"date", b"server")]
    assert (dropped.status, dropped.body, kept) == (
        201, b"", [(b"x-agent", b"1"), (b"x-stickyroute-reply-dropped", b"body over 1024 bytes")])
    assert after.body == b"y" * 1024
    assert leg.failures == {("billing", "too_large"): 1}


# --- pools -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stall_mid_body", [False, True], ids=["before-headers", "mid-body"])
async def test_t34_cancelled_forwards_and_timeouts_release_the_pool(upstream: RecordingUpstream, stall_mid_body: bool) -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=5.0, timeout_s=0.5, max_connections=4, late_answer_s=0.0), SERVER)
    try:
        upstream.respond(delay_s=0.5, stall_mid_body=stall_mid_body)
        tasks = [asyncio.ensure_future(forward(leg, upstream)) for _ in range(20)]
        await upstream.until_requests(4)
        for task in tasks:
            task.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) or (isinstance(r, Reply) and r.status == 200) for r in results)
        assert any(isinstance(r, asyncio.CancelledError) for r in results)
        before = len(upstream.requests)

        upstream.respond(hang=True, stall_mid_body=stall_mid_body)
        for _ in range(5):
            with pytest.raises(UpstreamTimeout) as caught:
                await forward(leg, upstream)
            assert type(caught.value.__cause__) is TimeoutError  # reached the upstream, not a pool wait
        await upstream.until_requests(before + 5)

        upstream.respond()
        reply = await forward(leg, upstream)
        assert (reply.status, reply.body) == (200, b'{"ok":true}')
        assert await upstream.until_open_connections_at_most(4) <= 4
    finally:
        await leg.aclose()


async def test_a_hanging_agent_does_not_starve_another_agents_pool() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=2.0, timeout_s=5.0, max_connections=2), SERVER)
    with RecordingUpstream() as slow, RecordingUpstream() as fast:
        slow.respond(hang=True)
        try:
            hung = [asyncio.ensure_future(forward(leg, slow, name="slow")) for _ in range(2)]
            await slow.until_requests(2)
            reply = await asyncio.wait_for(forward(leg, fast, name="fast"), HANG_GUARD_S)
            for task in hung:
                task.cancel()
            await asyncio.gather(*hung, return_exceptions=True)
        finally:
            slow.release()
            await leg.aclose()
    assert (reply.status, len(fast.requests), fast.requests[0].body) == (200, 1, TELEGRAM_UPDATE)
