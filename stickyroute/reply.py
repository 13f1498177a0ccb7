"""Reply: one HTTP answer as a value, used for an agent's reply, a stored answer and our own.

The forwarding leg returns an agent's reply as a `Reply`; the dispatcher relays it to the
platform (or composes its own: 401, 413, a Telegram Bot API call); the delivery log stores it so
a platform retry gets the same answer without a second forward.
"""

from __future__ import annotations

from dataclasses import dataclass, field

RawHeaders = list[tuple[bytes, bytes]]
"""Header fields as (name, value) bytes, order and duplicates kept (ASGI style)."""


@dataclass(frozen=True, slots=True)
class Reply:
    """Status, headers and body of one HTTP answer.

    `headers` are relayable fields (hop-by-hop ones and `Content-Length` already removed: the
    response we build sets the length); `body` is raw bytes, still encoded when
    `Content-Encoding` says so.
    """

    status: int
    headers: RawHeaders = field(default_factory=list)
    body: bytes = b""

    @property
    def ok(self) -> bool:
        """True for a 2xx status."""
        return 200 <= self.status < 300

    def header(self, name: bytes) -> bytes | None:
        """The first value of header `name` (lower-case bytes), or None."""
        for key, value in self.headers:
            if key.lower() == name:
                return value
        return None

    def size(self) -> int:
        """Approximate bytes this reply holds once stored in the delivery log: the body, each header
        (two bytes objects and a tuple: 128 bytes of Python objects besides the text) and about 512
        bytes of the reply object, its header list, its key and the cache's bookkeeping. Calibrated
        with tracemalloc (tests/state/test_memory_backend.py); the soak measured the older estimate
        (256 + 32 per header) at about half the real memory."""
        return 512 + len(self.body) + sum(len(n) + len(v) + 128 for n, v in self.headers)
