"""Answers the proxy composes itself: errors, redeliveries, batch summaries (text/plain)."""

from __future__ import annotations

from stickyroute.reply import Reply
from stickyroute.state.base import Claim

TEXT = b"text/plain; charset=utf-8"
REASON = b"x-stickyroute-reason"


def text_reply(status: int, text: str, reason: str | None = None) -> Reply:
    """A plain-text answer from the proxy itself; `reason` adds `X-Stickyroute-Reason`."""
    headers = [(b"content-type", TEXT)]
    if reason is not None:
        headers.append((REASON, reason.encode()))
    return Reply(status, headers, text.encode())


RETRY_AFTER_S = 1
"""`Retry-After` of a delivery the shared state did not confirm (seconds)."""


def unconfirmed() -> Reply:
    """503 + `Retry-After` for a delivery the shared state did not confirm (reason
    `state_unavailable`): the platform retries it; it was not forwarded."""
    reply = text_reply(503, "state unavailable: this update was not forwarded, retry later", "state_unavailable")
    return Reply(reply.status, [*reply.headers, (b"retry-after", str(RETRY_AFTER_S).encode())], reply.body)


def as_redelivery(reply: Reply | None) -> Reply:
    """The answer of an earlier attempt, marked `X-Stickyroute-Reason: redelivery` (200 "ok"
    when there is no single earlier answer to give)."""
    if reply is None:
        return text_reply(200, "ok", reason="redelivery")
    headers = [h for h in reply.headers if h[0].lower() != REASON]
    return Reply(reply.status, headers + [(REASON, b"redelivery")], reply.body)


def answer_of(claim: Claim) -> Reply:
    """The answer an earlier attempt gave (DONE, FAILED), or 504 while it is still in flight."""
    if claim.reply is not None:
        return claim.reply
    return text_reply(504, "an earlier attempt of this update is still in flight")


def summary(replies: list[Reply]) -> Reply:
    """The platform's answer for a split batch: 200 only when every part got a 2xx, else 502."""
    if all(r.ok for r in replies):
        return text_reply(200, "ok")
    failed = [r.status for r in replies if not r.ok]
    return text_reply(502, f"{len(failed)} of {len(replies)} parts failed: {failed}")


def redelivered(answers: list[Reply]) -> Reply:
    """Every item of a request was answered by an earlier attempt: that answer again (marked
    redelivery), the batch summary when the earlier answers differ and one failed, else 200 ok."""
    distinct = list({(r.status, tuple(r.headers), r.body): r for r in answers}.values())
    reply = distinct[0] if len(distinct) == 1 else None
    if reply is None and not all(r.ok for r in distinct):
        reply = summary(distinct)
    return as_redelivery(reply)
