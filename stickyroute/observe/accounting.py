"""Every request accounted for, in one place: the decision line, the counters, the recent
decisions ring and the time buckets, fed once per answered request by the dispatcher (and by the
webhook app for what never reaches it: 413, a client gone mid-body, unknown paths).

    accounting.request(channel, now, entries, status, method)   once per request the dispatcher answered
    accounting.upstream(agent, seconds, kind)                    once per forward (kind None: a reply came)
    accounting.rejected(channel, status, reason)                 413 / 400 / 404 answered by the app
    accounting.admin(channel, conversation, agent, action, now, explicit)   an operator's change
    accounting.released(channel, digest, agent, then, now)       an agent's accepted `done` (issue #22)

An entry is (envelope or None, decision, status): each routed item of the body with the status of
the reply its part got; a request decided as a whole (handshake, 401, non-POST, unparsed,
redelivery) is one entry without an envelope. Each entry is one JSON line on the
`stickyroute.decision` logger (INFO):

    {"channel", "conversation" (12 hex of the key's SHA-256, null without a sender), "kind",
     "agent" (null: answered by the proxy), "reason", "status", "switched" (only when true),
     "scores" (when scored), "text" (only with log_text; its first KEPT_TEXT_CHARS characters),
     "state" ("memory" only when served from per-process memory during a Redis outage)}

and the same dict (plus "time" and "id") goes to the ring. In the JSON log format the line's keys
are the record's fields and its message is "decision" (`stickyroute.server.logs`). The request is counted once in
`stickyroute_requests_total` with the agent and reason of its first entry ("(several)" when its
items went to different agents); every entry once in `stickyroute_decisions_total`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

from prometheus_client import CollectorRegistry

from stickyroute.classifier.base import Outcome
from stickyroute.config.model import Channel
from stickyroute.core.route import ConversationKey
from stickyroute.observe.metrics import Metrics, status_class
from stickyroute.observe.ring import DecisionRing
from stickyroute.observe.series import Series
from stickyroute.routing.decision import RELEASED
from stickyroute.routing.engine import Decision
from stickyroute.routing.envelope import KEPT_TEXT_CHARS, Envelope

__all__ = ["Accounting", "Entry", "conversation_of"]

log = logging.getLogger("stickyroute.decision")
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode
"""One encoder for every decision line (`json.dumps` with options builds a new one per call)."""
_SKIPS = (Outcome.BUDGET, Outcome.OPEN, Outcome.DEADLINE)
SEVERAL = "(several)"

Entry = tuple[Envelope | None, Decision, int]
"""(the routed item, or None for the request as a whole; its decision; the status its reply had)."""


def conversation_of(channel: str, envelope: Envelope) -> str | None:
    """The hashed conversation key of `envelope` as logged (None without a human sender)."""
    if not envelope.has_sender:
        return None
    return ConversationKey(channel, envelope.chat_id, envelope.thread_id, envelope.sender_id or "").hashed()


class Accounting:
    """The metrics, ring and buckets of one process (see the module docstring); `clock()` gives
    `now` (seconds) for what the app answers without the dispatcher."""

    def __init__(self, registry: CollectorRegistry, clock: Callable[[], float]) -> None:
        self.metrics = Metrics(registry)
        self.ring = DecisionRing()
        self.series = Series()
        self._clock = clock

    def request(self, channel: Channel, now: float, entries: Sequence[Entry], status: int,
                method: str = "POST", state: str | None = None) -> None:
        """Account one request of `channel` answered with `status` (see the module docstring);
        `state` "memory": its deliveries were claimed in per-process memory (a Redis outage)."""
        name = channel.name
        status_name = status_class(status)
        bucket = self.series.bucket(now)
        bucket.requests[status_name] = bucket.requests.get(status_name, 0) + 1
        if not entries:
            self.metrics.requests(name, "", "empty", status_name).inc()
            return
        first = entries[0][1]
        agent = first.agent
        if len(entries) > 1 and any(d.agent != agent for _e, d, _s in entries):
            agent = SEVERAL
        self.metrics.requests(name, agent, first.reason, status_name).inc()
        if first.reason == "redelivery":
            self.metrics.hits(name).inc()
        log_text = channel.routing.log_text
        info = log.isEnabledFor(logging.INFO)
        for envelope, decision, item_status in entries:
            reason = decision.reason
            self.metrics.decisions(name, reason).inc()
            bucket.decisions[reason] = bucket.decisions.get(reason, 0) + 1
            if decision.switched:
                self.metrics.switches(name, reason).inc()
            classification = decision.classification
            if classification is not None and classification.outcome not in _SKIPS:
                bucket.classifier_calls += 1
                bucket.tokens += classification.prompt_tokens + classification.completion_tokens
            line = _line(name, envelope, decision, item_status, log_text, method)
            if state is not None:
                line["state"] = state
            if info:
                log.info("%s", _ENCODE(line), extra={"event": "decision", "fields": line})
            line["time"] = now
            self.ring.add(line)

    def upstream(self, agent: str, seconds: float, kind: str | None) -> None:
        """One forward to `agent` that took `seconds`; `kind` names its failure (None: a reply)."""
        self.metrics.latency(agent).observe(seconds)
        if kind is not None:
            self.metrics.failures(agent, kind).inc()

    def rejected(self, channel: Channel | None, status: int, reason: str) -> None:
        """A request the webhook app answered itself (413, 400, 404: `reason`); on a channel
        path it gets a decision line, an unknown path is only counted (channel "")."""
        status_name = status_class(status)
        now = self._clock()
        bucket = self.series.bucket(now)
        bucket.requests[status_name] = bucket.requests.get(status_name, 0) + 1
        self.metrics.requests(channel.name if channel is not None else "", "", reason, status_name).inc()
        if channel is None:
            return
        self.metrics.decisions(channel.name, reason).inc()
        bucket.decisions[reason] = bucket.decisions.get(reason, 0) + 1
        line: dict[str, Any] = {"channel": channel.name, "agent": None, "reason": reason, "status": status}
        log.info("%s", _ENCODE(line), extra={"event": "decision", "fields": line})
        line["time"] = now
        self.ring.add(line)

    def admin(self, channel: str, conversation: str, agent: str | None, action: str, now: float,
              explicit: bool | None = None) -> dict[str, Any]:
        """An operator's change of one conversation (`action` "pin" or "reset"): logged like a
        decision with reason `admin`, counted, kept in the ring. Returns the line's dict."""
        self.metrics.decisions(channel, "admin").inc()
        bucket = self.series.bucket(now)
        bucket.decisions["admin"] = bucket.decisions.get("admin", 0) + 1
        line: dict[str, Any] = {"channel": channel, "conversation": conversation, "agent": agent,
                                "reason": "admin", "action": action}
        if explicit is not None:
            line["explicit"] = explicit
        log.info("%s", _ENCODE(line), extra={"event": "decision", "fields": line})
        line["time"] = now
        self.ring.add(line)
        return line


    def released(self, channel: str, digest: str, agent: str, then: str | None, now: float) -> dict[str, Any]:
        """An agent's `done` released the conversation of key `digest` (32 hex; logged as its
        first 12, like every line): logged like a decision with reason `released` (`then`: the
        agent it was handed to, when named), counted, kept in the ring. Returns the line's dict."""
        self.metrics.decisions(channel, RELEASED).inc()
        bucket = self.series.bucket(now)
        bucket.decisions[RELEASED] = bucket.decisions.get(RELEASED, 0) + 1
        line: dict[str, Any] = {"channel": channel, "conversation": digest[:12], "agent": agent, "reason": RELEASED}
        if then is not None:
            line["then"] = then
        log.info("%s", _ENCODE(line))
        line["time"] = now
        self.ring.add(line)
        return line


def _line(channel: str, envelope: Envelope | None, decision: Decision, status: int, log_text: bool,
          method: str) -> dict[str, Any]:
    line: dict[str, Any] = {"channel": channel}
    if envelope is not None:
        line["conversation"] = conversation_of(channel, envelope)
        line["kind"] = envelope.kind.value
    elif method != "POST":
        line["method"] = method
    line["agent"] = decision.agent or None
    line["reason"] = decision.reason
    line["status"] = status
    if decision.switched:
        line["switched"] = True
    if decision.scores:
        line["scores"] = dict(decision.scores)
    if log_text and envelope is not None and envelope.text:
        line["text"] = envelope.text[:KEPT_TEXT_CHARS]
    return line
