"""Hypothesis strategies for webhook bodies, from the platforms' schemas (platforms.md 3 and 4;
the other platforms' in `bench.fuzzing.platforms`).

Every update kind and field type, unicode of every class (lone surrogates included, as JSON
escapes), huge and deep values, missing and extra fields, wrong types, numbers as strings (ASCII
and other digits), duplicated keys; plus byte-level mutations of the shipped sample payloads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

PAYLOADS = Path(__file__).resolve().parents[2] / "tests" / "channels" / "payloads"
TELEGRAM_KINDS = (
    "message", "edited_message", "channel_post", "edited_channel_post", "business_message",
    "edited_business_message", "guest_message", "callback_query", "inline_query", "chosen_inline_result",
    "shipping_query", "pre_checkout_query", "purchased_paid_media", "poll", "poll_answer", "my_chat_member",
    "chat_member", "chat_join_request", "message_reaction", "message_reaction_count", "chat_boost",
    "removed_chat_boost", "business_connection", "deleted_business_messages", "managed_bot", "future_kind",
)
WHATSAPP_FIELDS = ("messages", "history", "calls", "smb_message_echoes", "user_preferences", "user_id_update",
                   "account_update", "message_template_status_update", "phone_number_quality_update", "other")
MESSAGE_TYPES = ("text", "image", "video", "document", "audio", "sticker", "location", "contacts", "reaction",
                 "button", "interactive", "order", "system", "unsupported", "weird")

texts = st.text(st.characters(codec=None, exclude_categories=()), max_size=40) | st.sampled_from(
    ["/agent", "/agent coder", "/agent@StickyrouteDemoBot ops", "/agent auto", "@coder help", "thanks!", "ok",
     "please refactor this python function", "\u0663\u00b2", "\U0001f44d", "e\u0301", "\u202eevil", ""])
digit_strings = st.text(st.sampled_from("0123456789-+ \u0663\u00b2\u00b9\uff13\u06f1"), min_size=0, max_size=12)
ids = (st.integers(min_value=-(2**63), max_value=2**63) | digit_strings | st.floats(allow_nan=True)
       | st.booleans() | st.none() | st.just([]) | st.just({}))
scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts


_DEEP = re.compile(r'"\\u0000DEEP(\d+)\\u0000"')


def deep(depth: int) -> str:
    """A placeholder that `serialised` writes as `depth` nested arrays (json.dumps itself would
    hit the recursion limit before the proxy's parser does)."""
    return f"\x00DEEP{depth}\x00"


def _expand(text: str) -> str:
    return _DEEP.sub(lambda m: "[" * int(m.group(1)) + "1" + "]" * int(m.group(1)), text)


junk = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
                    max_leaves=8)
odd = junk | st.integers(min_value=1, max_value=3000).map(deep) | st.integers(0, 20_000).map(lambda n: "x" * n)


def maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """The value, a wrong type, or a strange value."""
    return st.one_of(value, value, value, odd)


def _obj(**fields: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Objects whose fields may be missing, of another type, or joined by extra fields."""
    return st.builds(
        lambda present, extra: {**{k: v for k, v in present.items() if v is not _MISSING}, **extra},
        st.fixed_dictionaries({k: st.one_of(st.just(_MISSING), maybe(v)) for k, v in fields.items()}),
        st.dictionaries(texts, junk, max_size=2),
    )


_MISSING = object()
users = _obj(id=ids, is_bot=st.booleans(), first_name=texts, username=texts)
chats = _obj(id=ids, type=st.sampled_from(["private", "group", "supergroup", "channel", "x"]), is_forum=st.booleans())
telegram_messages = _obj(
    message_id=ids, date=st.integers(), text=texts, caption=texts, chat=chats, sender_chat=chats,
    message_thread_id=ids, is_topic_message=st.booleans() | scalars, is_automatic_forward=st.booleans(),
    entities=st.lists(_obj(type=texts, offset=st.integers(), length=st.integers()), max_size=2),
    reply_to_message=junk, **{"from": users},
)
telegram_values = _obj(chat=chats, user=users, voter_chat=chats, data=texts, message=telegram_messages,
                       user_chat_id=ids, **{"from": users}) | telegram_messages | junk


@st.composite
def telegram_updates(draw: st.DrawFn) -> dict[str, Any]:
    update: dict[str, Any] = {"update_id": draw(maybe(st.integers(min_value=0, max_value=2**31)))}
    for kind in draw(st.lists(st.sampled_from(TELEGRAM_KINDS), min_size=0, max_size=2, unique=True)):
        update[kind] = draw(telegram_values)
    return update


contacts = _obj(wa_id=ids, user_id=ids, profile=_obj(name=texts, username=texts))
whatsapp_messages = _obj(
    id=ids, timestamp=ids, type=st.sampled_from(MESSAGE_TYPES), text=_obj(body=texts),
    image=_obj(caption=texts), button=_obj(text=texts, payload=texts), group_id=ids, from_user_id=ids,
    interactive=_obj(button_reply=_obj(id=texts, title=texts), list_reply=_obj(id=texts, title=texts)),
    context=_obj(id=texts, **{"from": ids}), **{"from": ids},
)
statuses = _obj(id=ids, status=st.sampled_from(["sent", "delivered", "read", "failed"]) | scalars,
                recipient_id=ids, recipient_user_id=ids, recipient_type=st.sampled_from(["individual", "group"]),
                recipient_participant_id=ids, recipient_participant_user_id=ids)
events = _obj(id=ids, event=texts, direction=st.sampled_from(["USER_INITIATED", "BUSINESS_INITIATED"]) | scalars,
              to=ids, wa_id=ids, user_id=ids, to_user_id=ids, **{"from": ids})
history = _obj(metadata=junk, threads=st.lists(_obj(id=ids, messages=st.lists(whatsapp_messages, max_size=2)),
                                               max_size=2))
values = _obj(
    messaging_product=texts, metadata=_obj(phone_number_id=ids), contacts=st.lists(contacts, max_size=3),
    messages=st.lists(whatsapp_messages, max_size=3), statuses=st.lists(statuses, max_size=2),
    calls=st.lists(events, max_size=2), message_echoes=st.lists(events, max_size=2),
    user_preferences=st.lists(events, max_size=2), user_id_update=st.lists(events, max_size=1),
    history=st.lists(history, max_size=2), errors=junk,
)
changes = _obj(field=st.sampled_from(WHATSAPP_FIELDS) | scalars, value=values)


@st.composite
def whatsapp_notifications(draw: st.DrawFn) -> dict[str, Any]:
    entries = draw(st.lists(_obj(id=ids, changes=st.lists(changes, max_size=3)), max_size=3))
    return {"object": draw(st.sampled_from(["whatsapp_business_account"] * 5 + ["page", 1])), "entry": entries}


@st.composite
def serialised(draw: st.DrawFn, docs: st.SearchStrategy[Any]) -> bytes:
    """A document as JSON bytes: compact or spaced, ASCII escapes or UTF-8, sometimes with a key
    of an object repeated (the last one wins in Python, not everywhere)."""
    doc = draw(docs)
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), separators=draw(st.sampled_from([(",", ":"), (", ", ": ")])),
                      allow_nan=True)
    if draw(st.integers(0, 4)) == 0 and isinstance(doc, dict) and doc:
        key = draw(st.sampled_from(sorted(doc, key=str)))
        text = "{" + json.dumps(str(key)) + ":" + json.dumps(draw(junk)) + "," + text[1:]
    text = _expand(text)
    if draw(st.integers(0, 8)) == 0:
        text = text.replace('"a"', '"\\ud800"', 1) + draw(st.sampled_from(["", " ", "\n"]))
    return text.encode("utf-8", "surrogatepass")


def telegram_bodies() -> st.SearchStrategy[bytes]:
    return serialised(telegram_updates())


def whatsapp_bodies() -> st.SearchStrategy[bytes]:
    return serialised(whatsapp_notifications())


_PAYLOAD_FOLDER = {"instagram": "messenger"}
_REAL_WORLD_FILE = {"slack": "slack", "discord": "discord", "line": "line", "messenger": "meta", "instagram": "meta"}


def _shipped(platform: str) -> list[bytes]:
    """The shipped samples of `platform` and its real-world shapes (`payloads/realworld/`)."""
    folder = PAYLOADS / _PAYLOAD_FOLDER.get(platform, platform)
    bodies = [p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix in (".json", ".txt")]
    if platform in _REAL_WORLD_FILE:
        samples = json.loads((PAYLOADS / "realworld" / f"{_REAL_WORLD_FILE[platform]}.json").read_text())
        bodies += [str(s["form"]).encode() if "form" in s else json.dumps(s["body"], ensure_ascii=False).encode()
                   for s in samples.values()]
    return bodies


@st.composite
def mutated_payloads(draw: st.DrawFn, platform: str) -> bytes:
    """A shipped sample with 1-4 byte-level mutations: flip, delete, insert, duplicate, truncate."""
    body = bytearray(draw(st.sampled_from(_shipped(platform))))
    for _ in range(draw(st.integers(1, 4))):
        if not body:
            break
        at = draw(st.integers(0, len(body) - 1))
        op = draw(st.sampled_from(["flip", "delete", "insert", "duplicate", "truncate"]))
        if op == "flip":
            body[at] = draw(st.integers(0, 255))
        elif op == "delete":
            del body[at:at + draw(st.integers(1, 16))]
        elif op == "insert":
            body[at:at] = draw(st.binary(min_size=1, max_size=8) | st.sampled_from([b'"', b"{", b"]", b"\\u00", b"\xff"]))
        elif op == "duplicate":
            body[at:at] = body[at:at + draw(st.integers(1, 64))]
        else:
            del body[at:]
    return bytes(body)


PLATFORMS = ("telegram", "whatsapp", "slack", "discord", "line", "messenger", "instagram")
"""Every platform with an adapter, in the order the fuzz runs them."""


def any_body(platform: str) -> st.SearchStrategy[bytes]:
    """Schema-shaped bodies of `platform`, mutated samples, and raw bytes."""
    from bench.fuzzing import platforms  # the other platforms' strategies build on this module's

    shaped = {
        "telegram": telegram_bodies, "whatsapp": whatsapp_bodies, "slack": platforms.slack_bodies,
        "discord": platforms.discord_bodies, "line": platforms.line_bodies,
        "messenger": lambda: platforms.meta_bodies("page"), "instagram": lambda: platforms.meta_bodies("instagram"),
    }[platform]()
    return st.one_of(shaped, shaped, mutated_payloads(platform), st.binary(max_size=64))
