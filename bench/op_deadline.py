"""How long a Redis delivery claim takes in the event loop's free time, with and without a
CPU-bound task on the loop: the measurement behind the `state.op_timeout_ms` default.

    python bench/op_deadline.py [--hog] [--url redis://127.0.0.1:6379/0]

200 concurrent CLAIM calls from one process, 20 rounds; prints p50 / p99 / max of the wall time
and of the free loop time (`stickyroute.state.lag`: the wall time minus the loop's lag). `--hog`
holds the loop 50 ms of every 100 ms (as tests/proxy/hogged.py). Keys under a private prefix,
deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets

from stickyroute.state.lag import lag_of
from stickyroute.state.redis.client import RedisStore
from stickyroute.state.redis.scripts import CLAIM

CALLERS = 200
ROUNDS = 20


async def _hog() -> None:
    loop = asyncio.get_running_loop()
    while True:
        end = loop.time() + 0.05
        while loop.time() < end:
            pass
        await asyncio.sleep(0.05)


def _quantile(values: list[float], q: float) -> float:
    return sorted(values)[max(0, int(len(values) * q) - 1)]


async def measure(url: str, hog: bool) -> str:
    prefix = f"stickyroute-bench:{secrets.token_hex(4)}:"
    store = RedisStore(url, prefix, op_timeout_s=30.0)
    loop = asyncio.get_running_loop()
    lag = lag_of(loop)
    hogging = loop.create_task(_hog()) if hog else None
    free: list[float] = []
    wall: list[float] = []

    async def one(name: str) -> None:
        start, lag_at_start = loop.time(), lag.total
        await store.run("claim", CLAIM, [f"{prefix}d:{{{name}}}"], ["1", secrets.token_hex(8), "2", 5000])
        elapsed = loop.time() - start
        wall.append(elapsed)
        free.append(elapsed - (lag.total - lag_at_start))

    try:
        for r in range(ROUNDS):
            await asyncio.gather(*(one(f"{r}-{i}") for i in range(CALLERS)))
    finally:
        if hogging is not None:
            hogging.cancel()
        names = [k async for k in store.client.scan_iter(match=prefix + "*", count=1000)]
        for i in range(0, len(names), 500):
            await store.client.delete(*names[i:i + 500])
        await store.aclose()
    ms = {name: [v * 1000 for v in values] for name, values in (("wall", wall), ("free", free))}
    return (f"hog={hog} calls={len(wall)} " + "; ".join(
        f"{name} p50={_quantile(v, 0.5):.1f} p99={_quantile(v, 0.99):.1f} max={max(v):.1f} ms" for name, v in ms.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hog", action="store_true")
    parser.add_argument("--url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    print(asyncio.run(measure(args.url, args.hog)))


if __name__ == "__main__":
    main()
