"""`make soak`: the platform simulator at a fixed rate against the proxy with the shipped config and
rule packs, for a long time, with the proxy's memory and file descriptors sampled.

    .venv/bin/python bench/soak.py [--rate 500] [--duration 600] [--senders 5000] [--chats 50]

Traffic: Telegram updates (group chats) and WhatsApp notifications (groups; batched by the Meta
simulator) from `senders` users over `chats` chats, fake agents and a fake Groq on 127.0.0.1,
the proxy as its own process (`stickyroute serve`, shipped deadlines). Reported: offered and
acknowledged throughput, errors (non-2xx answers and failed connections seen by the platforms),
p50/p99 end-to-end latency (first POST to first 2xx), the proxy's RSS at start, every
`--sample-s` seconds and at the end (flat: growth under 10% after the first minute), open file
descriptors, the proxy's /stats (delivery log, upstream failures), and the ledger. Prints and
writes results/soak.md (ignored by git); exit status 1 when the ledger shows a loss or duplicate.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.ledger.report import ledger_lines  # noqa: E402
from bench.ledger.scenarios import Harness, Load  # noqa: E402


async def soak(args: argparse.Namespace) -> tuple[list[str], bool]:
    load = Load(rate=args.rate, duration_s=args.duration, senders=args.senders, chats=args.chats, drain_s=120.0)
    samples: list[tuple[float, int, int]] = []
    stored: list[tuple[float, int]] = []
    pending: set[asyncio.Future[None]] = set()
    async with Harness(load, short_deadlines=False) as h:
        proxy = h.proxies[0]
        samples.append((0.0, proxy.rss_kb(), proxy.open_fds()))
        next_sample = args.sample_s

        async def log_size(elapsed: float) -> None:
            deliveries = (await proxy.stats()).get("deliveries") or {}
            stored.append((elapsed, int(deliveries.get("stored_bytes", 0))))

        def sample(elapsed: float) -> None:
            nonlocal next_sample
            if elapsed >= next_sample:
                samples.append((elapsed, proxy.rss_kb(), proxy.open_fds()))
                task = asyncio.ensure_future(log_size(elapsed))
                pending.add(task)
                task.add_done_callback(pending.discard)
                print(f"  t={elapsed:5.0f} s  rss={samples[-1][1] / 1024:.1f} MiB  fds={samples[-1][2]}  "
                      f"acked={sum(1 for u in h.ledger.updates.values() if u.acked_at is not None)}", flush=True)
                next_sample += args.sample_s

        started = time.monotonic()
        cpu0, driver0 = proxy.cpu_s(), time.process_time()
        await h.play(sample)
        played = time.monotonic() - started
        in_window = sum(1 for u in h.ledger.updates.values() if u.acked_at is not None)
        cpu = proxy.cpu_s() - cpu0
        driver_cpu = time.process_time() - driver0
        counts = await h.finish()
        drained = time.monotonic() - started
        samples.append((time.monotonic() - started, proxy.rss_kb(), proxy.open_fds()))
        stats = await proxy.stats()
        answers = dict(h.telegram.statuses + h.meta.statuses)
    errors = {k: v for k, v in answers.items() if not k.startswith("2")}
    first_minute = next((rss for t, rss, _fd in samples if t >= min(60.0, args.sample_s)), samples[0][1])
    growth = (samples[-1][1] - first_minute) / first_minute * 100 if first_minute else 0.0
    lines = [
        f"soak: {args.rate:.0f} updates/s offered for {args.duration:.0f} s, {args.senders} senders over "
        f"{args.chats} chats, shipped config and rule packs",
        f"throughput: {counts.sent / played:.1f} updates/s offered; {in_window / played:.1f} acknowledged/s while "
        f"the traffic ran ({played:.0f} s), all {counts.acknowledged} acknowledged after {drained:.0f} s",
        f"CPU during the traffic: proxy {cpu / played * 100:.0f}% of a core ({cpu / max(1, in_window) * 1e6:.0f} us "
        f"per acknowledged update), this driver (platforms, agents, Groq, ledger) {driver_cpu / played * 100:.0f}%",
        f"platform answers: {answers}; errors: {errors or 'none'}",
        *ledger_lines(counts),
        "proxy RSS MiB (t s): " + ", ".join(f"{rss / 1024:.1f} ({t:.0f})" for t, rss, _fd in samples),
        f"RSS growth after the first minute: {growth:+.1f}% ({'flat' if growth < 10 else 'NOT flat'})",
        _after_bound(samples, stored, (stats.get("deliveries") or {}).get("max_bytes", 0)),
        "delivery log MiB (t s): " + ", ".join(f"{b / 2**20:.1f} ({t:.0f})" for t, b in stored)
        + f" (bound {(stats.get('deliveries') or {}).get('max_bytes', 0) / 2**20:.0f} MiB)",
        "open fds (t s): " + ", ".join(f"{fd} ({t:.0f})" for t, _rss, fd in samples),
        f"proxy /stats deliveries: {stats.get('deliveries')}; upstream: {stats.get('upstream')}",
        f"proxy /stats decisions: {stats.get('decisions')}",
    ]
    ok = counts.lost == 0 and counts.duplicated == 0 and counts.pending == 0 and counts.misrouted == 0
    return lines, ok


def _after_bound(samples: list[tuple[float, int, int]], stored: list[tuple[float, int]], bound: int) -> str:
    """RSS growth from the first sample where the delivery log was full (at its bound) to the end."""
    full = next((t for t, size in stored if bound and size >= 0.99 * bound), None)
    if full is None:
        return "the delivery log did not reach its bound during the run"
    start = next(rss for t, rss, _fd in samples if t >= full)
    growth = (samples[-1][1] - start) / start * 100
    return (f"RSS growth after the delivery log reached its bound (t={full:.0f} s): {growth:+.1f}% "
            f"({'flat' if growth < 10 else 'NOT flat'})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=float, default=500.0, help="updates per second")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of traffic")
    parser.add_argument("--senders", type=int, default=5000)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--sample-s", type=float, default=60.0, help="seconds between RSS samples")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    lines, ok = asyncio.run(soak(args))
    text = "\n".join(lines)
    print(text)
    out = ROOT / "results" / "soak.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
