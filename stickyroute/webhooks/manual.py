"""Platforms whose webhook is registered in their own console: `stickyroute webhook set` prints
the exact values to paste there (the URL, and which config keys hold the secrets to copy; never
the secrets themselves); `info` and `delete` say where to look."""

from __future__ import annotations

from stickyroute.webhooks.base import SetOptions, Target, path_warning

__all__ = ["ManualWebhook"]


class ManualWebhook:
    """A platform without a webhook API stickyroute calls: what to paste and where."""

    def __init__(self, console: str, url_field: str, secrets: tuple[tuple[str, str], ...] = ()) -> None:
        self.console = console
        """Where in the platform's console the webhook is set."""
        self.url_field = url_field
        """The console field the URL goes into."""
        self.secrets = secrets
        """(console value, channel key holding it) pairs to copy between console and config."""

    def set(self, target: Target, options: SetOptions) -> list[str]:
        channel = target.channel
        lines = [f"channel {channel.name}: {channel.type.value} has no webhook API stickyroute calls; "
                 f"in {self.console}:", f"  {self.url_field}: {options.url}"]
        lines += [f"  {label}: the same value as channels.{channel.name}.{key} in {target.config.path}"
                  for label, key in self.secrets]
        return lines + path_warning(channel, options.url)

    def info(self, target: Target) -> list[str]:
        return [f"channel {target.channel.name}: see {self.console} ({self.url_field}); stickyroute serves it on "
                f"{', '.join(target.channel.paths)}"]

    def delete(self, target: Target, drop_pending_updates: bool) -> list[str]:
        return [f"channel {target.channel.name}: remove the {self.url_field} in {self.console}"]
