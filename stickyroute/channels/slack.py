"""Slack channel: Events API, interactivity and slash commands on one path or several.

Events arrive as JSON (`slack_events`), interactivity and slash commands form-encoded
(`slack_forms`); the body tells which, so one channel may serve all three URLs of a Slack app.
Every request is signed (`X-Slack-Signature`, v0, 5-minute window against `now`); Slack sends one
event per request, so nothing is split.

Handshakes answered by the proxy: `url_verification` (a signed POST carrying `challenge`: answered
`{"challenge": ...}` once its signature holds) and `ssl_check=1` (answered 200 as it comes: it
carries no user and reaches no agent, as Bolt answers it before verifying). A slash command
`/agent` is answered by the proxy itself with an ephemeral message (`agent_list`).
Source: Slack "Verifying requests from Slack", reference/events/url_verification, "Implementing
slash commands" (responses: `response_type: ephemeral`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from stickyroute.channels.base import BodyPart, ItemPath, Request, SplitError, ids_or_positions
from stickyroute.channels.jsonbody import decode
from stickyroute.channels.listing import listing
from stickyroute.channels.security import check_slack_signature
from stickyroute.channels.slack_events import parse_events
from stickyroute.channels.slack_forms import form_fields, parse_form
from stickyroute.config.model import Agent, Channel, ChannelType
from stickyroute.errors import UnparsedUpdate
from stickyroute.reply import RawHeaders, Reply
from stickyroute.routing.envelope import Envelope

__all__ = ["SlackAdapter", "parse"]

HANDSHAKE_MAX_BYTES = 4096
"""A verification request is tiny: a larger body is never read by the (unthreaded) handshake."""
_JSON = (b"content-type", b"application/json")


def parse(body: bytes, channel: str) -> tuple[Envelope, ...]:
    """One Slack request body -> a 1-tuple (JSON: an Events API body; else a form)."""
    if body.lstrip()[:1] == b"{":
        try:
            doc = decode(body)
        except (ValueError, RecursionError) as exc:
            raise UnparsedUpdate(f"slack: body is not valid JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise UnparsedUpdate("slack: body is not a JSON object")
        return (parse_events(doc, channel),)
    return (parse_form(body, channel),)


def _challenge(body: bytes) -> str | None:
    """The `challenge` of a `url_verification` body, else None."""
    if b"url_verification" not in body:
        return None
    try:
        doc = decode(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or doc.get("type") != "url_verification":
        return None
    challenge = doc.get("challenge")
    return challenge if isinstance(challenge, str) else None


def _is_ssl_check(body: bytes) -> bool:
    """A form with `ssl_check=1` and no command or payload; a JSON body never is one (a message
    whose link carries `&ssl_check=1&` reads as such a form)."""
    if b"ssl_check" not in body or body.lstrip()[:1] == b"{":
        return False
    try:
        fields = form_fields(body)
    except UnparsedUpdate:
        return False
    return fields.get("ssl_check") == "1" and "command" not in fields and "payload" not in fields


class SlackAdapter:
    """The Slack app's request URLs (one event or interaction per POST, signed by Slack)."""

    type = ChannelType.SLACK
    lists_agents = True
    """The slash command `/agent` is answered by the proxy (`agent_list`; a message `/agent`,
    which Slack clients never send, gets no answer there and is forwarded)."""

    def handshake(self, channel: Channel, request: Request, now: float) -> Reply | None:
        """`url_verification` answered with its challenge (once its signature holds) and
        `ssl_check` answered 200; anything else None."""
        body = request.body
        if request.method != "POST" or len(body) > HANDSHAKE_MAX_BYTES:
            return None
        if _is_ssl_check(body):
            return Reply(200, [(b"content-type", b"text/plain; charset=utf-8")], b"")
        challenge = _challenge(body)
        if challenge is None or not self.authenticate(channel, request, now):
            return None
        return Reply(200, [_JSON], json.dumps({"challenge": challenge}).encode())

    def authenticate(self, channel: Channel, request: Request, now: float) -> bool:
        """`X-Slack-Signature` over `v0:<timestamp>:<body>` under `signing_secret`, its timestamp
        within 5 minutes of `now`, when a secret is set."""
        if not channel.signing_secret:
            return True
        return check_slack_signature(request.body, request.headers, channel.signing_secret, now)

    def parse(self, body: bytes, headers: RawHeaders, channel: str) -> tuple[Envelope, ...]:
        """One event, interaction or slash command -> a 1-tuple; UnparsedUpdate for a bad body."""
        return parse(body, channel)

    def delivery_ids(self, envelopes: Sequence[Envelope], body: bytes) -> list[str]:
        """Message identity or `event_id`, `trigger_id` (`slack_events`, `slack_forms`)."""
        return ids_or_positions(envelopes, body)

    def split(self, channel: Channel, body: bytes, parts: Mapping[str, Sequence[ItemPath]]) -> dict[str, BodyPart]:
        """A Slack request holds one item: never split."""
        raise SplitError("a Slack request holds one item")

    def agent_list(self, envelope: Envelope, agents: Sequence[Agent], current: str) -> Reply | None:
        """The `/agent` slash command's answer: an ephemeral message listing the agents (the
        current one marked, a requested switch confirmed or refused); None for anything else."""
        if not envelope.to_proxy:
            return None
        where = "" if (envelope.chat_id or "").startswith("D") else (
            "In this channel /agent picks who answers your slash commands; to switch a thread, "
            "write @name in it.")
        body = {"response_type": "ephemeral", "text": listing(envelope.text, agents, current, where)}
        headers = [_JSON, (b"x-stickyroute-agent", current.encode()), (b"x-stickyroute-reason", b"explicit")]
        return Reply(200, headers, json.dumps(body).encode())
