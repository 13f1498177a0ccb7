"""Values as Redis stores them: compact, exact, bytes in and bytes out.

    route   hash fields a (agent) c (chosen_at) l (last_active) x ("1" explicit, "0" not; a
            human desk's hold follows after ";" as its seconds, "1;86400.0") d (candidate,
            "" for none) n (counter) w (the reason that chose the agent, "" unknown) h (a pending
            agent hint, "" none) g (the hint's agent, "" none);
            floats as `repr` strings, so they round-trip exactly (Lua's tonumber parses the same
            double for its comparisons); no route: nine empty strings (an agent's `done`)
    recent  a JSON array of strings (ASCII-escaped: any Python str, lone surrogates included)
    reply   one JSON line `[status, [[name, value], ...]]` (header bytes as latin-1, lossless),
            a newline, then the body's raw bytes: no base64, exact bytes back
    memo    "agent\\nreason"
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from stickyroute.core.delivery import DecisionMemo
from stickyroute.core.route import Route
from stickyroute.reply import Reply

ROUTE_FIELDS = ("a", "c", "l", "x", "d", "n", "w", "h", "g")

_COMPACT = json.JSONEncoder(separators=(",", ":"))
"""`json.dumps(..., separators=(",", ":"))` without building an encoder per call."""


def route_args(route: Route | None) -> list[str]:
    """The route as the nine values of `ROUTE_FIELDS`, in order (None: nine empty strings, which
    `route_from` reads as no route)."""
    if route is None:
        return [""] * len(ROUTE_FIELDS)
    pin = "1" if route.explicit else "0"
    if route.hold_s is not None:
        pin += f";{route.hold_s!r}"
    return [route.agent, repr(route.chosen_at), repr(route.last_active), pin,
            route.candidate or "", str(route.counter), route.reason or "", route.hint or "", route.hint_agent or ""]


def route_from(values: Sequence[bytes | None]) -> Route | None:
    """The route from the nine values of `ROUTE_FIELDS` (None when the agent is absent)."""
    agent, chosen_at, last_active, explicit, candidate, counter, reason, hint, hint_agent = values
    if not agent or chosen_at is None or last_active is None:
        return None
    pin, _sep, hold = (explicit or b"").partition(b";")
    return Route(agent.decode(), float(chosen_at), float(last_active), pin == b"1",
                 candidate.decode() if candidate else None, int(counter or 0), reason.decode() if reason else None,
                 hint.decode() if hint else None, hint_agent.decode() if hint_agent else None,
                 float(hold) if hold else None)


def recent_blob(texts: Sequence[str]) -> bytes:
    """Recent texts as stored."""
    return json.dumps(list(texts)).encode()


def recent_from(blob: bytes | None) -> tuple[str, ...]:
    """Recent texts from their stored form (empty when absent)."""
    return tuple(json.loads(blob)) if blob else ()


def reply_blob(reply: Reply) -> bytes:
    """A reply as one binary value (see the module docstring)."""
    head = _COMPACT.encode([reply.status, [[n.decode("latin-1"), v.decode("latin-1")] for n, v in reply.headers]])
    return head.encode() + b"\n" + reply.body


def reply_from(blob: bytes) -> Reply:
    """The reply stored by `reply_blob`."""
    head, _, body = blob.partition(b"\n")
    status, headers = json.loads(head)
    return Reply(int(status), [(n.encode("latin-1"), v.encode("latin-1")) for n, v in headers], body)


def memo_blob(memo: DecisionMemo) -> str:
    return f"{memo.agent}\n{memo.reason}"


def memo_from(blob: bytes | None) -> DecisionMemo | None:
    if not blob:
        return None
    agent, _, reason = blob.decode().partition("\n")
    return DecisionMemo(agent, reason)
