"""Time and event-loop stall against the size of one batch (issue #10: parsing and the WhatsApp
split were quadratic; 6,000 messages took 20 s and held both listeners).

    .venv/bin/python bench/batch_bench.py [--sizes 100,1000,3000,6000,20000] [--platform whatsapp|line|messenger]

Each size is one body with N items from N senders (WhatsApp: one Cloud API change with N messages
and their N contacts; LINE: N events; Messenger: N entries of one message each); every tenth
sender is bound to a second agent, so the body is split into two parts (the worst path: parse, N
decisions, split, two re-signed forwards). The dispatcher runs in this process against two real
aiohttp agents on 127.0.0.1; a ticker task records the longest gap between its 1 ms sleeps
(the longest time one request held the event loop). Prints a table and writes
results/batch.md (results/batch-<platform>.md for the others; ignored by git). The last column is one `json.loads` of the same body: a single
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
[channels.{platform}]
path = "/{platform}"
default_agent = "general"
{secret} = "bench-secret"
[channels.{platform}.overrides]
auto_route = "sticky_heuristic"
{bindings}
"""


def line_batch(n: int) -> bytes:
    events = [{"type": "message", "mode": "active", "timestamp": 1767600000000, "webhookEventId": f"E{n}.{i}",
               "deliveryContext": {"isRedelivery": False}, "source": {"type": "user", "userId": user_id("line", i)},
               "replyToken": "r", "message": {"type": "text", "id": str(i), "text": f"hello number {i}, where is my order?"}}
              for i in range(n)]
    return json.dumps({"destination": "Ubot", "events": events}, separators=(",", ":")).encode()


def messenger_batch(n: int) -> bytes:
    entries = [{"id": "P1", "time": 1767600000000, "messaging": [{
        "sender": {"id": user_id("messenger", i)}, "recipient": {"id": "P1"}, "timestamp": 1767600000000,
        "message": {"mid": f"m.{n}.{i}", "text": f"hello number {i}, where is my order?"}}]} for i in range(n)]
    return json.dumps({"object": "page", "entry": entries}, separators=(",", ":")).encode()


def user_id(platform: str, i: int) -> str:
    return f"1555{i:07d}" if platform == "whatsapp" else f"U{i:07d}"


def line_signature(body: bytes) -> tuple[bytes, bytes]:
    import base64
    import hashlib
    import hmac

    return b"x-line-signature", base64.b64encode(hmac.new(b"bench-secret", body, hashlib.sha256).digest())


def meta_signature(body: bytes) -> tuple[bytes, bytes]:
    import hashlib
    import hmac

    return b"x-hub-signature-256", ("sha256=" + hmac.new(b"bench-secret", body, hashlib.sha256).hexdigest()).encode()


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


PLATFORMS = {  # builder, secret key, signature header
    "whatsapp": (batch, "app_secret", meta_signature),
    "line": (line_batch, "channel_secret", line_signature),
    "messenger": (messenger_batch, "app_secret", meta_signature),
}


async def measure(sizes: list[int], platform: str = "whatsapp") -> list[tuple[int, int, float, float, int]]:
    build, secret, sign = PLATFORMS[platform]
    runners = [await agent(), await agent()]
    (_, general), (_, bound) = runners
    top = max(sizes)
    bindings = "\n".join(f'[[channels.{platform}.bindings]]\nuser = "{user_id(platform, i)}"\nagent = "bound"'
                         for i in range(0, top, 10))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "proxy.toml"
        path.write_text(CONFIG.format(general=general, bound=bound, bindings=bindings, platform=platform,
                                      secret=secret))
        config = load_config(path, env={})
    service = Service(config, env={})
    await service.start()
    channel = config.channels[platform]
    rows = []
    for n in sizes:
        body = build(n)
        inbound = Inbound("POST", f"/{platform}", f"/{platform}".encode(), b"",
                          [(b"content-type", b"application/json"), sign(body)], body, "127.0.0.1", "http", "bench")
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
    parser.add_argument("--platform", default="whatsapp", choices=sorted(PLATFORMS))
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    rows = asyncio.run(measure([int(s) for s in args.sizes.split(",")], args.platform))
    lines = [f"| {args.platform} items | body KB | request s | ms per 100 KB | longest event-loop stall ms "
             "| one json.loads of the body ms |", "|---:|---:|---:|---:|---:|---:|"]
    for n, size, elapsed, stall, loads in rows:
        lines.append(f"| {n:,} | {size / 1024:,.0f} | {elapsed:.3f} | {elapsed * 1000 / (size / 102400):.1f} "
                     f"| {stall * 1000:.1f} | {loads * 1000:.1f} |")
    table = "\n".join(lines)
    print(table)
    out = ROOT / "results" / ("batch.md" if args.platform == "whatsapp" else f"batch-{args.platform}.md")
    out.parent.mkdir(exist_ok=True)
    out.write_text(table + "\n")
    print(f"written to {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
