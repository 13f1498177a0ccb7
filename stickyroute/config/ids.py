"""Platform ids as strings: one normalisation shared by config bindings and channel adapters.

Ids are never coerced: a JSON number becomes its decimal string, a string is kept as written
(surrounding whitespace and one leading `+` removed). `ascii_int` is the only way a payload
string becomes a number, and it accepts plain ASCII integers only (`"²"`, `"٣"`, `"３"` stay
strings: `str.isdigit()` and `int()` accept them, Telegram does not mean them as numbers).

Ids are bounded where they enter: one longer than `MAX_ID_BYTES` (UTF-8) becomes
`#<64 hex of its SHA-256>` (`bounded_id`), so whatever a payload sends, no route, switch
budget, delivery key or cache holds more than that per id. Real platform ids are far shorter
(Telegram: 64-bit integers; WhatsApp: phone numbers, wamids of about 60 characters).
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["MAX_ID_BYTES", "ascii_int", "bounded_id", "normalise_id"]

MAX_ID_BYTES = 256
"""Longest id (UTF-8 bytes) kept as written; a longer one is kept as its digest."""
_SURELY_SHORT = MAX_ID_BYTES // 4
"""Characters that cannot exceed `MAX_ID_BYTES` (UTF-8 takes at most 4 bytes a character)."""

_ASCII_INT = re.compile(r"-?[0-9]+")


def normalise_id(value: object) -> str | None:
    """A platform id as a string: ints as decimal, strings stripped of one leading `+`.

    Returns None for None, booleans and empty strings. Config ids go through the same function,
    so `-1001000000001` (number) and `"-1001000000001"` (string) match, as do `+15550000001`
    and `15550000001` (WhatsApp numbers lose a leading `+`). A float that is a whole number
    (`3.0`) is the number 3; any other value is its `str()`.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return bounded_id(str(value))
    if isinstance(value, float) and value.is_integer():
        return bounded_id(str(int(value)))
    text = str(value).strip()
    if text.startswith("+"):
        text = text[1:]
    return bounded_id(text) if text else None


def bounded_id(text: str) -> str:
    """`text` when it takes at most `MAX_ID_BYTES` in UTF-8, else `#` and the 64 hex of its SHA-256
    (the same id always gives the same digest, so a long id still keys one route)."""
    if len(text) <= _SURELY_SHORT:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw) <= MAX_ID_BYTES:
        return text
    return "#" + hashlib.sha256(raw).hexdigest()


def ascii_int(text: str | None) -> int | None:
    """`text` as an int when it is a plain ASCII integer (`-?[0-9]+`), else None (never coerced)."""
    if text is None or not _ASCII_INT.fullmatch(text):
        return None
    return int(text)
