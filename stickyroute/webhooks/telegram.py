"""Telegram's webhook through the Bot API: `setWebhook`, `getWebhookInfo`, `deleteWebhook`.

Source: Telegram Bot API, "setWebhook", "getWebhookInfo", "deleteWebhook", "WebhookInfo".

    POST {api_base}/bot<bot_token>/setWebhook   {"url", "secret_token", "allowed_updates", "max_connections",
                                                  "drop_pending_updates"}
    POST {api_base}/bot<bot_token>/getWebhookInfo
    POST {api_base}/bot<bot_token>/deleteWebhook {"drop_pending_updates"}

Every answer is `{"ok": true, "result": ...}` or `{"ok": false, "error_code", "description"}`.

- `secret_token`: the channel's own (`channels.<name>.secret_token`), which the proxy checks on
  every update; without one the webhook is set anyway, with a warning.
- `allowed_updates`: the update kinds stickyroute routes (every field its Telegram adapter reads,
  `stickyroute.channels.telegram.KNOWN_KINDS`), so `chat_member` and reactions, which Telegram
  leaves out by default, reach the agents too; `--allowed-updates` narrows it.
- `max_connections`: Telegram's default (40), lowered to the smallest agent pool of the channel
  (`agents.<name>.max_connections`, else `upstream.max_connections`), so Telegram never opens
  more parallel requests than one agent could take; `--max-connections` sets it (1-100).
"""

from __future__ import annotations

import datetime
from typing import Any

from stickyroute.channels.telegram import KNOWN_KINDS
from stickyroute.errors import WebhookError
from stickyroute.webhooks.base import SetOptions, Target, path_warning

__all__ = ["DEFAULT_API", "TelegramWebhook", "allowed_updates", "max_connections"]

DEFAULT_API = "https://api.telegram.org"
TELEGRAM_DEFAULT_CONNECTIONS = 40
MAX_CONNECTIONS = 100


def allowed_updates() -> tuple[str, ...]:
    """The update kinds stickyroute routes on a Telegram channel."""
    return KNOWN_KINDS


def max_connections(target: Target) -> int:
    """Telegram's default, at most the smallest pool among the channel's reachable agents."""
    config, channel = target.config, target.channel
    pools = [agent.max_connections or config.upstream.max_connections for agent in config.agents.values()
             if channel.allows(agent.name)]
    return max(1, min([TELEGRAM_DEFAULT_CONNECTIONS, *pools]))


class TelegramWebhook:
    """The Bot API webhook of one Telegram channel (see the module docstring)."""

    def _call(self, target: Target, method: str, payload: dict[str, Any]) -> Any:
        token = target.secret("bot_token", needed_for=" to call the Telegram Bot API (the token from @BotFather)")
        base = (target.api_base or DEFAULT_API).rstrip("/")
        response = target.call("POST", f"{base}/bot{token}/{method}", f"the Telegram Bot API at {base}", json=payload)
        try:
            body = response.json()
        except ValueError:
            raise WebhookError(f"the Telegram Bot API answered {method} with {response.status_code} "
                               "and no JSON") from None
        if not isinstance(body, dict) or not body.get("ok"):
            code = body.get("error_code", response.status_code) if isinstance(body, dict) else response.status_code
            description = body.get("description", "") if isinstance(body, dict) else ""
            hint = (f" (check channels.{target.channel.name}.bot_token: Telegram does not know this token)"
                    if code in (401, 404) else "")
            raise WebhookError(target.scrub(f"Telegram refused {method}: {code} {description}{hint}".rstrip()))
        return body.get("result")

    def set(self, target: Target, options: SetOptions) -> list[str]:
        channel = target.channel
        kinds = options.allowed_updates or allowed_updates()
        connections = options.max_connections or max_connections(target)
        if not 1 <= connections <= MAX_CONNECTIONS:
            raise WebhookError(f"--max-connections must be between 1 and {MAX_CONNECTIONS}, got {connections}")
        payload: dict[str, Any] = {"url": options.url, "allowed_updates": list(kinds), "max_connections": connections,
                                   "drop_pending_updates": options.drop_pending_updates}
        lines = path_warning(channel, options.url)
        if channel.secret_token:
            target.remember(channel.secret_token)
            payload["secret_token"] = channel.secret_token
            secret = f"channels.{channel.name}.secret_token (checked on every update)"
        else:
            secret = "none"
            lines.append(f"warning: channels.{channel.name}.secret_token is not set: anyone who knows the URL can "
                         "post updates to it")
        self._call(target, "setWebhook", payload)
        return [f"channel {channel.name}: Telegram webhook set to {options.url}",
                f"  secret_token: {secret}",
                f"  allowed_updates: {', '.join(kinds)}",
                f"  max_connections: {connections}",
                f"  pending updates: {'dropped' if options.drop_pending_updates else 'kept'}",
                *lines,
                f"next: stickyroute webhook info {channel.name} (pending updates, the last delivery error)"]

    def info(self, target: Target) -> list[str]:
        channel = target.channel
        info = self._call(target, "getWebhookInfo", {})
        if not isinstance(info, dict):
            raise WebhookError("the Telegram Bot API answered getWebhookInfo without a WebhookInfo")
        url = str(info.get("url") or "")
        if not url:
            return [f"channel {channel.name}: no webhook is set (Telegram keeps the updates for getUpdates)",
                    f"  pending updates: {info.get('pending_update_count', 0)}"]
        lines = [f"channel {channel.name}: Telegram webhook {url}",
                 f"  pending updates: {info.get('pending_update_count', 0)}",
                 f"  last error: {_error(info.get('last_error_date'), info.get('last_error_message'))}"]
        if info.get("last_synchronization_error_date"):
            lines.append(f"  last synchronization error: {_when(info['last_synchronization_error_date'])}")
        lines += [f"  max_connections: {info.get('max_connections', TELEGRAM_DEFAULT_CONNECTIONS)}",
                  f"  allowed_updates: {', '.join(info.get('allowed_updates') or ['(Telegram default)'])}"]
        if info.get("ip_address"):
            lines.append(f"  ip address: {info['ip_address']}")
        if info.get("has_custom_certificate"):
            lines.append("  custom certificate: yes")
        return lines + path_warning(channel, url)

    def delete(self, target: Target, drop_pending_updates: bool) -> list[str]:
        self._call(target, "deleteWebhook", {"drop_pending_updates": drop_pending_updates})
        pending = "dropped" if drop_pending_updates else "kept for getUpdates"
        return [f"channel {target.channel.name}: Telegram webhook deleted (pending updates {pending})"]


def _when(epoch: object) -> str:
    """A Unix time as `2026-12-01 08:00:43 UTC`."""
    if not isinstance(epoch, (int, float)):
        return str(epoch)
    return datetime.datetime.fromtimestamp(epoch, tz=datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _error(date: object, message: object) -> str:
    if not date and not message:
        return "none"
    return f"{_when(date)}: {message or '(no message)'}"
