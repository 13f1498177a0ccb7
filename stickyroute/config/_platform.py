"""A channel's platform keys: which secrets each platform takes, what they must look like, and the
per-channel `upstream` deadlines (private to `stickyroute.config`).

    platform       keys (the first is its authentication secret: `check` warns without it)
    telegram       secret_token, bot_username
    whatsapp       app_secret, verify_token
    messenger      app_secret, verify_token
    instagram      app_secret, verify_token
    slack          signing_secret
    discord        public_key
    line           channel_secret

Another platform's key is an error naming the platforms it belongs to. Telegram `secret_token`:
1-256 characters of A-Z a-z 0-9 _ - (Bot API, setWebhook); `bot_username` is stored without a
leading "@". Discord `public_key`: the application's Ed25519 public key, 64 hex digits (Developer
Portal, "General Information"). `thread_routes` exist where a platform has threads (Telegram
forum topics, Slack and Discord threads).

`[channels.<name>.upstream]` takes `connect_timeout_s`, `timeout_s` and `late_answer_s`, merged
over `[upstream]`, so a channel's deadline can sit under its platform's (Slack and Discord wait 3
seconds, LINE about 2).
"""

from __future__ import annotations

import dataclasses
import re

from stickyroute.config._reader import Table, quote
from stickyroute.config.model import ChannelType, UpstreamSettings

__all__ = ["PLATFORM_KEYS", "THREADED", "UPSTREAM_KEYS", "read_platform_keys", "read_upstream_override"]

PLATFORM_KEYS: dict[ChannelType, tuple[str, ...]] = {
    ChannelType.TELEGRAM: ("secret_token", "bot_username"),
    ChannelType.WHATSAPP: ("app_secret", "verify_token"),
    ChannelType.MESSENGER: ("app_secret", "verify_token"),
    ChannelType.INSTAGRAM: ("app_secret", "verify_token"),
    ChannelType.SLACK: ("signing_secret",),
    ChannelType.DISCORD: ("public_key",),
    ChannelType.LINE: ("channel_secret",),
}
"""Each platform's own keys; the first is the secret that authenticates its webhooks."""
ALL_KEYS: tuple[str, ...] = tuple(dict.fromkeys(k for keys in PLATFORM_KEYS.values() for k in keys))
THREADED = frozenset({ChannelType.TELEGRAM, ChannelType.SLACK, ChannelType.DISCORD})
"""Platforms whose chats have threads (`thread_routes`)."""
UPSTREAM_KEYS = ("connect_timeout_s", "timeout_s", "late_answer_s")
NAMES = {ChannelType.TELEGRAM: "Telegram", ChannelType.WHATSAPP: "WhatsApp", ChannelType.MESSENGER: "Messenger",
         ChannelType.INSTAGRAM: "Instagram", ChannelType.SLACK: "Slack", ChannelType.DISCORD: "Discord",
         ChannelType.LINE: "LINE"}
NO_SECRET = "no secret configured: anyone who knows the URL can post updates"
_SECRET_TOKEN = re.compile(r"[A-Za-z0-9_-]{1,256}")
_BOT_USERNAME = re.compile(r"[A-Za-z0-9_]+")
_PUBLIC_KEY = re.compile(r"[0-9A-Fa-f]{64}")


def _owners(key: str) -> str:
    names = [NAMES[kind] for kind, keys in PLATFORM_KEYS.items() if key in keys]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def read_platform_keys(table: Table, kind: ChannelType | None) -> dict[str, str | None]:
    """Every platform key of the channel table (None when absent); other platforms' keys and
    `thread_routes` on a platform without threads are errors; a missing secret is a warning."""
    if kind is not None:
        own = PLATFORM_KEYS[kind]
        for key in ALL_KEYS:
            if key not in own and table.has(key):
                table.error(key, f"not a {kind.value} setting ({_owners(key)} only)")
        if kind not in THREADED and table.has("thread_routes"):
            table.error("thread_routes", f"not a {kind.value} setting "
                        "(Telegram forum topics, Slack and Discord threads only)")
        if not table.has(own[0]):
            table.problems.warn(table.sub(own[0]), NO_SECRET)
    values = {key: table.string(key) for key in ALL_KEYS}
    secret_token, bot_username, public_key = values["secret_token"], values["bot_username"], values["public_key"]
    if kind is ChannelType.TELEGRAM and secret_token is not None and not _SECRET_TOKEN.fullmatch(secret_token):
        table.error("secret_token", "expected 1-256 characters of A-Z, a-z, 0-9, _ and - "
                    "(Telegram setWebhook secret_token)")
    if kind is ChannelType.TELEGRAM and bot_username is not None:
        values["bot_username"] = bot_username = bot_username.removeprefix("@")
        if not _BOT_USERNAME.fullmatch(bot_username):
            table.error("bot_username", f"expected letters, digits and _, got {quote(bot_username)}")
    if kind is ChannelType.DISCORD and public_key is not None:
        public_key = public_key.strip()
        if not _PUBLIC_KEY.fullmatch(public_key):
            table.error("public_key", "expected the application's Ed25519 public key as 64 hex digits "
                        "(Discord Developer Portal, General Information)")
            public_key = None
        values["public_key"] = public_key.lower() if public_key else None
    return values


def read_upstream_override(table: Table | None, base: UpstreamSettings) -> UpstreamSettings | None:
    """`[channels.<name>.upstream]` merged over `base` (`[upstream]`); None when absent."""
    if table is None:
        return None
    table.reject_unknown(UPSTREAM_KEYS)
    connect = table.number("connect_timeout_s", positive=True)
    timeout = table.number("timeout_s", positive=True)
    late = table.number("late_answer_s")
    return dataclasses.replace(
        base,
        connect_timeout_s=base.connect_timeout_s if connect is None else connect,
        timeout_s=base.timeout_s if timeout is None else timeout,
        late_answer_s=base.late_answer_s if late is None else late,
    )
