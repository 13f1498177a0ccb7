"""Fixtures of the classifier tests: settings, a strict Groq mock, an HTTP client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator

import httpx
import pytest
import respx

from stickyroute.classifier.groq import GroqClassifier
from stickyroute.clock import FakeClock
from stickyroute.config.model import ClassifierSettings


@pytest.fixture(autouse=True)
def _no_groq_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SDK reads GROQ_BASE_URL from the process environment: keep tests independent of it."""
    monkeypatch.delenv("GROQ_BASE_URL", raising=False)
    monkeypatch.delenv("GROQ_API_KEY", raising=False)


@pytest.fixture
def settings() -> ClassifierSettings:
    return ClassifierSettings(model="llama-3.1-8b-instant", timeout_s=2.0, max_tokens=8)


@pytest.fixture
def groq_api() -> Iterator[respx.MockRouter]:
    """Strict respx router: every route must be called and any unmocked request fails."""
    with respx.mock(assert_all_called=True, assert_all_mocked=True) as router:
        yield router


@pytest.fixture
async def http_client() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient() as client:
        yield client


@pytest.fixture
def make_groq(http_client: httpx.AsyncClient) -> Callable[..., GroqClassifier]:
    def make(settings: ClassifierSettings, **kwargs: object) -> GroqClassifier:
        return GroqClassifier(
            settings, "test-key", http_client=http_client, **{"clock": FakeClock(), **kwargs}  # type: ignore[arg-type]
        )
    return make
