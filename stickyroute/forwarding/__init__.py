"""Forwarding: the request path from the ASGI shell to the agent and back.

    app.py        the webhook listener's ASGI shell (raw endpoints mounted in Starlette)
    body.py       capped body reads (inbound bodies, agent replies)
    inbound.py    Inbound: one request as read
    dispatch.py   Dispatcher: the one async driver (adapter, deliveries, router, leg)
    leg.py        Leg: the forwarding leg (URL, headers, errors; exchange.py, pools.py, target.py)
    headers.py    hop-by-hop stripping, X-Forwarded-*, our markers
    replies.py    answers the proxy composes itself
    recording.py  `serve --record FILE`: the recording file format and its writer (replay/ reads it)
    lanes.py      run_lanes: a request's conversations decided concurrently, each in body order
"""

from stickyroute.forwarding.app import create_app
from stickyroute.forwarding.dispatch import Dispatcher
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.leg import Forwarding, Leg

__all__ = ["Dispatcher", "Forwarding", "Inbound", "Leg", "create_app"]
