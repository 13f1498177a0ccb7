"""The project's error tree: one base class, foreign exceptions translated at the boundary.

    StickyrouteError
    ├── ConfigError              a config file is invalid (carries every problem found)
    ├── UnparsedUpdate           a webhook body we cannot read as a known platform shape
    ├── WebhookError             `stickyroute webhook`: the platform's API refused or was not reached
    ├── LeaseTimeout             (proxy.state) a conversation stayed held past the caller's wait
    ├── StateUnavailable         (proxy.state) the shared state backend (Redis) failed or was too slow
    │   └── SlotUnavailable          (proxy.state) one Redis Cluster node failed: only its slots' keys
    ├── UpstreamError            the forwarding leg failed (`kind` names it in the metrics)
    │   ├── UpstreamConnectError     the agent refused or could not be reached (-> 502)
    │   ├── UpstreamPoolExhausted    every connection of the agent's pool stayed busy (-> 503)
    │   ├── PlatformGone             the platform hung up: the request to the agent was cancelled
    │   ├── UpstreamTimeout          the agent did not answer in time (-> 504)
    │   └── UpstreamTooLarge         the agent's reply is over the buffer cap (-> 502)
    └── ClassifierError          the intent classifier failed
        ├── ClassifierTimeout        no answer within timeout_s
        ├── ClassifierRateLimited    the provider said 429
        ├── ClassifierAuthError      the provider refused the API key (401/403)
        ├── ClassifierServerError    the provider said 5xx, or the connection failed
        └── ClassifierUnparseable    the provider answered something we cannot use
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stickyroute.reply import Reply


class StickyrouteError(Exception):
    """Root of every error stickyroute raises on purpose."""


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One problem in a config file.

    `file` is the path as given, `key` the dotted key (`channels.telegram.default_agent`),
    `message` what is wrong. `warning` problems do not stop the proxy from starting.
    """

    file: str
    key: str
    message: str
    warning: bool = False

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.message}"


class ConfigError(StickyrouteError):
    """A config file is invalid; `problems` lists every error found (never only the first)."""

    def __init__(self, problems: list[ConfigProblem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class UnparsedUpdate(StickyrouteError):
    """A body on a channel path that is not valid JSON or not a known shape of that platform."""


class WebhookError(StickyrouteError):
    """`stickyroute webhook`: the platform's API refused the call or could not be reached (the
    message says which, never with a credential in it)."""


class UpstreamError(StickyrouteError):
    """The forwarding leg to an agent failed; `kind` is its label in
    `stickyroute_upstream_failures_total` (refused, timeout, pool_exhausted, too_large, error)."""

    status_code = 502
    kind = "error"


class UpstreamConnectError(UpstreamError):
    """The agent refused the connection or could not be reached (answered as 502)."""

    status_code = 502
    kind = "refused"


class UpstreamPoolExhausted(UpstreamError):
    """Every connection of the agent's pool (`max_connections`) stayed busy for `connect_timeout_s`:
    the agent is up but saturated, not unreachable (answered as 503)."""

    status_code = 503
    kind = "pool_exhausted"


class PlatformGone(UpstreamError):
    """The platform disconnected before the agent answered: the request to the agent was cancelled
    (its connection freed) and the delivery released; the answer is never sent."""

    status_code = 502
    kind = "platform_gone"


class UpstreamTimeout(UpstreamError):
    """The agent did not answer within `upstream.timeout_s` (answered as 504).

    `late` is the exchange still running when late answers are on (`upstream.late_answer_s`):
    it resolves to the agent's late `Reply` or raises `UpstreamError`.
    """

    status_code = 504
    kind = "timeout"

    def __init__(self, message: str, late: asyncio.Future[Reply] | None = None) -> None:
        super().__init__(message)
        self.late = late

class UpstreamTooLarge(UpstreamError):
    """The agent's reply is larger than the leg buffers (answered as 502)."""

    status_code = 502
    kind = "too_large"


class ClassifierError(StickyrouteError):
    """The intent classifier failed; the engine then stays on the current route."""

    kind = "error"


class ClassifierTimeout(ClassifierError):
    """No answer within `classifier.timeout_s`."""

    kind = "timeout"


class ClassifierRateLimited(ClassifierError):
    """The provider answered 429."""

    kind = "rate_limit"


class ClassifierAuthError(ClassifierError):
    """The provider refused the API key or its permissions (401, 403): a configuration problem,
    not an outage; retrying will not help until the key is fixed."""

    kind = "auth"


class ClassifierServerError(ClassifierError):
    """The provider answered 5xx or another error status, or the connection failed."""

    kind = "server_error"


class ClassifierUnparseable(ClassifierError):
    """The provider answered with something that is not a completion we can read."""

    kind = "unparseable"
