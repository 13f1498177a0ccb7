"""Fuzzing, bounded profile (issue #10): schema-shaped bodies of every platform (Telegram, WhatsApp,
Slack events and forms, Discord interactions, LINE, Messenger and Instagram; every kind and field, wrong types, unicode of every class, huge and deep values, duplicated keys,
numbers as strings) and byte mutations of the shipped payloads. Properties: never an exception
out of an adapter, ids of the declared types, never a 5xx from the proxy, forwarded bytes
identical to the input. `make fuzz` runs 100,000 inputs."""

from __future__ import annotations

import asyncio

import pytest
from hypothesis import HealthCheck, given, settings

from bench.fuzzing.properties import Target, check_adapter
from bench.fuzzing.strategies import PLATFORMS, any_body

BOUNDED = settings(max_examples=150, deadline=None, database=None,
                   suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@pytest.mark.parametrize("platform", PLATFORMS)
def test_adapters_never_raise_and_ids_have_their_types(platform: str) -> None:
    @BOUNDED
    @given(body=any_body(platform))
    def check(body: bytes) -> None:
        assert check_adapter(platform, body) == []

    check()


@pytest.mark.parametrize("platform", PLATFORMS)
def test_the_proxy_never_answers_5xx_and_forwards_the_same_bytes(platform: str) -> None:
    loop = asyncio.new_event_loop()
    target = loop.run_until_complete(Target.create())
    try:
        @BOUNDED
        @given(body=any_body(platform))
        def check(body: bytes) -> None:
            assert loop.run_until_complete(target.check(platform, body)) == []

        check()
    finally:
        loop.run_until_complete(target.aclose())
        loop.close()
