"""What the admin API needs of the running proxy (implemented by `stickyroute.server.operations`).

Every method raises `ApiError` (proxy.admin.errors) for what the caller got wrong: an unknown
channel, agent or conversation (404), a bad value (422), a conversation held too long (409).
Times are seconds (Unix time, floats); hashed keys are the decision log's `conversation`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from stickyroute.admin.sessions import Sessions
from stickyroute.admin.throttle import AuthThrottle
from stickyroute.config.listeners import AdminSettings
from stickyroute.observe.ring import Subscription

__all__ = ["AdminOps"]

Json = dict[str, Any]


class AdminOps(Protocol):
    """The operations behind each admin route (see the module docstring)."""

    sessions: Sessions
    """The browser sessions of this admin listener (proxy.admin.sessions)."""
    throttle: AuthThrottle
    """Failed authentications per client address (proxy.admin.throttle)."""

    def token(self) -> str | None:
        """The running config's `[admin] token` (None: the API is closed)."""
        ...

    def admin(self) -> AdminSettings:
        """The running config's `[admin]` settings (a reload applies at once)."""
        ...

    def now(self) -> float:
        """The service's clock (seconds, wall time): sessions and the throttle."""
        ...

    def readiness(self) -> str:
        """"ready", "not ready", "draining" or "degraded"."""
        ...

    async def metrics(self) -> tuple[bytes, str]:
        """The Prometheus exposition and its content type."""
        ...

    async def stats(self) -> Mapping[str, object]:
        """The /stats document."""
        ...

    def status(self) -> Json:
        """Readiness, the config (hash, path, load time), state backend, channels."""
        ...

    def series(self, minutes: float) -> Json:
        """Time buckets of the last `minutes` (requests, decisions, classifier calls, tokens)."""
        ...

    async def agents(self) -> list[Json]:
        """Every agent: hidden, channels reaching it, live conversations per channel, demo state."""
        ...

    async def conversations(self, channel: str | None, agent: str | None, limit: int,
                            held: bool | None = None) -> list[Json]:
        """Live routes, most recently active first (`held`: only those a human desk holds, or
        only those it does not; None: all)."""
        ...

    async def conversation(self, channel: str, chat: str, sender: str, thread: str | None) -> Json:
        """One conversation by platform ids (404 without a live route)."""
        ...

    async def pin(self, channel: str, chat: str, sender: str, thread: str | None, agent: str,
                  explicit: bool) -> Json:
        """Set the conversation's route to `agent` (logged with reason `admin`)."""
        ...

    async def reset(self, channel: str, chat: str, sender: str, thread: str | None) -> Json:
        """Drop the conversation's route: back to auto-routing (404 without a live route)."""
        ...

    def decisions(self, limit: int, channel: str | None) -> list[Json]:
        """The last decisions, newest first."""
        ...

    def decisions_after(self, last_id: int) -> list[Json]:
        """Kept decisions newer than `last_id`, oldest first."""
        ...

    def subscribe(self) -> Subscription:
        """A live reader of the decisions."""
        ...

    def explain(self, channel: str, text: str, current: str | None, candidate: str | None, counter: int) -> Json:
        """`stickyroute explain` against the running config."""
        ...

    async def reload(self) -> Json:
        """Re-read the config file (`ok` false with `errors` when refused)."""
        ...

    def demo_agents(self) -> list[Json]:
        """The in-process demo agents and whether each is paused (404 without demo agents)."""
        ...

    async def agent_hint(self, authorization: str | None, body: bytes) -> tuple[int, Json]:
        """`POST /v1/hints`: (status, JSON answer) for an agent's signal (proxy.hints.service)."""
        ...

    async def pause(self, name: str, paused: bool) -> Json:
        """Pause (stop its listener: the proxy answers 502) or resume a demo agent."""
        ...
