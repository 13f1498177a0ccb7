"""Fixtures of the state contract: each is parametrised over every backend (tests/state/backends.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from proxy.state.base import ConversationState, DeliveryLog
from tests.state.backends import BACKENDS, make_conversations, make_deliveries


@pytest.fixture(params=BACKENDS)
async def conversations(request: pytest.FixtureRequest) -> AsyncIterator[ConversationState]:
    state = make_conversations(request.param)
    yield state
    await state.aclose()


@pytest.fixture(params=BACKENDS)
async def deliveries(request: pytest.FixtureRequest) -> AsyncIterator[DeliveryLog]:
    log = make_deliveries(request.param)
    yield log
    await log.aclose()
