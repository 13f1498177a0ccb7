"""Route memory benchmark (issue #3, "Cache"): bytes per tracked conversation in the memory state backend.
Target: under 1 KB (1024 bytes) per conversation.

    .venv/bin/python bench/memory_bench.py          # prints the table, writes results/bench/memory.md

Fills one channel of `MemoryConversationState` with N = 100,000 routes (max_conversations = N, TTL 30 min)
under realistic Telegram keys: group chats `-100<10 digits>` (about 20 members each, a tenth of
them forum topics with a thread id) and private chats (chat id = sender id), senders
`<10 digits>`, ids as fresh `str` objects the way the channel parser makes them. Memory is
measured with tracemalloc in three parts, each allocated separately so it can be told apart:

    key        ConversationKey + its id strings: made per message and dropped with the request
               (the store keeps routes by digest), shown for scale, not counted
    route      Route (agent name shared, two floats)
    store      the cache's bookkeeping: cachetools TLRUCache data dict, its OrderedDict of
               `_Item`s (one per conversation), the expiry heap, the 32-hex digest keying them

Every route is written as a decision writes it (acquire + commit); then "steady state": every
route is written once more (`route.touched(now)`, what the router does on every message), which leaves a second, removed `_Item` in the expiry heap per key
until cachetools compacts the heap (at 2x the live items). Measured, never asserted.
"""

from __future__ import annotations

import gc
import platform
import random
import sys
import tracemalloc
from collections.abc import Iterator
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


def iter_keys(n: int, seed: int = 3) -> Iterator[ConversationKey]:
    """n distinct realistic Telegram conversation keys, made one at a time as the channel parser
    makes them for each message (fresh str ids), so that nothing but the store can keep them:
    sender ids distinct by construction, 40 % private chats (chat id = sender id), the rest in
    groups of about 20 with a tenth of the groups forum topics (a thread id)."""
    rng = random.Random(seed)
    for i in range(n):
        sender = str(1_000_000_000 + i * 7)
        if rng.random() < 0.4:
            yield ConversationKey("telegram", str(int(sender)), None, sender)
        else:
            group = rng.randrange(n // 20 + 1)
            thread = str(rng.randrange(2, 5000)) if group % 10 == 0 else None
            yield ConversationKey("telegram", f"-100{1_000_000_000 + group * 7919}", thread, sender)


async def _fill(store: MemoryConversationState, n: int, at: float, routes: Iterator[Route] | None = None) -> None:
    """Write a route for each of `n` conversations as a decision writes it (acquire + commit);
    each key is dropped after its write, as the request that made it ends."""
    for key in iter_keys(n):
        lease = await store.acquire(key, at)
        route = next(routes) if routes is not None else lease.route.touched(at)
        await store.commit(lease, at, store=route)


def measure(n: int = N) -> dict[str, float]:
    """Bytes per conversation: a key (made per message, not kept), a route, the store's
    bookkeeping, total kept; and steady state after one rewrite."""
    tracemalloc.start()
    try:
        keys, key_bytes = _traced(lambda: list(iter_keys(n)))
        del keys
        routes, route_bytes = _traced(lambda: make_routes(n))
        store = MemoryConversationState({"telegram": ConversationLimits(TTL_S, n)})
        views = RouteViews(store)
        now = 1_767_225_600.0 + 600
        route_bytes -= sys.getsizeof(routes)  # the list is bench scaffolding
        feed = iter(routes)
        _, kept_bytes = _traced(lambda: asyncio.run(_fill(store, n, now, feed)))
        assert asyncio.run(views.count("telegram", now)) == n
        routes.clear()
        gc.collect()
        before_rewrite = tracemalloc.get_traced_memory()[0]
        later = now + 60
        _, rewrite_bytes = _traced(lambda: asyncio.run(_fill(store, n, later)))
        assert asyncio.run(views.count("telegram", later)) == n
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    total = route_bytes + kept_bytes
    return {
        "n": n,
        "key": key_bytes / n,
        "route": route_bytes / n,
        "store": kept_bytes / n,
        "total": total / n,
        "steady_extra": rewrite_bytes / n,
        "steady_total": (total + rewrite_bytes) / n,
        "before_rewrite": before_rewrite,
        "after": after,
    }


def render(m: dict[str, float]) -> str:
    def verdict(v: float) -> str:
        return "met" if v < TARGET_BYTES else f"MISSED by {v - TARGET_BYTES:.0f} B ({v / TARGET_BYTES:.2f}x)"

    parts = {"route (Route + floats)": m["route"],
             "store bookkeeping (TLRUCache by digest: dict, OrderedDict of _Item, heap; the digest)": m["store"]}
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
    lines.append(f"| (a key, ConversationKey + id strings, made per message and not kept: {m['key']:.0f}) | - |")
    for name, v in parts.items():
        lines.append(f"| {name} | {v:.0f} |")
    lines += [
        f"| **total after one fill** | **{m['total']:.0f}** ({verdict(m['total'])}) |",
        f"| + one rewrite of every route (a decision storing `route.touched(now)`, as on each message) | +{m['steady_extra']:.0f} |",
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
    """RSS growth per live conversation (bytes): `n` conversations each written as a decision
    writes it, keys made per message and dropped (as the router's are), routes kept by the store;
    without tracemalloc."""
    gc.collect()
    before = _rss_bytes()
    store = MemoryConversationState({"telegram": ConversationLimits(TTL_S, n)})
    now = 1_767_225_600.0 + 600
    routes = (Route(AGENTS[i % len(AGENTS)], chosen_at=now - 30.5, last_active=now - (i % 600)) for i in range(n))
    asyncio.run(_fill(store, n, now, routes))
    gc.collect()
    grown = _rss_bytes() - before
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
