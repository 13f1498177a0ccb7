"""The admin listener: probes, metrics, stats, the operator's API under /v1/, and the dashboard.

    app.py            create_admin_app(ops): the Starlette app from the route table, behind auth
    auth.py           BearerAuth: the `[admin] token` (header or session cookie); open probes
    body.py           BodyCap: no body over `[admin] max_body_bytes` is read (413)
    throttle.py       AuthThrottle: failed authentications per client address (429)
    sessions.py       Sessions: the browser sessions behind the cookie (random ids, bounded)
    ports.py          AdminOps: what the routes need of the running proxy (stickyroute/server/operations.py)
    endpoint.py       Endpoint, Param: one route as data (served and documented from it)
    operations.py     probes, stats, status, series, agents, explain, reload, demo agents, session
    conversations.py  list, look up, pin, reset conversations
    decisions.py      the recent decisions, and their server-sent events stream
    dashboard.py      GET /: the dashboard page and its files (static/: HTML, JS, CSS, shipped inside)
    openapi.py        the OpenAPI document from the table
    params.py         query and body reading with 422s that say what is wrong
    errors.py         ApiError and the JSON error shape
"""

from stickyroute.admin.app import ENDPOINTS, create_admin_app
from stickyroute.admin.errors import ApiError
from stickyroute.admin.ports import AdminOps

__all__ = ["ENDPOINTS", "AdminOps", "ApiError", "create_admin_app"]
