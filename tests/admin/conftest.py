"""Fixtures of the admin API tests: `backend` (memory and Redis) and `upstreams` (general,
coder, billing, internal on real servers). The running service: tests/admin/operated.py."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from tests.admin.operated import BACKENDS
from tests.upstreams import RecordingUpstream


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def upstreams() -> AsyncIterator[dict[str, RecordingUpstream]]:
    from tests.proxy.harness import upstream_set

    with upstream_set("general", "coder", "billing", "internal") as ups:
        yield ups
