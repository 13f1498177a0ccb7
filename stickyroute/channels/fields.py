"""Reading fields out of a decoded webhook document without trusting its types (shared by the
Slack, Discord, LINE, Messenger and Instagram adapters).

A platform may send any JSON in any field; these helpers turn the wrong type into "absent", so an
adapter never raises on an odd body (it yields an envelope with less in it instead).
"""

from __future__ import annotations

from typing import Any

from stickyroute.config.ids import normalise_id

__all__ = ["ident", "items", "obj", "string"]


def obj(value: object) -> dict[str, Any]:
    """`value` when it is a JSON object, else `{}`."""
    return value if isinstance(value, dict) else {}


def items(value: object) -> list[Any]:
    """`value` when it is a JSON array, else `[]`."""
    return value if isinstance(value, list) else []


def string(value: object) -> str | None:
    """`value` when it is a non-empty string, else None."""
    return value if isinstance(value, str) and value else None


def ident(value: object) -> str | None:
    """A platform id (a string, or an integer some platforms send) normalised with
    `normalise_id`; None for any other type, an empty string or a boolean."""
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        return normalise_id(value)
    return None
