"""A channel's platform API credentials: what `stickyroute webhook` needs to register the webhook
with the platform (the proxy itself never calls a platform and never reads them).

    [channels.telegram]
    bot_token = "${TELEGRAM_BOT_TOKEN}"     # Telegram Bot API token (setWebhook, getWebhookInfo, deleteWebhook)

    [channels.whatsapp]
    app_id = "${META_APP_ID}"               # the Meta app whose webhook subscription is set
    access_token = "${META_APP_TOKEN}"      # an app access token; default "<app_id>|<app_secret>"

A value is kept as written: its `${VAR}`s are resolved when the command uses it (`resolve`), so an
unset variable here never stops `check` or `serve`. Never printed: kept out of `repr`, and the
command masks them in what it prints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["API_KEYS", "API_KEYS_OF", "PlatformApi", "api_key_problem", "resolve"]

API_KEYS: tuple[str, ...] = ("bot_token", "app_id", "access_token")
"""The channel keys read into `PlatformApi` (not substituted at load time)."""
API_KEYS_OF: dict[str, tuple[str, ...]] = {
    "telegram": ("bot_token",),
    "whatsapp": ("app_id", "access_token"),
    "messenger": ("app_id", "access_token"),
    "instagram": ("app_id", "access_token"),
}
"""Channel type value -> the API keys its channels take (the others have no API stickyroute calls)."""
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SHAPES = {"bot_token": (re.compile(r"\d+:[A-Za-z0-9_-]+"), "<digits>:<letters, digits, _ and ->"),
           "app_id": (re.compile(r"\d+"), "digits")}


@dataclass(frozen=True, slots=True)
class PlatformApi:
    """The credentials as written in the channel table (None: not set)."""

    bot_token: str | None = field(default=None, repr=False)
    app_id: str | None = field(default=None, repr=False)
    access_token: str | None = field(default=None, repr=False)


def is_api_key(dotted: str) -> bool:
    """True for `channels.<name>.<one of API_KEYS>`: a value whose `${VAR}`s wait for `resolve`."""
    parts = dotted.split(".")
    return len(parts) == 3 and parts[0] == "channels" and parts[2] in API_KEYS


def api_key_problem(key: str, value: str) -> str | None:
    """What is wrong with a literal (no `${VAR}`) bot token or app id, or None."""
    shape = _SHAPES.get(key)
    if shape is None or "${" in value or shape[0].fullmatch(value):
        return None
    return f"expected {shape[1]} (or ${{VAR}})"


def resolve(text: str, env: Mapping[str, str]) -> tuple[str | None, list[str]]:
    """(`text` with its `${VAR}`s replaced from `env`, []) or (None, the unset variables' names)."""
    missing = list(dict.fromkeys(name for name in _ENV_REF.findall(text) if name not in env))
    if missing:
        return None, missing
    return _ENV_REF.sub(lambda m: env[m.group(1)], text), []
