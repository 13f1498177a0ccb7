"""Time and event-loop stall against the size of one WhatsApp batch (issue #10: parsing and the
split were quadratic; 6,000 messages took 20 s and held both listeners).

    .venv/bin/python bench/batch_bench.py [--sizes 100,1000,3000,6000,20000]

Each size is one Cloud API body with N messages from N senders and their N contacts; every
tenth sender is bound to a second agent, so the body is split into two parts (the worst path:
parse, N decisions, split, two forwards). The dispatcher runs in this process against two real
aiohttp agents on 127.0.0.1; a ticker task records the longest gap between its 1 ms sleeps
(the longest time one request held the event loop). Prints a table and writes
results/batch.md (ignored by git). The last column is one `json.loads` of the same body: a single
C call that holds the interpreter, whichever thread runs it (the floor of the longest stall).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
import tempfile
import time
from pathlib import Path

from aiohttp import web

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stickyroute.config import load_config  # noqa: E402
from stickyroute.forwarding.inbound import Inbound  # noqa: E402
from stickyroute.server.service import Service  # noqa: E402

CONFIG = """
[upstream]
timeout_s = 60.0
[agents.general]
url = "{general}"
[agents.bound]
url = "{bound}"
[channels.whatsapp]
path = "/whatsapp"
default_agent = "general"
app_secret = "bench-app-secret"
[channels.whatsapp.overrides]
auto_route = "sticky_heuristic"
{bindings}
"""


def batch(n: int) -> bytes:
    contacts = [{"profile": {"name": f"User {i}"}, "wa_id": f"1555{i:07d}"} for i in range(n)]
    messages = [{"from": f"1555{i:07d}", "id": f"wamid.B{n}.{i}", "timestamp": "1700000000", "type": "text",
                 "text": {"body": f"hello number {i}, where is my order?"}} for i in range(n)]
    value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"}, "contacts": contacts,
             "messages": messages}
    doc = {"object": "whatsapp_business_account", "entry": [{"id": "W", "changes": [{"field": "messages",
                                                                                      "value": value}]}]}
    return json.dumps(doc, separators=(",", ":")).encode()


async def agent() -> tuple[web.AppRunner, str]:
    async def ok(request: web.Request) -> web.Response:
        await request.read()
        return web.json_response({"ok": True})

    app = web.Application(client_max_size=64 * 1024 * 1024)
    app.router.add_route("*", "/{tail:.*}", ok)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    return runner, f"http://127.0.0.1:{port}"


async def ticker(gaps: list[float], stop: asyncio.Event) -> None:
    """Sleep 1 ms at a time until `stop`; record each gap (seconds)."""
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def measure(sizes: list[int]) -> list[tuple[int, int, float, float, int]]:
    import hashlib
    import hmac

    runners = [await agent(), await agent()]
    (_, general), (_, bound) = runners
    top = max(sizes)
    bindings = "\n".join(f'[[channels.whatsapp.bindings]]\nuser = "1555{i:07d}"\nagent = "bound"'
                         for i in range(0, top, 10))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "proxy.toml"
        path.write_text(CONFIG.format(general=general, bound=bound, bindings=bindings))
        config = load_config(path, env={})
    service = Service(config, env={})
    await service.start()
    channel = config.channels["whatsapp"]
    rows = []
    for n in sizes:
        body = batch(n)
        signature = "sha256=" + hmac.new(b"bench-app-secret", body, hashlib.sha256).hexdigest()
        inbound = Inbound("POST", "/whatsapp", b"/whatsapp", b"", [(b"content-type", b"application/json"),
                          (b"x-hub-signature-256", signature.encode())], body, "127.0.0.1", "http", "bench")
        gaps: list[float] = []
        stop = asyncio.Event()
        tick = asyncio.ensure_future(ticker(gaps, stop))
        await asyncio.sleep(0.01)
        start = time.perf_counter()
        reply = await service.runtime.dispatcher.handle(channel, inbound)
        elapsed = time.perf_counter() - start
        stop.set()
        await tick
        assert reply.status == 200, (reply.status, reply.body[:200])
        start = time.perf_counter()
        json.loads(body)
        rows.append((n, len(body), elapsed, max(gaps) - 0.001, time.perf_counter() - start))
    await service.aclose()
    for runner, _url in runners:
        await runner.cleanup()
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,3000,6000,20000")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows = asyncio.run(measure([int(s) for s in args.sizes.split(",")]))
    lines = ["| messages (and contacts) | body KB | request s | ms per 100 KB | longest event-loop stall ms "
             "| one json.loads of the body ms |", "|---:|---:|---:|---:|---:|---:|"]
    for n, size, elapsed, stall, loads in rows:
        lines.append(f"| {n:,} | {size / 1024:,.0f} | {elapsed:.3f} | {elapsed * 1000 / (size / 102400):.1f} "
                     f"| {stall * 1000:.1f} | {loads * 1000:.1f} |")
    table = "\n".join(lines)
    print(table)
    out = ROOT / "results" / "batch.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
