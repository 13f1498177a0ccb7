"""Fixtures of the state contract: each is parametrised over every backend (tests/state/backends.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from stickyroute.state.base import DeliveryLog
from stickyroute.state.budget import SwitchBudget
from tests.state.backends import BACKENDS, make_conversations, make_deliveries, make_switches
from tests.state.routes import RoutesUnderTest


@pytest.fixture(params=BACKENDS)
async def conversations(request: pytest.FixtureRequest) -> AsyncIterator[RoutesUnderTest]:
    state = make_conversations(request.param)
    yield state
    await state.aclose()


@pytest.fixture(params=BACKENDS)
async def deliveries(request: pytest.FixtureRequest) -> AsyncIterator[DeliveryLog]:
    log = make_deliveries(request.param)
    yield log
    await log.aclose()


@pytest.fixture(params=BACKENDS)
async def switches(request: pytest.FixtureRequest) -> AsyncIterator[SwitchBudget]:
    budget = make_switches(request.param)
    yield budget
    await budget.aclose()
