"""`stickyroute webhook`: register a channel's webhook with its platform, one registrar per platform.

    REGISTRARS[channel type value] -> Registrar       (protocol in `stickyroute.webhooks.base`)

    telegram.py   Telegram Bot API: setWebhook / getWebhookInfo / deleteWebhook
    meta.py       Meta Graph API app subscriptions: WhatsApp (Messenger, Instagram: the same call)
    manual.py     platforms registered in their own console: the values to paste there

Adding a platform is one line here (a registrar of an existing kind) or one module; keys are
channel type values.
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
    "slack": ManualWebhook("the Slack app's settings (api.slack.com/apps): Event Subscriptions, and Interactivity "
                           "& Shortcuts and Slash Commands if your agents use them", "Request URL",
                           (("Signing Secret (Basic Information)", "signing_secret"),)),
    "discord": ManualWebhook("the Discord Developer Portal, your application's General Information",
                             "Interactions Endpoint URL", (("Public Key", "public_key"),)),
    "line": ManualWebhook("the LINE Developers Console, the channel's Messaging API tab (then turn Use webhook on "
                          "and press Verify)", "Webhook URL", (("Channel secret (Basic settings)", "channel_secret"),)),
})
"""Channel type value -> its registrar."""


def registrar(channel_type: str) -> Registrar:
    """The registrar of `channel_type`; a platform without an entry gets the generic console steps."""
    return REGISTRARS.get(channel_type) or ManualWebhook(f"the {channel_type} developer console", "webhook URL")
