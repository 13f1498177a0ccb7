"""Fixtures of the forwarding tests: one real upstream per module (reset per test), a fresh leg."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from stickyroute.forwarding.leg import Leg
from tests.forwarding.leg_helpers import SERVER, SETTINGS
from tests.upstreams import RecordingUpstream


@pytest.fixture(scope="module")
def shared_upstream() -> Iterator[RecordingUpstream]:
    with RecordingUpstream() as up:
        yield up


@pytest.fixture
def upstream(shared_upstream: RecordingUpstream) -> RecordingUpstream:
    """The module's upstream, reset: no requests recorded, default behaviour."""
    shared_upstream.reset()
    return shared_upstream


@pytest.fixture
async def leg() -> AsyncIterator[Leg]:
    made = Leg(SETTINGS, SERVER)
    yield made
    await made.aclose()
