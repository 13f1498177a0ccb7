"""`stickyroute webhook`: register a channel's webhook with its platform, one registrar per platform.

    REGISTRARS[channel type value] -> Registrar       (protocol in `stickyroute.webhooks.base`)

    telegram.py   Telegram Bot API: setWebhook / getWebhookInfo / deleteWebhook
    meta.py       Meta Graph API app subscriptions: WhatsApp (Messenger, Instagram: the same call)
    manual.py     platforms registered in their own console: the values to paste there

Adding a platform is one line here (a registrar of an existing kind) or one module. Keys are
channel type values, so an entry may wait for its channel type (`messenger`, `instagram`,
`slack`, `discord`, `line`): until a channel of that type can be configured it is never looked up.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from stickyroute.webhooks.base import CredentialMissing, Registrar, SetOptions, Target
from stickyroute.webhooks.manual import ManualWebhook
from stickyroute.webhooks.meta import MetaWebhook
from stickyroute.webhooks.telegram import TelegramWebhook

__all__ = ["REGISTRARS", "CredentialMissing", "Registrar", "SetOptions", "Target", "registrar"]

_WABA_NEXT = ("subscribe the app to your WhatsApp Business Account (WhatsApp Manager, or POST "
              "/<WABA_ID>/subscribed_apps) so its numbers' messages reach this callback")
_PAGE_NEXT = "subscribe the app to your Page (POST /<PAGE_ID>/subscribed_apps with a Page access token)"

REGISTRARS: Mapping[str, Registrar] = MappingProxyType({
    "telegram": TelegramWebhook(),
    "whatsapp": MetaWebhook("whatsapp_business_account", ("messages",), _WABA_NEXT),
    "messenger": MetaWebhook("page", ("messages", "messaging_postbacks"), _PAGE_NEXT),
    "instagram": MetaWebhook("instagram", ("messages",), _PAGE_NEXT.replace("Page", "Instagram account's Page")),
    "slack": ManualWebhook("the Slack app's settings, Event Subscriptions", "Request URL"),
    "discord": ManualWebhook("the Discord Developer Portal, your application's General Information",
                             "Interactions Endpoint URL"),
    "line": ManualWebhook("the LINE Developers Console, the channel's Messaging API tab", "Webhook URL"),
})
"""Channel type value -> its registrar."""


def registrar(channel_type: str) -> Registrar:
    """The registrar of `channel_type`; a platform without an entry gets the generic console steps."""
    return REGISTRARS.get(channel_type) or ManualWebhook(f"the {channel_type} developer console", "webhook URL")
