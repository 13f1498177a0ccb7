"""Route memory benchmark (issue #3, "Cache"): bytes per tracked conversation in the memory state backend.
Target: under 1 KB (1024 bytes) per conversation.

    .venv/bin/python bench/memory_bench.py          # prints the table, writes results/bench/memory.md

Fills one channel of `MemoryConversationState` with N = 100,000 routes (max_conversations = N, TTL 30 min)
under realistic Telegram keys: group chats `-100<10 digits>` (about 20 members each, a tenth of
them forum topics with a thread id) and private chats (chat id = sender id), senders
`<10 digits>`, ids as fresh `str` objects the way the channel parser makes them. Memory is
measured with tracemalloc in three parts, each allocated separately so it can be told apart:

    key        ConversationKey + its id strings
    route      Route (agent name shared, two floats)
    store      the cache's bookkeeping: cachetools TLRUCache data dict, its OrderedDict of
               `_Item`s (one per key), the expiry heap

then "steady state": every route is written once more (`put` of `route.touched(now)`, what the
router does on every message), which leaves a second, removed `_Item` in the expiry heap per key
until cachetools compacts the heap (at 2x the live items). Measured, never asserted.
"""

from __future__ import annotations

import gc
import platform
import random
import sys
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import asyncio  # noqa: E402

from stickyroute.core.route import ConversationKey, Route  # noqa: E402
from stickyroute.state.base import ConversationLimits  # noqa: E402
from stickyroute.state.memory import MemoryConversationState  # noqa: E402
from stickyroute.state.views import RouteViews  # noqa: E402

N = 100_000
TARGET_BYTES = 1024
TTL_S = 30 * 60.0
AGENTS = ("coder", "support", "ops", "writer", "researcher", "billing")
OUT = ROOT / "results" / "bench" / "memory.md"
"""Written on every run; `results/` is ignored by git (docs/bench/ holds the hand-updated copies)."""


def make_keys(n: int, seed: int = 3) -> list[ConversationKey]:
    """n distinct realistic Telegram conversation keys (fresh str ids, channel name shared)."""
    rng = random.Random(seed)
    channel = "telegram"
    keys: list[ConversationKey] = []
    seen: set[tuple] = set()
    while len(keys) < n:
        sender = str(rng.randrange(100_000_000, 7_999_999_999))
        if rng.random() < 0.4:  # private chat: chat id = sender id (a separate str, as parsed)
            parts = (str(int(sender)), None, sender)
        else:
            group = rng.randrange(n // 20 + 1)
            chat = f"-100{1_000_000_000 + group * 7919}"
            thread = str(rng.randrange(2, 5000)) if group % 10 == 0 else None
            parts = (chat, thread, sender)
        if parts in seen:
            continue
        seen.add(parts)
        keys.append(ConversationKey(channel, *parts))
    return keys


def make_routes(n: int, seed: int = 4) -> list[Route]:
    """n routes: agent names shared (interned config strings), fresh float times."""
    rng = random.Random(seed)
    base = 1_767_225_600.0
    routes = []
    for i in range(n):
        t = base + rng.random() * 600
        candidate = rng.choice(AGENTS) if i % 5 == 0 else None
        routes.append(Route(rng.choice(AGENTS), chosen_at=t - 30.5, last_active=t, candidate=candidate,
                            counter=1 if candidate else 0))
    return routes


def _traced(build):
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    result = build()
    gc.collect()
    return result, tracemalloc.get_traced_memory()[0] - before


def measure(n: int = N) -> dict[str, float]:
    """Bytes per conversation: key, route, store bookkeeping, total; and steady state after one rewrite."""
    tracemalloc.start()
    try:
        keys, key_bytes = _traced(lambda: make_keys(n))
        routes, route_bytes = _traced(lambda: make_routes(n))
        store = MemoryConversationState({"telegram": ConversationLimits(TTL_S, n)})
        views = RouteViews(store)
        now = 1_767_225_600.0 + 600

        async def put_all(pairs, at):  # each route written as a decision writes it
            for k, r in pairs:
                await store.commit(await store.acquire(k, at), at, store=r)

        pairs = list(zip(keys, routes, strict=True))

        def fill():
            asyncio.run(put_all(pairs, now))

        _, store_bytes = _traced(fill)
        assert asyncio.run(views.count("telegram", now)) == n
        # lists holding keys/routes are bench scaffolding, not store memory
        scaffold = sys.getsizeof(keys) + sys.getsizeof(routes)
        key_bytes -= sys.getsizeof(keys)
        route_bytes -= sys.getsizeof(routes)
        routes.clear()
        pairs.clear()
        gc.collect()
        before_rewrite = tracemalloc.get_traced_memory()[0]
        later = now + 60

        async def touch_all():
            for k in keys:
                lease = await store.acquire(k, later)
                await store.commit(lease, later, store=lease.route.touched(later))

        def rewrite():
            asyncio.run(touch_all())

        _, rewrite_bytes = _traced(rewrite)
        assert asyncio.run(views.count("telegram", later)) == n
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    total = key_bytes + route_bytes + store_bytes
    return {
        "n": n,
        "key": key_bytes / n,
        "route": route_bytes / n,
        "store": store_bytes / n,
        "total": total / n,
        "steady_extra": rewrite_bytes / n,
        "steady_total": (total + rewrite_bytes) / n,
        "scaffold": scaffold,
        "before_rewrite": before_rewrite,
        "after": after,
    }


def render(m: dict[str, float]) -> str:
    def verdict(v: float) -> str:
        return "met" if v < TARGET_BYTES else f"MISSED by {v - TARGET_BYTES:.0f} B ({v / TARGET_BYTES:.2f}x)"

    parts = {"key (ConversationKey + id strings)": m["key"], "route (Route + floats)": m["route"],
             "store bookkeeping (TLRUCache dict + OrderedDict of _Item + heap)": m["store"]}
    dominant = max(parts, key=parts.get)
    lines = [
        "# Route store memory benchmark",
        "",
        f"Bytes per tracked conversation in `MemoryConversationState` (cachetools `TLRUCache`), tracemalloc, "
        f"{int(m['n']):,} routes, realistic Telegram keys. Target: < {TARGET_BYTES} B (issue #3).",
        f"Python {platform.python_version()}, {platform.machine()}; command: `.venv/bin/python bench/memory_bench.py`.",
        "",
        "| part | bytes / conversation |",
        "|---|---:|",
    ]
    for name, v in parts.items():
        lines.append(f"| {name} | {v:.0f} |")
    lines += [
        f"| **total after one fill** | **{m['total']:.0f}** ({verdict(m['total'])}) |",
        f"| + one rewrite of every route (`put(route.touched(now))`, as on each message) | +{m['steady_extra']:.0f} |",
        f"| **steady state (fill + one rewrite)** | **{m['steady_total']:.0f}** ({verdict(m['steady_total'])}) |",
        "",
        f"Largest part: {dominant} ({parts[dominant]:.0f} B). The rewrite leaves one removed `_Item` per key "
        "in TLRUCache's expiry heap until it reaches 2x the live items (then it is compacted), so the "
        "steady state oscillates between the two totals.",
    ]
    return "\n".join(lines) + "\n"


RSS_N = 1_000_000
RSS_TARGET_BYTES = 600
"""Memory per live conversation as the process sees it (RSS delta at RSS_N conversations)."""


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def rss_per_conversation(n: int = RSS_N) -> float:
    """RSS growth per live conversation (bytes): `n` keys and routes made the way the channel
    parser and the router make them, put in the store, without tracemalloc; the two lists that
    hold them while they are made (8 bytes a pointer each) are subtracted."""
    gc.collect()
    before = _rss_bytes()
    keys, routes = make_keys(n), make_routes(n)
    store = MemoryConversationState({"telegram": ConversationLimits(TTL_S, n)})
    now = 1_767_225_600.0 + 600

    async def put_all() -> None:
        for k, r in zip(keys, routes, strict=True):
            await store.commit(await store.acquire(k, now), now, store=r)

    asyncio.run(put_all())
    gc.collect()
    grown = _rss_bytes() - before - sys.getsizeof(keys) - sys.getsizeof(routes)
    assert asyncio.run(RouteViews(store).count("telegram", now)) == n
    return grown / n


def main(rss_n: int = RSS_N) -> str:
    report = render(measure())
    if rss_n:
        per = rss_per_conversation(rss_n)
        verdict = "met" if per <= RSS_TARGET_BYTES else f"MISSED ({per / RSS_TARGET_BYTES:.2f}x)"
        report += (f"\nRSS per live conversation at {rss_n:,} conversations (no tracemalloc): **{per:.0f} B** "
                   f"(target <= {RSS_TARGET_BYTES} B: {verdict}).\n")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report, encoding="utf-8")
    print(report)
    return report


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else RSS_N)
