"""Answers the proxy composes itself: errors, redeliveries, batch summaries (text/plain)."""

from __future__ import annotations

from proxy.reply import Reply

TEXT = b"text/plain; charset=utf-8"
REASON = b"x-stickyroute-reason"


def text_reply(status: int, text: str, reason: str | None = None) -> Reply:
    """A plain-text answer from the proxy itself; `reason` adds `X-Stickyroute-Reason`."""
    headers = [(b"content-type", TEXT)]
    if reason is not None:
        headers.append((REASON, reason.encode()))
    return Reply(status, headers, text.encode())


def as_redelivery(reply: Reply | None) -> Reply:
    """The answer of an earlier attempt, marked `X-Stickyroute-Reason: redelivery` (200 "ok"
    when there is no single earlier answer to give)."""
    if reply is None:
        return text_reply(200, "ok", reason="redelivery")
    headers = [h for h in reply.headers if h[0].lower() != REASON]
    return Reply(reply.status, headers + [(REASON, b"redelivery")], reply.body)
