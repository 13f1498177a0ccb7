"""Meta's webhooks (WhatsApp; Messenger and Instagram use the same call) through the Graph API's
app subscriptions.

Source: Meta Graph API, "Subscriptions Edge" (`/{app-id}/subscriptions`) and "Getting started
with webhooks" (the verification request).

    POST   {api_base}/{app_id}/subscriptions   object, callback_url, verify_token, fields, access_token
    GET    {api_base}/{app_id}/subscriptions?access_token=...    {"data": [{"object", "callback_url", "active",
                                                                             "fields": [{"name", "version"}]}]}
    DELETE {api_base}/{app_id}/subscriptions?object=...&access_token=...

Answers are `{"success": true}` or `{"error": {"message", "type", "code"}}`. While it handles the
POST, Meta sends the verification request (`GET callback_url?hub.mode=subscribe&hub.verify_token=
...&hub.challenge=...`): stickyroute answers it itself with the channel's `verify_token`, so the
proxy must already serve the callback URL. The access token is an app access token: the
channel's `access_token`, else `<app_id>|<app_secret>` (Meta's documented form of one).

For WhatsApp the business account must also subscribe the app (`POST /{waba-id}/subscribed_apps`,
or WhatsApp Manager): the printed next step says so.
"""

from __future__ import annotations

from typing import Any

from stickyroute.errors import ConfigProblem, WebhookError
from stickyroute.webhooks.base import CredentialMissing, SetOptions, Target, path_warning

__all__ = ["DEFAULT_API", "MetaWebhook"]

DEFAULT_API = "https://graph.facebook.com/v21.0"
_TOKEN_CODES = (102, 190)
"""Graph error codes of a refused access token (OAuthException)."""


class MetaWebhook:
    """The app subscription of one Meta object (`whatsapp_business_account`, `page`, `instagram`)."""

    def __init__(self, object_type: str, fields: tuple[str, ...], next_step: str) -> None:
        self.object_type = object_type
        self.fields = fields
        """The fields subscribed by default (`--fields` replaces them)."""
        self.next_step = next_step

    def _credentials(self, target: Target) -> tuple[str, str]:
        """(app id, app access token)."""
        app_id = target.secret("app_id", needed_for=" to call the Graph API (the Meta app's id)")
        if target.channel.api.access_token is not None:
            return app_id, target.secret("access_token")
        if target.channel.app_secret:
            target.remember(target.channel.app_secret)
            return app_id, f"{app_id}|{target.channel.app_secret}"
        return app_id, target.secret("access_token", needed_for=" (an app access token), or set app_secret")

    def _call(self, target: Target, method: str, what: str, **kwargs: Any) -> Any:
        app_id, token = self._credentials(target)
        base = (target.api_base or DEFAULT_API).rstrip("/")
        params = {**kwargs.pop("params", {}), "access_token": token} if method != "POST" else None
        data = {**kwargs.pop("data", {}), "access_token": token} if method == "POST" else None
        response = target.call(method, f"{base}/{app_id}/subscriptions", f"the Graph API at {base}", params=params,
                               data=data)
        try:
            body = response.json()
        except ValueError:
            raise WebhookError(f"the Graph API answered {what} with {response.status_code} and no JSON") from None
        error = body.get("error") if isinstance(body, dict) else None
        if response.status_code >= 400 or isinstance(error, dict):
            error = error if isinstance(error, dict) else {}
            code = error.get("code", response.status_code)
            hint = (f" (check channels.{target.channel.name}.access_token, or app_id and app_secret)"
                    if code in _TOKEN_CODES else "")
            raise WebhookError(target.scrub(f"Meta refused {what}: {error.get('message', response.status_code)} "
                                            f"(code {code}){hint}"))
        return body

    def set(self, target: Target, options: SetOptions) -> list[str]:
        channel = target.channel
        if not channel.verify_token:
            raise CredentialMissing(_problem(target, "verify_token", "is required: Meta sends it back in the "
                                             "verification request, and stickyroute answers that only with it"))
        target.remember(channel.verify_token)
        fields = options.fields or self.fields
        lines = path_warning(channel, options.url)
        if not channel.app_secret:
            lines.append(f"warning: channels.{channel.name}.app_secret is not set: the proxy cannot check "
                         "X-Hub-Signature-256, so anyone who knows the URL can post updates to it")
        self._call(target, "POST", f"the {self.object_type} subscription",
                   data={"object": self.object_type, "callback_url": options.url,
                         "verify_token": channel.verify_token, "fields": ",".join(fields), "include_values": "true"})
        return [f"channel {channel.name}: Meta app subscribed to {self.object_type} with callback {options.url}",
                f"  fields: {', '.join(fields)}",
                f"  verify_token: channels.{channel.name}.verify_token (Meta verified the callback with it)",
                *lines, f"next: {self.next_step}"]

    def info(self, target: Target) -> list[str]:
        body = self._call(target, "GET", "the subscriptions")
        data = body.get("data") if isinstance(body, dict) else None
        ours = [s for s in data or () if isinstance(s, dict) and s.get("object") == self.object_type]
        if not ours:
            return [f"channel {target.channel.name}: the Meta app has no {self.object_type} subscription"]
        found = ours[0]
        names = [str(f.get("name")) for f in found.get("fields") or () if isinstance(f, dict)]
        callback = str(found.get("callback_url", ""))
        return [f"channel {target.channel.name}: Meta {self.object_type} subscription, callback {callback}",
                f"  active: {'yes' if found.get('active') else 'no'}",
                f"  fields: {', '.join(names) or '(none)'}", *path_warning(target.channel, callback)]

    def delete(self, target: Target, drop_pending_updates: bool) -> list[str]:
        self._call(target, "DELETE", f"removing the {self.object_type} subscription",
                   params={"object": self.object_type})
        return [f"channel {target.channel.name}: Meta app's {self.object_type} subscription removed "
                "(Meta stops sending its webhooks)"]


def _problem(target: Target, key: str, message: str) -> ConfigProblem:
    return ConfigProblem(target.config.path, f"channels.{target.channel.name}.{key}", message)
