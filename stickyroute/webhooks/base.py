"""What every platform's webhook registration gets and gives.

    target = Target(config, channel, env, client, api_base=None)
    target.secret("bot_token") -> str           a platform API key, `${VAR}` resolved now (CredentialMissing)
    target.call(method, url, what, **kwargs) -> httpx.Response     every HTTP error as a WebhookError
    target.scrub(text) -> str                   `text` without any credential of the channel

A registrar (`Registrar`) turns `set`, `info` and `delete` into the platform's API calls and
returns the lines the command prints. Credentials never reach those lines: every message that
could carry one (an error, a URL) goes through `scrub`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit

import httpx

from stickyroute.config.model import Channel, Config
from stickyroute.config.platform_api import resolve
from stickyroute.errors import ConfigProblem, WebhookError

__all__ = ["CredentialMissing", "Registrar", "SetOptions", "Target", "path_warning"]

TIMEOUT_S = 15.0
"""Each platform API call's timeout (seconds)."""


class CredentialMissing(Exception):
    """A credential the call needs is not configured or its `${VAR}` is unset: `problem` says which."""

    def __init__(self, problem: ConfigProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


@dataclass(frozen=True, slots=True)
class SetOptions:
    """`webhook set`'s options: None means the registrar's default."""

    url: str
    max_connections: int | None = None
    drop_pending_updates: bool = False
    allowed_updates: tuple[str, ...] | None = None
    fields: tuple[str, ...] | None = None


@dataclass(slots=True)
class Target:
    """One channel of one config, the environment its credentials come from, and the HTTP client."""

    config: Config
    channel: Channel
    env: Mapping[str, str]
    client: httpx.Client
    api_base: str | None = None
    """The platform API's base URL (`--api-base`); None: the registrar's default."""
    _secrets: list[str] = field(default_factory=list)

    def secret(self, key: str, *, needed_for: str = "") -> str:
        """The channel's platform API key `key` (`bot_token`, `app_id`, `access_token`), its
        `${VAR}`s resolved; CredentialMissing naming the key when unset."""
        written = getattr(self.channel.api, key)
        where = f"channels.{self.channel.name}.{key}"
        if written is None:
            raise CredentialMissing(ConfigProblem(self.config.path, where, f"is required{needed_for}"))
        value, missing = resolve(written, self.env)
        if value is None:
            raise CredentialMissing(ConfigProblem(self.config.path, where, "environment variable "
                                                  f"{', '.join(missing)} is not set"))
        self.remember(value)
        return value

    def remember(self, value: str) -> None:
        """Scrub `value` from every message from now on."""
        if value and value not in self._secrets:
            self._secrets.append(value)

    def scrub(self, text: str) -> str:
        for value in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(value, "***")
        return text

    def call(self, method: str, url: str, what: str, **kwargs: Any) -> httpx.Response:
        """One API call; a transport failure is a WebhookError naming `what` (never the URL's secrets)."""
        try:
            return self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            raise WebhookError(self.scrub(f"cannot reach {what}: {type(exc).__name__}: {exc}")) from None


class Registrar(Protocol):
    """One platform's webhook registration: each method returns the lines to print."""

    def set(self, target: Target, options: SetOptions) -> list[str]: ...

    def info(self, target: Target) -> list[str]: ...

    def delete(self, target: Target, drop_pending_updates: bool) -> list[str]: ...


def path_warning(channel: Channel, url: str) -> list[str]:
    """A warning line when `url`'s path is none of the channel's paths (the proxy would answer 404
    unless something in front rewrites the path); else nothing."""
    path = urlsplit(url).path or "/"
    if path in channel.paths:
        return []
    return [f"warning: the URL's path {path} is not a path of channel {channel.name} ({', '.join(channel.paths)}): "
            "stickyroute answers it 404 unless a proxy in front rewrites the path"]
