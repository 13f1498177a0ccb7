"""Per-agent pools (issue #10: one hanging agent exhausted a shared pool, and requests beyond it
were logged "upstream unreachable" though the agent was up) and late answers."""

from __future__ import annotations

import asyncio

import pytest

from stickyroute.config.model import Agent, UpstreamSettings
from stickyroute.errors import UpstreamPoolExhausted, UpstreamTimeout
from stickyroute.forwarding.leg import Leg
from tests.forwarding.leg_helpers import HANG_GUARD_S, SERVER, inbound
from tests.upstreams import RecordingUpstream


def _agent(up: RecordingUpstream, name: str, max_connections: int | None = None) -> Agent:
    return Agent(name, up.url, max_connections=max_connections)


async def test_a_full_pool_is_pool_exhausted_503_not_unreachable() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=0.2, timeout_s=5.0, max_connections=10), SERVER)
    with RecordingUpstream() as slow, RecordingUpstream() as fast:
        slow.respond(hang=True)
        try:
            hung = asyncio.ensure_future(leg.forward(inbound(), _agent(slow, "slow", 1), "telegram", "default"))
            await slow.until_requests(1)
            with pytest.raises(UpstreamPoolExhausted) as caught:
                await asyncio.wait_for(leg.forward(inbound(), _agent(slow, "slow", 1), "telegram", "default"),
                                       HANG_GUARD_S)
            reply = await asyncio.wait_for(leg.forward(inbound(), _agent(fast, "fast", 1), "telegram", "default"),
                                           HANG_GUARD_S)
            hung.cancel()
            await asyncio.gather(hung, return_exceptions=True)
        finally:
            slow.release()
            await leg.aclose()
    assert (caught.value.status_code, caught.value.kind, reply.status) == (503, "pool_exhausted", 200)
    assert "1 connection(s) of slow busy for 0.2 s" in str(caught.value)
    assert leg.failures == {("slow", "pool_exhausted"): 1}
    assert (leg.pools.limits, leg.pools.in_use) == ({"slow": 1, "fast": 1}, {"slow": 0, "fast": 0})
    assert len(slow.requests) == 1


async def test_an_agents_own_max_connections_overrides_the_default() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=0.5, timeout_s=5.0, max_connections=1), SERVER)
    with RecordingUpstream() as up:
        up.respond(hang=True)
        try:
            tasks = [asyncio.ensure_future(leg.forward(inbound(), _agent(up, "wide", 3), "telegram", "default"))
                     for _ in range(3)]
            await up.until_requests(3)
            assert leg.pools.in_use == {"wide": 3}
            up.release()
            replies = await asyncio.wait_for(asyncio.gather(*tasks), HANG_GUARD_S)
        finally:
            up.release()
            await leg.aclose()
    assert [r.status for r in replies] == [200, 200, 200]
    assert leg.pools.limits == {"wide": 3}


async def test_a_late_answer_is_handed_over_with_the_504() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=0.1, timeout_s=0.1, late_answer_s=5.0), SERVER)
    with RecordingUpstream() as up:
        up.respond(hang=True, body=b"late")
        try:
            with pytest.raises(UpstreamTimeout) as caught:
                await asyncio.wait_for(leg.forward(inbound(), _agent(up, "slow"), "telegram", "default"), HANG_GUARD_S)
            assert caught.value.late is not None
            up.release()
            late = await asyncio.wait_for(caught.value.late, HANG_GUARD_S)
        finally:
            up.release()
            await leg.aclose()
    assert (late.status, late.body, len(up.requests)) == (200, b"late", 1)
    assert leg.failures == {("slow", "timeout"): 1}


async def test_a_late_exchange_that_never_answers_counts_as_late_timeout() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=0.1, timeout_s=0.1, late_answer_s=0.3), SERVER)
    with RecordingUpstream() as up:
        up.respond(hang=True)
        try:
            with pytest.raises(UpstreamTimeout) as caught:
                await asyncio.wait_for(leg.forward(inbound(), _agent(up, "slow"), "telegram", "default"), HANG_GUARD_S)
            assert caught.value.late is not None
            with pytest.raises(UpstreamTimeout):
                await asyncio.wait_for(caught.value.late, HANG_GUARD_S)
        finally:
            up.release()
            await leg.aclose()
    assert leg.failures == {("slow", "timeout"): 1, ("slow", "late_timeout"): 1}


async def test_a_channel_with_its_own_deadline_times_out_while_others_wait() -> None:
    """`[channels.slack.upstream] timeout_s` under Slack's 3 s: its forward gives up, another
    channel's forward to the same hanging agent keeps the global deadline."""
    leg = Leg(UpstreamSettings(connect_timeout_s=2.0, timeout_s=30.0, late_answer_s=0.0), SERVER,
              channels={"slack": UpstreamSettings(connect_timeout_s=2.0, timeout_s=0.2, late_answer_s=0.0)})
    with RecordingUpstream() as up:
        up.respond(hang=True)
        try:
            patient = asyncio.ensure_future(leg.forward(inbound(), _agent(up, "a"), "telegram", "default"))
            await up.until_requests(1)
            with pytest.raises(UpstreamTimeout):
                await asyncio.wait_for(leg.forward(inbound(), _agent(up, "a"), "slack", "default"), HANG_GUARD_S)
            assert not patient.done()
            up.release()
            reply = await asyncio.wait_for(patient, HANG_GUARD_S)
        finally:
            up.release()
            await leg.aclose()
    assert reply.status == 200
    assert leg.failures == {("a", "timeout"): 1}


async def test_a_channels_late_answer_setting_is_its_own() -> None:
    leg = Leg(UpstreamSettings(connect_timeout_s=2.0, timeout_s=30.0, late_answer_s=0.0), SERVER,
              channels={"line": UpstreamSettings(connect_timeout_s=0.1, timeout_s=0.1, late_answer_s=5.0)})
    with RecordingUpstream() as up:
        up.respond(hang=True)
        try:
            with pytest.raises(UpstreamTimeout) as caught:
                await asyncio.wait_for(leg.forward(inbound(), _agent(up, "a"), "line", "default"), HANG_GUARD_S)
            assert caught.value.late is not None
            assert "no answer in 0.2 s; its late answer is awaited for 5.0 s more" in str(caught.value)
            up.release()
            late = await asyncio.wait_for(caught.value.late, HANG_GUARD_S)
        finally:
            up.release()
            await leg.aclose()
    assert late.status == 200
