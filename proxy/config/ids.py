"""Platform ids as strings: one normalisation shared by config bindings and channel adapters."""

from __future__ import annotations


def normalise_id(value: object) -> str | None:
    """A platform id as a string: ints as decimal, strings stripped of one leading `+`.

    Returns None for None, booleans and empty strings. Config ids go through the same function,
    so `-1001000000001` (number) and `"-1001000000001"` (string) match, as do `+15550000001`
    and `15550000001` (WhatsApp numbers lose a leading `+`).
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
