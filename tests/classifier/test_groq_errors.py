"""Every public groq SDK exception is translated into the ClassifierError tree, with its cause."""

from __future__ import annotations

import inspect

import groq
import httpx
import pytest
from groq_fakes import CHAT_URL

from stickyroute.classifier.groq import _translate
from stickyroute.errors import (
    ClassifierAuthError,
    ClassifierError,
    ClassifierRateLimited,
    ClassifierServerError,
    ClassifierTimeout,
    ClassifierUnparseable,
)

# ---------------------------------------------------------------- every groq exception is mapped

_REQUEST = httpx.Request("POST", CHAT_URL)


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=_REQUEST, json={"error": {"message": "x"}})


EXPECTED_KIND = {
    "GroqError": ClassifierServerError,
    "APIError": ClassifierServerError,
    "APIConnectionError": ClassifierServerError,
    "APITimeoutError": ClassifierTimeout,
    "APIResponseValidationError": ClassifierUnparseable,
    "APIStatusError": ClassifierServerError,
    "BadRequestError": ClassifierServerError,
    "AuthenticationError": ClassifierAuthError,
    "PermissionDeniedError": ClassifierAuthError,
    "NotFoundError": ClassifierServerError,
    "ConflictError": ClassifierServerError,
    "UnprocessableEntityError": ClassifierServerError,
    "RateLimitError": ClassifierRateLimited,
    "InternalServerError": ClassifierServerError,
}


def _public_groq_exceptions() -> dict[str, type[BaseException]]:
    names = set(groq.__all__) | {n for n in dir(groq) if not n.startswith("_")}
    found = {}
    for name in names:
        value = getattr(groq, name)
        if inspect.isclass(value) and issubclass(value, BaseException):
            found[name] = value
    return found


def _instance(cls: type[BaseException]) -> BaseException:
    """An instance built the way the SDK builds it."""
    if issubclass(cls, groq.APIStatusError):
        literal = cls.__dict__.get("status_code")
        status = literal if isinstance(literal, int) else 500
        return cls(f"status {status}", response=_response(status), body=None)
    if issubclass(cls, groq.APIResponseValidationError):
        return cls(_response(200), body={"unexpected": True})
    if issubclass(cls, groq.APITimeoutError):
        return cls(request=_REQUEST)
    if issubclass(cls, groq.APIConnectionError):
        return cls(request=_REQUEST)
    if issubclass(cls, groq.APIError):
        return cls("api error", _REQUEST, body=None)
    return cls("groq error")


def test_the_mapping_table_covers_exactly_the_public_groq_exceptions() -> None:
    assert set(_public_groq_exceptions()) == set(EXPECTED_KIND)


@pytest.mark.parametrize("name", sorted(EXPECTED_KIND))
def test_every_public_groq_exception_is_translated_with_its_cause(name: str) -> None:
    exc = _instance(getattr(groq, name))

    error = _translate(exc)

    assert type(error) is EXPECTED_KIND[name]
    assert isinstance(error, ClassifierError) and type(error) is not ClassifierError
    assert error.__cause__ is exc


@pytest.mark.parametrize(
    ("status", "expected"),
    [(429, ClassifierRateLimited), (500, ClassifierServerError), (502, ClassifierServerError),
     (418, ClassifierServerError), (408, ClassifierServerError), (401, ClassifierAuthError),
     (403, ClassifierAuthError), (400, ClassifierServerError), (404, ClassifierServerError)],
)
def test_status_errors_map_by_status_code(status: int, expected: type[ClassifierError]) -> None:
    exc = groq.APIStatusError("status", response=_response(status), body=None)
    assert type(_translate(exc)) is expected


def test_asyncio_timeout_maps_to_classifier_timeout() -> None:
    exc = TimeoutError()
    error = _translate(exc)
    assert (type(error), error.kind, error.__cause__) == (ClassifierTimeout, "timeout", exc)
