"""State bounded by bytes: ids of any length enter every in-memory structure only up to
`MAX_ID_BYTES` (a longer one as its digest), and stored texts up to `KEPT_TEXT_CHARS`, so the
memory a conversation keeps is bounded whatever the payload (on a real uvicorn at 127.0.0.1).
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import httpx
import pytest

from stickyroute.channels import ADAPTERS
from stickyroute.config.ids import MAX_ID_BYTES, bounded_id, normalise_id
from stickyroute.config.model import ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.routing.envelope import KEPT_TEXT_CHARS
from stickyroute.server.service import Service
from tests.proxy.harness import telegram_text, upstream_set, write_config
from tests.server.listeners import HANG_GUARD_S, serving

LONG = 100_000
"""Bytes of each hostile id (the report: 1,000 senders with 100 KB ids)."""


@pytest.mark.parametrize(("given", "expected"), [
    pytest.param("a" * MAX_ID_BYTES, "a" * MAX_ID_BYTES, id="at-the-bound: kept"),
    pytest.param("é" * 128, "é" * 128, id="256 bytes of 2-byte characters: kept"),
    pytest.param("é" * 129, "#" + __import__("hashlib").sha256(("é" * 129).encode()).hexdigest(),
                 id="258 bytes: the digest"),
    pytest.param("+" + "1" * 300, "#" + __import__("hashlib").sha256(b"1" * 300).hexdigest(),
                 id="normalised first, then bounded"),
    pytest.param(10 ** 300, "#" + __import__("hashlib").sha256(str(10 ** 300).encode()).hexdigest(),
                 id="a 301-digit number"),
])
def test_an_id_past_max_id_bytes_is_kept_as_its_digest(given, expected) -> None:
    assert normalise_id(given) == expected
    assert len(expected.encode()) <= MAX_ID_BYTES


def test_every_id_an_adapter_reads_is_bounded() -> None:
    huge = "9" * LONG
    whatsapp = {"object": "whatsapp_business_account", "entry": [{"id": "WABA1", "changes": [{"field": "messages",
                "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"},
                          "contacts": [{"wa_id": huge}],
                          "messages": [{"from": huge, "id": "wamid." + huge, "timestamp": "1", "type": "text",
                                        "text": {"body": "hi"}}],
                          "statuses": [{"id": "wamid." + huge, "status": "read" * 1000, "recipient_id": huge}]}}]}]}
    body = json.dumps(whatsapp).encode()
    envelopes = ADAPTERS[ChannelType.WHATSAPP].parse(body, [], "whatsapp")
    telegram = json.dumps({"update_id": 1, "message": {"message_id": 1, "from": {"id": huge},
                                                        "chat": {"id": huge, "type": "private"}, "text": "hi",
                                                        "message_thread_id": huge}}).encode()
    envelopes += ADAPTERS[ChannelType.TELEGRAM].parse(telegram, [], "telegram")
    ids = [i for e in envelopes for i in (e.sender_id, e.chat_id, e.thread_id, *e.sender_aliases) if i is not None]
    keys = ADAPTERS[ChannelType.WHATSAPP].delivery_ids(envelopes[:2], body)
    assert len(envelopes) == 3 and len(ids) >= 5
    assert max(len(i.encode()) for i in [*ids, *keys]) <= MAX_ID_BYTES
    assert envelopes[0].sender_id == bounded_id(huge) == envelopes[2].sender_id


PAYLOADS = Path(__file__).resolve().parents[1] / "channels" / "payloads"


def lengthened(value: object) -> object:
    """`value` with every id-like field (a key ending in `id`, a Slack user, channel or ts) made
    100 KB longer, the rest unchanged (the document keeps its shape)."""
    if isinstance(value, list):
        return [lengthened(v) for v in value]
    if not isinstance(value, dict):
        return value
    out = {}
    for key, item in value.items():
        id_like = (key.lower().endswith("id") or key in ("user", "channel", "team", "ts", "thread_ts", "from")) and \
            key not in ("update_id", "message_id")  # Telegram's own counters stay numbers (else unparsed)
        if id_like and isinstance(item, (str, int)) and not isinstance(item, bool):
            out[key] = f"{item}" + "9" * LONG
        else:
            out[key] = lengthened(item)
    return out


@pytest.mark.parametrize("platform", sorted(p.name for p in PAYLOADS.iterdir() if p.name in {t.value for t in ChannelType}))
def test_every_platforms_shipped_payloads_with_100_kb_ids_give_bounded_ids(platform) -> None:
    adapter = ADAPTERS[ChannelType(platform)]
    ids: list[str] = []
    with_sender = 0
    for sample in sorted((PAYLOADS / platform).glob("*.json")):
        body = json.dumps(lengthened(json.loads(sample.read_bytes()))).encode()
        try:
            envelopes = adapter.parse(body, [(b"content-type", b"application/json")], platform)
        except UnparsedUpdate:
            continue
        with_sender += sum(1 for e in envelopes if e.sender_id is not None)
        ids += [i for e in envelopes for i in (e.sender_id, e.chat_id, e.thread_id, *e.sender_aliases) if i]
        ids += adapter.delivery_ids(envelopes, body)
    assert with_sender >= 2 and ids
    assert max(len(i.encode()) for i in ids) <= MAX_ID_BYTES


def whatsapp_batch(first: int, count: int, text: str) -> bytes:
    messages = [{"from": f"{n:06d}" + "7" * LONG, "id": f"wamid.{n:06d}" + "w" * LONG, "timestamp": "1700000000",
                 "type": "text", "text": {"body": text}} for n in range(first, first + count)]
    value = {"messaging_product": "whatsapp", "metadata": {"phone_number_id": "PN1"}, "messages": messages}
    return json.dumps({"object": "whatsapp_business_account",
                       "entry": [{"id": "WABA1", "changes": [{"field": "messages", "value": value}]}]}).encode()


def test_conversations_with_100_kb_ids_keep_a_few_kib_each_on_a_real_server(tmp_path) -> None:
    """100 senders with 100 KB ids and wamids, each switching explicitly with a 20 KB text, recent
    texts kept: what the process keeps afterwards (tracemalloc) is a few KiB per conversation; with
    the ids kept whole it would be several times 200 KB each. Four messages a POST: each body
    stays under 1 MiB (aiohttp warns about sending more in one piece)."""
    conversations, per_post = 100, 4
    text = "/agent billing " + "z" * 10_000
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, agents={"billing": 'keywords = ["invoice"]'},
                              top='[classifier]\nprovider = "keywords"\ncontext_messages = 3\n')
        service = Service(config, env={})
        with serving(service) as (public, _admin), httpx.Client(timeout=HANG_GUARD_S) as client:
            base = f"http://{public.address[0]}:{public.address[1]}"
            warm = client.post(base + "/webhooks/telegram", content=telegram_text(1, "hello"))
            gc.collect()
            tracemalloc.start()
            try:
                before = tracemalloc.take_snapshot()
                answers = [client.post(base + "/webhooks/whatsapp", content=whatsapp_batch(n, per_post, text))
                           .status_code for n in range(0, conversations, per_post)]
                forwarded = len(ups["billing"].requests)
                ups["billing"].reset()  # the recording agent (this process) keeps every body it got
                gc.collect()
                after = tracemalloc.take_snapshot()
            finally:
                tracemalloc.stop()
            live = service.router.state
            routes = live._routes["whatsapp"]  # the memory backend's own structures, read in place
            recent = live._recent["whatsapp"]
            keys = list(routes.keys())
            stored_texts = [t for k in recent for t in recent[k]]
    kept = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert (warm.status_code, answers, forwarded) == (200, [200] * 25, 25)
    assert len(keys) == conversations
    assert max(len(part.encode()) for key in keys for part in key if part) <= MAX_ID_BYTES
    assert stored_texts and max(len(t) for t in stored_texts) == KEPT_TEXT_CHARS
    assert kept < conversations * 16 * 1024, f"{kept / conversations:.0f} bytes kept per conversation"
