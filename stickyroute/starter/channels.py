"""The channel templates of `stickyroute init`: one entry per platform, easy to extend.

    CHANNEL_TEMPLATES[channel type value] -> ChannelTemplate

A template is the body of `[channels.<type>]` (secrets as `${ENV}` references), the environment
variables it reads with what to put in them, and the webhook registration step. Adding a
platform is one entry; `stickyroute init --channel <type>` refuses a type without one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["CHANNEL_TEMPLATES", "ChannelTemplate"]


@dataclass(frozen=True, slots=True)
class ChannelTemplate:
    """One platform's starter channel."""

    body: str
    """The TOML lines of `[channels.<type>]` after `path` and `default_agent`, commented."""
    env: tuple[tuple[str, str], ...]
    """(variable, what to put in it) for every `${VAR}` of `body`."""
    register: str
    """The webhook registration step, `{name}` and `{config}` filled in (more lines after a newline)."""


CHANNEL_TEMPLATES: Mapping[str, ChannelTemplate] = MappingProxyType({
    "telegram": ChannelTemplate(
        body='''secret_token = "${TELEGRAM_SECRET_TOKEN}"   # checked on every update (setWebhook secret_token)
bot_token = "${TELEGRAM_BOT_TOKEN}"         # read only by `stickyroute webhook` (never by serve)
# bot_username = "MyBot"                     # enables /agent@MyBot in groups
''',
        env=(("TELEGRAM_SECRET_TOKEN", "1-256 characters of A-Z a-z 0-9 _ - that you choose"),
             ("TELEGRAM_BOT_TOKEN", "the bot's token from @BotFather (only `stickyroute webhook` needs it)")),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}"),
    "whatsapp": ChannelTemplate(
        body='''app_secret = "${WHATSAPP_APP_SECRET}"       # the Meta app secret: checks every POST's signature
verify_token = "${WHATSAPP_VERIFY_TOKEN}"   # Meta's verification request must carry it; stickyroute answers it
app_id = "${META_APP_ID}"                   # read only by `stickyroute webhook` (never by serve)
# access_token = "${META_APP_TOKEN}"         # for `stickyroute webhook`; default: app_id|app_secret
''',
        env=(("WHATSAPP_APP_SECRET", "the Meta app's secret (App settings, Basic)"),
             ("WHATSAPP_VERIFY_TOKEN", "any string you choose"),
             ("META_APP_ID", "the Meta app's id (only `stickyroute webhook` needs it)")),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(stickyroute must already serve that URL: Meta sends its verification request to it)"),
    "messenger": ChannelTemplate(
        body='''app_secret = "${MESSENGER_APP_SECRET}"      # the Meta app secret: checks every POST's signature
verify_token = "${MESSENGER_VERIFY_TOKEN}"  # Meta's verification request must carry it; stickyroute answers it
app_id = "${META_APP_ID}"                   # read only by `stickyroute webhook` (never by serve)
''',
        env=(("MESSENGER_APP_SECRET", "the Meta app's secret (App settings, Basic)"),
             ("MESSENGER_VERIFY_TOKEN", "any string you choose"),
             ("META_APP_ID", "the Meta app's id (only `stickyroute webhook` needs it)")),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(stickyroute must already serve that URL: Meta sends its verification request to it)"),
    "instagram": ChannelTemplate(
        body='''app_secret = "${INSTAGRAM_APP_SECRET}"      # the Meta app secret: checks every POST's signature
verify_token = "${INSTAGRAM_VERIFY_TOKEN}"  # Meta's verification request must carry it; stickyroute answers it
app_id = "${META_APP_ID}"                   # read only by `stickyroute webhook` (never by serve)
''',
        env=(("INSTAGRAM_APP_SECRET", "the Meta app's secret (App settings, Basic)"),
             ("INSTAGRAM_VERIFY_TOKEN", "any string you choose"),
             ("META_APP_ID", "the Meta app's id (only `stickyroute webhook` needs it)")),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(stickyroute must already serve that URL: Meta sends its verification request to it)"),
    "slack": ChannelTemplate(
        body='''signing_secret = "${SLACK_SIGNING_SECRET}"  # checks X-Slack-Signature on every request
''',
        env=(("SLACK_SIGNING_SECRET", "the Slack app's Signing Secret (Basic Information)"),),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(prints the Request URL to paste into the Slack app's settings)"),
    "discord": ChannelTemplate(
        body='''public_key = "${DISCORD_PUBLIC_KEY}"        # checks X-Signature-Ed25519 on every request
''',
        env=(("DISCORD_PUBLIC_KEY", "the application's Public Key, 64 hex digits (General Information)"),),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(prints the Interactions Endpoint URL to paste into the Developer Portal)"),
    "line": ChannelTemplate(
        body='''channel_secret = "${LINE_CHANNEL_SECRET}"   # checks X-Line-Signature on every request
''',
        env=(("LINE_CHANNEL_SECRET", "the channel secret (LINE Developers Console, Basic settings)"),),
        register="stickyroute webhook set {name} --config {config} --url https://<your host>/{name}\n"
                 "(prints the Webhook URL to paste into the LINE Developers Console)"),
})
"""Channel type value -> its starter channel."""
