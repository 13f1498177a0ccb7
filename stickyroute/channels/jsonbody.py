"""Decoding webhook JSON bodies: orjson first (about 2x faster on a Telegram update), the standard
library when orjson refuses a body it accepts, so what parses is exactly what `json.loads` parses.

orjson refuses some documents the standard library reads (integers beyond 64 bits, `NaN`, lone
surrogate escapes, nesting deeper than 1,024): those fall back to `json.loads`, which gives the same
value it always did (or raises as it always did).
"""

from __future__ import annotations

import json

import orjson

__all__ = ["decode"]


def decode(body: bytes) -> object:
    """The JSON value of `body`. Raises ValueError (not JSON) or RecursionError (too deep)."""
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return json.loads(body)
