"""The recent decisions: a bounded in-memory ring of decision entries, and live subscribers (the
admin API's `GET /v1/decisions` and its server-sent events stream).

    ring.add(entry)                       entry: the logged decision line's dict; gets "id" (1, 2, ...)
    ring.recent(limit, channel=None)      newest first
    ring.after(last_id)                   oldest first: what a reconnecting stream missed
    sub = ring.subscribe(); await sub.next(timeout_s); sub.close()

Entries carry no message text unless the channel's `log_text` is on (they are the log line's
dict). A subscriber that does not keep up loses the oldest entries it has not read (its queue is
bounded, `dropped` counts them): a slow dashboard never holds memory or the request path.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from typing import Any

__all__ = ["DecisionRing", "Subscription"]

Entry = dict[str, Any]
RING_SIZE = 1000
QUEUE_SIZE = 1000


class Subscription:
    """One live reader of the ring (see the module docstring)."""

    def __init__(self, ring: DecisionRing, size: int) -> None:
        self._ring = ring
        self._queue: asyncio.Queue[Entry | None] = asyncio.Queue(maxsize=size)
        self.dropped = 0

    def offer(self, entry: Entry | None) -> None:
        """Queue `entry` (None: the ring is closing), dropping the oldest unread when full."""
        while True:
            try:
                self._queue.put_nowait(entry)
                return
            except asyncio.QueueFull:
                with contextlib.suppress(asyncio.QueueEmpty):
                    self._queue.get_nowait()
                    self.dropped += 1

    async def next(self, timeout_s: float) -> Entry | None:
        """The next entry; None after `timeout_s` seconds without one. Raises EOFError once the
        ring is closed (the service stops)."""
        try:
            async with asyncio.timeout(timeout_s):
                entry = await self._queue.get()
        except TimeoutError:
            return None
        if entry is None:
            raise EOFError("the decision stream is closed")
        return entry

    def close(self) -> None:
        """Stop receiving entries."""
        self._ring.unsubscribe(self)


class DecisionRing:
    """The last `size` decision entries and the live subscribers (see the module docstring)."""

    def __init__(self, size: int = RING_SIZE, queue_size: int = QUEUE_SIZE) -> None:
        self._entries: deque[Entry] = deque(maxlen=size)
        self._subscribers: set[Subscription] = set()
        self._queue_size = queue_size
        self._next_id = 1
        self.closed = False

    def add(self, entry: Entry) -> None:
        """Keep `entry` (it gets the next "id") and hand it to every subscriber."""
        entry["id"] = self._next_id
        self._next_id += 1
        self._entries.append(entry)
        for subscriber in self._subscribers:
            subscriber.offer(entry)

    def recent(self, limit: int, channel: str | None = None) -> list[Entry]:
        """At most `limit` entries, newest first (only `channel`'s when given)."""
        out: list[Entry] = []
        for entry in reversed(self._entries):
            if len(out) >= limit:
                break
            if channel is None or entry.get("channel") == channel:
                out.append(entry)
        return out

    def after(self, last_id: int) -> list[Entry]:
        """The kept entries newer than `last_id`, oldest first."""
        return [entry for entry in self._entries if entry["id"] > last_id]

    def subscribe(self) -> Subscription:
        """A new live reader (close it when done)."""
        subscription = Subscription(self, self._queue_size)
        if self.closed:
            subscription.offer(None)
        self._subscribers.add(subscription)
        return subscription

    def unsubscribe(self, subscription: Subscription) -> None:
        self._subscribers.discard(subscription)

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    def close(self) -> None:
        """End every live reader's stream (the service stops)."""
        self.closed = True
        for subscriber in self._subscribers:
            subscriber.offer(None)
