"""What-if replay of a `serve --record` file: decisions under the old and a new config, and diffs.

Each recorded POST goes through the server's decision path (channel adapter -> Router: Layer 1,
engine, store, classifier) on a fake clock at its recorded `time`, once under the OLD config
(the recording's header line names it, or `--baseline`) and once under the NEW one; a
redelivered update (same channel and delivery id) reuses its first decision, as dispatch does.
The classifier is the keyword classifier of each config (or any Classifier factory given).
Output: per conversation, the messages whose agent or reason changed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from stickyroute import channels
from stickyroute.classifier.base import Classifier
from stickyroute.config.model import Config
from stickyroute.core.delivery import DecisionMemo
from stickyroute.core.route import ConversationKey
from stickyroute.errors import UnparsedUpdate
from stickyroute.forwarding.recording import FORMAT, body_of
from stickyroute.replay.offline import keyword_classifier, offline_router
from stickyroute.reply import Reply
from stickyroute.routing.envelope import Envelope
from stickyroute.state.memory import MemoryDeliveryLog

_ANSWERED = Reply(200)
"""What the offline replay stores for a decided delivery (nothing is forwarded)."""


@dataclass(frozen=True, slots=True)
class Routed:
    """One routed item of a recording: who, what, where it went and why."""

    index: int
    time: float
    conversation: str
    text: str | None
    agent: str
    reason: str


@dataclass(frozen=True, slots=True)
class Change:
    """A message routed differently under the new config."""

    old: Routed
    new: Routed


def is_recording(first_line: str) -> bool:
    """True when a file's first line is a recording header or a recorded request."""
    try:
        doc = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(doc, dict) and (doc.get("recording") == FORMAT or "body" in doc or "body_b64" in doc)


def read_recording(lines: Iterable[str]) -> tuple[str | None, list[dict[str, Any]]]:
    """(config path named by the header or None, recorded request objects in time order).

    Lines are written when a request is answered, so a slow request may follow a later one:
    records are sorted by `time` (stable: equal times keep file order). Raises ValueError on a
    line that is not JSON.
    """
    return _read(lines)[:2]


@dataclass(frozen=True, slots=True)
class Recording:
    """A recording file read whole: `config` is the header's config path resolved (a relative
    one against the recording's folder; None when there is no header), `version` the header's
    format version (0 without a header), `records` the requests in time order."""

    path: str
    config: str | None
    version: int
    records: list[dict[str, Any]]


def load_recording(path: str) -> Recording:
    """Read the recording at `path` (OSError when unreadable, ValueError on a bad line)."""
    with open(path, encoding="utf-8") as handle:
        named, records, version = _read(handle)
    return Recording(path, resolve_config_path(named, path), version, records)


def resolve_config_path(named: str | None, recording_path: str) -> str | None:
    """The header's config path; a relative one (version-1 files) is taken relative to the
    folder holding the recording, where `serve --record` was most likely run from."""
    if named is None or os.path.isabs(named):
        return named
    return os.path.join(os.path.dirname(os.path.abspath(recording_path)), named)


def _read(lines: Iterable[str]) -> tuple[str | None, list[dict[str, Any]], int]:
    config_path = None
    version = 0
    records = []
    for line in lines:
        if not line.strip():
            continue
        doc = json.loads(line)
        if doc.get("recording") == FORMAT:
            config_path = doc.get("config")
            version = int(doc.get("version", 1))
            continue
        records.append(doc)
    records.sort(key=lambda r: float(r.get("time", 0.0)))
    return config_path, records, version


def keyword_classifier_for(config: Config) -> Classifier:
    """The keyword classifier the server builds for `config` (global scorer and threshold)."""
    return keyword_classifier(config)


def _conversation(channel: str, envelope: Envelope) -> str:
    key = ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
    thread = f" thread={key.thread_id}" if key.thread_id else ""
    return f"{channel} chat={key.chat_id} sender={key.sender_id}{thread}"


async def route_recording(records: Sequence[dict[str, Any]], config: Config,
                          classifier: Classifier | None = None) -> list[Routed]:
    """Every routable item of `records` decided under `config` (recorded times, fake clock).

    A delivery seen again (a platform retry) reuses its first decision through the same
    `DeliveryLog` the server keeps (its claim carries the first decision as a memo)."""
    router = offline_router(config, classifier or keyword_classifier_for(config))
    deliveries = MemoryDeliveryLog()
    out: list[Routed] = []
    for index, record in enumerate(records):
        if record.get("method", "POST") != "POST":
            continue
        channel = config.channels.get(record.get("channel") or "") or config.channel_for_path(record.get("path", ""))
        if channel is None:
            continue
        now = float(record["time"])
        adapter = channels.adapter(channel.type)
        body = body_of(record)
        try:
            envelopes = adapter.parse(body, [], channel.name)
        except UnparsedUpdate:
            out.append(Routed(index, now, f"{channel.name} (unparsed)", None, channel.default_agent, "unparsed"))
            continue
        keys = [(channel.name, i) for i in adapter.delivery_ids(envelopes, body)]
        for envelope, key in zip(envelopes, keys, strict=False):
            [claim] = await deliveries.claim([key], now)
            if claim.memo is not None:
                agent, reason = claim.memo.agent, claim.memo.reason
            else:
                decision = await router.decide(channel.name, envelope, now)
                agent, reason = decision.agent, decision.reason
                await deliveries.complete([key], _ANSWERED, now, {key: DecisionMemo(agent, reason)})
            out.append(Routed(index, now, _conversation(channel.name, envelope), envelope.text, agent, reason))
    return out


async def compare(records: Sequence[dict[str, Any]], old: Config, new: Config,
                  classifier_for: Callable[[Config], Classifier] = keyword_classifier_for) -> dict[str, list[Change]]:
    """Changes per conversation (insertion order), from routing under `old` and `new`."""
    before = await route_recording(records, old, classifier_for(old))
    after = await route_recording(records, new, classifier_for(new))
    changes: dict[str, list[Change]] = {}
    for a, b in zip(before, after, strict=False):
        if (a.agent, a.reason) != (b.agent, b.reason):
            changes.setdefault(a.conversation, []).append(Change(a, b))
    return changes


def format_changes(changes: dict[str, list[Change]], total: int) -> str:
    """Human-readable diff: a block per conversation, one line per changed message."""
    if not changes:
        return f"no decision changes in {total} routed message(s)"
    count = sum(len(c) for c in changes.values())
    lines = [f"{count} of {total} routed message(s) change, in {len(changes)} conversation(s)"]
    for conversation, items in changes.items():
        lines.append(conversation)
        for c in items:
            text = (c.old.text or "").replace("\n", " ")
            text = text if len(text) <= 40 else text[:39] + "…"
            lines.append(f"  #{c.old.index} t={c.old.time:.0f} {text!r}: {c.old.agent} ({c.old.reason})"
                         f" -> {c.new.agent} ({c.new.reason})")
    return "\n".join(lines)
