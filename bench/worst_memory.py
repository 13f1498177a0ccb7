"""Worst-case memory of the defaults (docs/security.md): what one process may hold whatever its
clients send, measured per entry with tracemalloc at the bounds and multiplied by the defaults.

    .venv/bin/python bench/worst_memory.py        # prints the table, writes results/bench/worst_memory.md

Every id at its bound (`MAX_ID_BYTES` of 4-byte characters would be 64 characters; the worst
for memory is 256 ASCII characters: the longest `str` an id may be), every kept text at
`KEPT_TEXT_CHARS` characters of 4-byte UTF-8 (Python stores those 4 bytes a character). Per entry:

    route              a conversation's route in the memory backend (key of 3 ids, Route, cache
                       bookkeeping, the digest index), written the way the router commits it
    recent text        one remembered text (per message of `context_messages`)
    digest cache       one entry of `ConversationKey.digest`'s LRU (its 4 arguments and the digest)
    switch bucket      one sender's explicit-switch token bucket
    memo               one failed delivery's first decision
    stored answer      real bytes per accounted byte of a small stored answer (`Reply.size`)
    in-flight body     a request's body held while it arrives and its signature is checked (about
                       twice `max_body_bytes`: the received chunks and their joined copy), and the
                       peak while a channel without a secret parses a `max_body_bytes` WhatsApp body
                       of small messages (the body, its JSON, its envelopes)

Measured, never asserted; the totals multiply by the defaults of `stickyroute.config`.
"""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import platform
import sys
import tracemalloc
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stickyroute.admin.sessions import MAX_SESSIONS, Sessions  # noqa: E402
from stickyroute.admin.throttle import MAX_ADDRESSES, AuthThrottle  # noqa: E402
from stickyroute.channels import ADAPTERS  # noqa: E402
from stickyroute.config.ids import MAX_ID_BYTES  # noqa: E402
from stickyroute.config.model import ChannelType, Config  # noqa: E402
from stickyroute.core.delivery import DecisionMemo  # noqa: E402
from stickyroute.core.route import DIGESTS_CACHED, ConversationKey, Route, _digest  # noqa: E402
from stickyroute.observe.ring import RING_SIZE  # noqa: E402
from stickyroute.reply import Reply  # noqa: E402
from stickyroute.routing.envelope import KEPT_TEXT_CHARS  # noqa: E402
from stickyroute.state.base import ConversationLimits  # noqa: E402
from stickyroute.state.budget import MAX_SENDERS, MemorySwitchBudget  # noqa: E402
from stickyroute.state.memory import MAX_MEMOS, MemoryConversationState, MemoryDeliveryLog  # noqa: E402

N = 5_000
OUT = ROOT / "results" / "bench" / "worst_memory.md"
MIB = 1024 * 1024


def long_id(n: int) -> str:
    """A fresh 256-character id, distinct per `n`."""
    head = f"{n:08d}"
    return head + "x" * (MAX_ID_BYTES - len(head))


def measure(build: Callable[[], object], count: int) -> float:
    """Bytes per entry `build` keeps (tracemalloc, `count` entries)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    kept = build()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename"))
    del kept
    return size / count


def routes() -> object:
    state = MemoryConversationState({"whatsapp": ConversationLimits(1800.0, N)}, recent_messages=0)

    async def fill() -> None:
        for n in range(N):
            key = ConversationKey("whatsapp", long_id(n), long_id(n + N), long_id(n + 2 * N))
            lease = await state.acquire(key, 0.0)
            await state.commit(lease, 0.0, store=Route("general", 0.0, 0.0, reason="classified"))

    asyncio.run(fill())
    _digest.cache_clear()  # counted apart (its own bound)
    return state


def recent_texts() -> object:
    state = MemoryConversationState({"whatsapp": ConversationLimits(1800.0, N)}, recent_messages=1)
    keys = [ConversationKey("whatsapp", None, None, f"{n}") for n in range(N)]

    async def fill(with_text: bool) -> None:
        for n, key in enumerate(keys):
            lease = await state.acquire(key, 0.0)
            text = (chr(0x1F600) + f"{n:07d}") * (KEPT_TEXT_CHARS // 8) if with_text else None
            await state.commit(lease, 0.0, store=Route("general", 0.0, 0.0), text=text)

    asyncio.run(fill(False))
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    asyncio.run(fill(True))
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    recent_texts.per = sum(s.size_diff for s in after.compare_to(before, "filename")) / N  # type: ignore[attr-defined]
    return state


def digests() -> object:
    """Per entry of the digest LRU, its three ids included (a route dropped, its digest may stay)."""
    _digest.cache_clear()
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for n in range(N):
        ConversationKey("whatsapp", long_id(n), long_id(n + N), long_id(n + 2 * N)).digest()
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    digests.per = sum(s.size_diff for s in after.compare_to(before, "filename")) / N  # type: ignore[attr-defined]
    return None


def switches() -> object:
    budget = MemorySwitchBudget(max_senders=N)

    async def fill() -> None:
        for n in range(N):
            await budget.take("whatsapp", long_id(n), 10.0, 0.0)

    asyncio.run(fill())
    return budget


def memos() -> object:
    log = MemoryDeliveryLog(max_memos=N)

    async def fill() -> None:
        for n in range(N):
            key = ("whatsapp", long_id(n))
            await log.claim([key], 0.0)
            await log.fail([key], None, 0.0, {key: DecisionMemo("general", "classified")})

    asyncio.run(fill())
    return log


def answers() -> tuple[float, int]:
    """Real bytes per accounted byte of stored answers (a 200 with a 2-byte body, 256-byte ids)."""
    log = MemoryDeliveryLog(max_reply_bytes=1 << 40)
    reply = Reply(200, [(b"content-type", b"application/json")], b"{}")

    async def fill() -> None:
        for n in range(N):
            key = ("whatsapp", long_id(n))
            await log.claim([key], 0.0)
            await log.complete([key], Reply(reply.status, list(reply.headers), bytes(reply.body)), 0.0)

    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    asyncio.run(fill())
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    real = sum(s.size_diff for s in after.compare_to(before, "filename"))
    return real / (N * reply.size()), reply.size()


def throttle() -> object:
    table = AuthThrottle(max_addresses=N)
    for n in range(N):
        table.failed(f"2001:db8:{n // 65536:x}:{n % 65536:x}::1", 0.0, 10, 60.0)
    return table


def sessions() -> object:
    store = Sessions(max_sessions=N)
    for _ in range(N):
        store.open("admin-token-0123456789", 0.0, 3600.0)
    return store


def in_flight_body(limit: int) -> tuple[int, int]:
    """(body bytes, peak bytes while parsing it) for a `limit`-byte WhatsApp body of small messages."""
    message = {"from": "15550000001", "id": "wamid.X", "timestamp": "1700000000", "type": "text",
               "text": {"body": "hi"}}
    per = len(json.dumps(message, separators=(",", ":"))) + 1
    count = (limit - 300) // per
    value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
             "messages": [dict(message, id=f"wamid.{n:09d}") for n in range(count)]}
    body = json.dumps({"object": "whatsapp_business_account",
                       "entry": [{"id": "WABA1", "changes": [{"field": "messages", "value": value}]}]},
                      separators=(",", ":")).encode()
    del value
    gc.collect()
    tracemalloc.start()
    copy = bytes(body)  # what the ASGI shell holds
    envelopes = ADAPTERS[ChannelType.WHATSAPP].parse(copy, [], "whatsapp")
    _current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del envelopes, copy
    return len(body), peak


def main() -> None:
    config = Config(path="defaults", agents={}, channels={})
    per_route = measure(routes, N)
    recent_texts()
    digests()
    per_switch = measure(switches, N)
    per_memo = measure(memos, N)
    ratio, answer_size = answers()
    per_address = measure(throttle, N)
    per_session = measure(sessions, N)
    body_bytes, body_peak = in_flight_body(config.server.max_body_bytes)
    routing = config.routing
    rows = [
        ("route (3 ids of 256 bytes)", per_route, routing.max_conversations, "per channel: max_conversations"),
        ("recent text (1024 chars of 4 bytes)", recent_texts.per, routing.max_conversations,  # type: ignore[attr-defined]
         "per channel and per message of context_messages (default 0: none kept)"),
        ("digest cache entry", digests.per, DIGESTS_CACHED, "DIGESTS_CACHED"),  # type: ignore[attr-defined]
        ("switch bucket (256-byte sender)", per_switch, MAX_SENDERS, "MAX_SENDERS"),
        ("memo (256-byte delivery id)", per_memo, MAX_MEMOS, "MAX_MEMOS"),
        ("throttle entry (an IPv6 /64)", per_address, MAX_ADDRESSES, "MAX_ADDRESSES"),
        ("session", per_session, MAX_SESSIONS, "MAX_SESSIONS"),
    ]
    stamp = datetime.date.today().isoformat()
    lines = [f"# Worst-case memory of the defaults ({stamp}, {platform.machine()}, Python {platform.python_version()})",
             "", "| entry | bytes each | bound | MiB at the bound | bound from |", "|---|---:|---:|---:|---|"]
    for name, per, bound, source in rows:
        lines.append(f"| {name} | {per:,.0f} | {bound:,} | {per * bound / MIB:,.1f} | {source} |")
    stored = config.state.delivery_log_max_bytes
    lines.append(f"| stored answers | {ratio:.2f} real bytes per accounted byte ({answer_size} accounted each) | "
                 f"{stored // MIB} MiB accounted | {ratio * stored / MIB:,.1f} | delivery_log_max_bytes |")
    lines.append(f"| decision ring entry with log_text | about {KEPT_TEXT_CHARS * 4 + 1024:,} (text at most "
                 f"{KEPT_TEXT_CHARS} chars) | {RING_SIZE:,} | {(KEPT_TEXT_CHARS * 4 + 1024) * RING_SIZE / MIB:,.1f} "
                 "| RING_SIZE |")
    connections = config.server.max_connections
    held = 2 * config.server.max_body_bytes
    lines.append(f"| a request's body, before its signature is checked | about {held:,} (the body and its joined "
                 f"copy) | {connections} connections | {held * connections / MIB:,.0f} | [server] max_connections "
                 "x 2 x max_body_bytes |")
    lines.append(f"| a request parsed (a channel without its secret) | {body_peak:,} peak for a {body_bytes:,}-byte "
                 f"body of small messages | {connections} connections | {body_peak * connections / MIB:,.0f} | "
                 "[server] max_connections x parse peak |")
    text = "\n".join(lines) + "\n"
    print(text)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text)


if __name__ == "__main__":
    main()
