"""Platform ids as strings: one normalisation shared by config bindings and channel adapters.

Ids are never coerced: a JSON number becomes its decimal string, a string is kept as written
(surrounding whitespace and one leading `+` removed). `ascii_int` is the only way a payload
string becomes a number, and it accepts plain ASCII integers only (`"²"`, `"٣"`, `"３"` stay
strings: `str.isdigit()` and `int()` accept them, Telegram does not mean them as numbers).
"""

from __future__ import annotations

import re

__all__ = ["ascii_int", "normalise_id"]

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
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value).strip()
    if text.startswith("+"):
        text = text[1:]
    return text or None


def ascii_int(text: str | None) -> int | None:
    """`text` as an int when it is a plain ASCII integer (`-?[0-9]+`), else None (never coerced)."""
    if text is None or not _ASCII_INT.fullmatch(text):
        return None
    return int(text)
