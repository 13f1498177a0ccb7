"""Reading what a client sent, with a 422 that names the field and what is wrong.

    limit = query_int(request, "limit", default=100, low=1, high=1000)
    body = await json_object(request, allowed=("agent", "explicit"))
    agent = required_string(body, "agent")
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from starlette.requests import Request

from stickyroute.admin.errors import unprocessable

__all__ = ["json_object", "optional_bool", "optional_int", "optional_string", "query_bool", "query_int", "query_number",
           "required_string"]


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def query_int(request: Request, name: str, default: int, low: int, high: int) -> int:
    """An integer query parameter in [low, high] (absent: `default`)."""
    return int(_in_range(request, name, default, low, high, int, "an integer", str))


def query_number(request: Request, name: str, default: float, low: float, high: float) -> float:
    """A number query parameter in [low, high] (absent: `default`)."""
    return _in_range(request, name, default, low, high, float, "a number", lambda v: f"{v:g}")


def query_bool(request: Request, name: str) -> bool | None:
    """A boolean query parameter, `true` or `false` (absent or empty: None); 422 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return None
    if raw not in ("true", "false"):
        raise unprocessable(f"{name}: expected true or false, got {_shown(raw)}")
    return raw == "true"


def _in_range(request: Request, name: str, default: float, low: float, high: float,
              parse: Callable[[str], float], what: str, show: Callable[[float], str]) -> float:
    """Query parameter `name` read with `parse`, in [low, high]; 422 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    expected = f"{name}: expected {what} between {show(low)} and {show(high)}"
    try:
        value = parse(raw)
    except ValueError:
        raise unprocessable(f"{expected}, got {_shown(raw)}") from None
    if not low <= value <= high:
        raise unprocessable(f"{expected}, got {show(value)}")
    return value


async def json_object(request: Request, allowed: Iterable[str]) -> dict[str, Any]:
    """The body as a JSON object with no key outside `allowed`."""
    raw = await request.body()
    try:
        body = json.loads(raw) if raw.strip() else None
    except ValueError as exc:
        raise unprocessable(f"body: not JSON ({exc})") from None
    if not isinstance(body, dict):
        raise unprocessable("body: expected a JSON object")
    allowed = tuple(allowed)
    unknown = [key for key in body if key not in allowed]
    if unknown:
        raise unprocessable(f"{unknown[0]}: unknown key (expected {', '.join(allowed)})")
    return body


def required_string(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if value is None:
        raise unprocessable(f"{name}: is required")
    if not isinstance(value, str) or not value.strip():
        raise unprocessable(f"{name}: expected a non-empty string, got {_shown(value)}")
    return value


def optional_string(body: dict[str, Any], name: str) -> str | None:
    return None if body.get(name) is None else required_string(body, name)


def optional_bool(body: dict[str, Any], name: str, default: bool) -> bool:
    value = body.get(name, default)
    if not isinstance(value, bool):
        raise unprocessable(f"{name}: expected true or false, got {_shown(value)}")
    return value


def optional_int(body: dict[str, Any], name: str, default: int, low: int = 0) -> int:
    value = body.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise unprocessable(f"{name}: expected an integer >= {low}, got {_shown(value)}")
    return value
