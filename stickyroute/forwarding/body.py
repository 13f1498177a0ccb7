"""Capped body reads, shared by the ASGI shell (inbound bodies) and the leg (agent replies)."""

from __future__ import annotations

from collections.abc import AsyncIterable

from stickyroute.config.ids import ascii_int
from stickyroute.errors import StickyrouteError


class BodyTooLarge(StickyrouteError):
    """A body exceeded its cap; `limit` is the cap in bytes."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(f"body larger than {limit} bytes")


async def read_capped(chunks: AsyncIterable[bytes], limit: int, declared: int | None = None) -> bytes:
    """All `chunks` joined, at most `limit` bytes; BodyTooLarge past it.

    `declared` is the announced length (`Content-Length`), checked before reading anything.
    """
    if declared is not None and declared > limit:
        raise BodyTooLarge(limit)
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(limit)
        parts.append(chunk)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def declared_length(value: bytes | str | None) -> int | None:
    """A `Content-Length` value as an int; None when absent or not plain ASCII digits."""
    if value is None:
        return None
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    number = ascii_int(text)
    return number if number is not None and number >= 0 else None
