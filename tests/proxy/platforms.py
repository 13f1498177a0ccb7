"""Bodies and signed headers of the Slack, Discord, LINE and Meta messaging platforms, for the end
to end tests (each signed the way its platform signs, with the test's secret)."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import nacl.signing

from stickyroute.channels.security import line_signature, meta_signature, slack_signature

SLACK_SECRET = "test-slack-secret"
LINE_SECRET = "test-line-secret"
META_SECRET = "test-app-secret"
DISCORD_KEY = nacl.signing.SigningKey(b"\x02" * 32)
DISCORD_PUBLIC = DISCORD_KEY.verify_key.encode().hex()
TEAM = "T0TEST"


def slack_headers(body: bytes, now: float, retry: int | None = None) -> dict[str, str]:
    stamp = str(int(now))
    headers = {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": slack_signature(body, stamp, SLACK_SECRET)}
    if retry is not None:
        headers |= {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
    return headers


def slack_message(text: str, *, ts: str, event_id: str, user: str = "U0TEST", channel: str = "D0TEST",
                  thread_ts: str | None = None, bot: bool = False, parent: str | None = None,
                  kind: str = "message") -> bytes:
    event = {"type": kind, "user": user, "text": text, "ts": ts, "channel": channel,
             "channel_type": "im" if channel.startswith("D") else "channel", "event_ts": ts}
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    if parent is not None:
        event["parent_user_id"] = parent
    if bot:
        event["bot_id"] = "B0TEST"
    doc = {"token": "x", "team_id": TEAM, "api_app_id": "A0TEST", "event": event, "type": "event_callback",
           "event_id": event_id, "event_time": 1767600000}
    return json.dumps(doc, separators=(",", ":")).encode()


def slack_command(text: str, *, channel: str = "D0TEST", trigger: str, command: str = "/agent") -> bytes:
    return urlencode({"token": "x", "team_id": TEAM, "channel_id": channel, "user_id": "U0TEST", "command": command,
                      "text": text, "trigger_id": trigger,
                      "response_url": "https://hooks.slack.com/commands/x"}).encode()


def discord_headers(body: bytes, stamp: str = "1767600000") -> dict[str, str]:
    return {"X-Signature-Ed25519": DISCORD_KEY.sign(stamp.encode() + body).signature.hex(),
            "X-Signature-Timestamp": stamp}


def discord_command(interaction_id: str, command: str, **options: str) -> bytes:
    doc = {"id": interaction_id, "application_id": "11", "type": 2, "token": "t", "version": 1,
           "channel_id": "C0TEST", "channel": {"id": "C0TEST", "type": 0}, "guild_id": "G0TEST",
           "member": {"user": {"id": "U0TEST", "username": "ana"}},
           "data": {"id": "9", "name": command, "type": 1,
                    "options": [{"name": k, "type": 3, "value": v} for k, v in options.items()]}}
    return json.dumps(doc, separators=(",", ":")).encode()


def line_headers(body: bytes) -> dict[str, str]:
    return {"X-Line-Signature": line_signature(body, LINE_SECRET)}


def line_event(event_id: str, user: str, text: str | None = None, *, redelivery: bool = False) -> dict[str, object]:
    event: dict[str, object] = {
        "type": "message" if text is not None else "follow", "mode": "active", "timestamp": 1767600000000,
        "webhookEventId": event_id, "deliveryContext": {"isRedelivery": redelivery},
        "source": {"type": "user", "userId": user}, "replyToken": "r"}
    if text is not None:
        event["message"] = {"type": "text", "id": event_id, "quoteToken": "q", "text": text}
    return event


def line_body(*events: dict[str, object]) -> bytes:
    return json.dumps({"destination": "Ubot", "events": list(events)}, separators=(",", ":")).encode()


def meta_headers(body: bytes) -> dict[str, str]:
    return {"X-Hub-Signature-256": meta_signature(body, META_SECRET)}


def meta_message(mid: str, sender: str, text: str, *, echo: bool = False, obj: str = "page") -> dict[str, object]:
    message: dict[str, object] = {"mid": mid, "text": text}
    if echo:
        message |= {"is_echo": True, "app_id": 1}
    people = [{"id": "P0TEST"}, {"id": sender}] if echo else [{"id": sender}, {"id": "P0TEST"}]
    return {"sender": people[0], "recipient": people[1], "timestamp": 1767600000000, "message": message}


def meta_body(*items: dict[str, object], obj: str = "page") -> bytes:
    entries = [{"id": "P0TEST", "time": 1767600000000, "messaging": [item]} for item in items]
    return json.dumps({"object": obj, "entry": entries}, separators=(",", ":")).encode()
