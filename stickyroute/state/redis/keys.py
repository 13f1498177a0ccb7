"""Key layout in Redis: every key of one conversation, of one delivery, of one budget shares a
hash tag, so each script touches one slot (Redis Cluster / Valkey cluster ready).

    <prefix>c:<channel>:{<digest>}        hash: the conversation's route, version, recent texts
    <prefix>c:<channel>:{<digest>}:lock   string: the decision lock (a random token, PX expiry)
    <prefix>d:{<channel>:<delivery id>}   hash: claim, stored answer, failed attempt, first decision
    <prefix>d:<channel>:{<digest>}:<id>   the same, for a single-message update of a known
                                          conversation: under its conversation's hash tag, so
                                          one script claims it and takes the conversation
    <prefix>b:{<channel>}                 hash: the channel's classifier token bucket
    <prefix>s:{<channel>:<digest>}        hash: one sender's explicit-switch token bucket

`<digest>` is 32 hex characters (128 bits) of SHA-256 over the conversation key's parts joined
like `ConversationKey.hashed` (which keeps 12 for logs): no raw chat or user id is stored in a
key name, and collisions are negligible at any conversation count. A delivery id with a brace,
or longer than 128 characters, is replaced by `#` and its digest. The prefix may not contain
braces (the hash tag must be the first `{...}` of the name; the config loader says so).
"""

from __future__ import annotations

import hashlib
import re

from stickyroute.core.delivery import DeliveryKey
from stickyroute.core.route import ConversationKey

_GLOB = re.compile(r"([*?\[\]\\])")
_MAX_ID_CHARS = 128


def _escape(text: str) -> str:
    """`text` as a literal inside a SCAN MATCH pattern."""
    return _GLOB.sub(r"\\\1", text)


class KeyLayout:
    """Names of every key under one `prefix` (e.g. "stickyroute:")."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str) -> None:
        if "{" in prefix or "}" in prefix:
            raise ValueError(f"key prefix {prefix!r} must not contain braces (they would be the hash tag)")
        self.prefix = prefix

    @staticmethod
    def digest(key: ConversationKey) -> str:
        """32 hex characters of SHA-256 over the key's parts (see the module docstring)."""
        return key.digest()

    @staticmethod
    def digest_from(name: str | bytes) -> str:
        """`ConversationKey.digest` of the conversation whose hash is named `name` (32 hex)."""
        text = name.decode() if isinstance(name, bytes) else name
        return text[text.rindex("{") + 1:text.rindex("}")]

    def conversation(self, key: ConversationKey) -> str:
        """The hash holding `key`'s route, version and recent texts."""
        return self.conversation_of(key.channel, key.digest())

    def conversation_of(self, channel: str, digest: str) -> str:
        """The hash of the conversation of `channel` whose `ConversationKey.digest` is `digest`."""
        return f"{self.prefix}c:{channel}:{{{digest}}}"

    def lock(self, key: ConversationKey) -> str:
        """The decision lock of `key` (same slot as its hash)."""
        return self.conversation(key) + ":lock"

    def conversations_pattern(self, channel: str) -> str:
        """SCAN MATCH pattern of the conversation hashes of `channel` (locks excluded)."""
        return f"{_escape(self.prefix)}c:{_escape(channel)}:{{*}}"

    def delivery(self, key: DeliveryKey, digest: str | None = None) -> str:
        """The hash of one platform delivery (channel, delivery id); with `digest` (the
        `ConversationKey.digest` of its conversation) under that conversation's hash tag."""
        channel, delivery_id = key
        if "{" in delivery_id or "}" in delivery_id or len(delivery_id) > _MAX_ID_CHARS:
            delivery_id = "#" + hashlib.sha256(delivery_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        if digest is not None:
            return f"{self.prefix}d:{channel}:{{{digest}}}:{delivery_id}"
        return f"{self.prefix}d:{{{channel}:{delivery_id}}}"

    def deliveries_pattern(self) -> str:
        """SCAN MATCH pattern of every delivery hash (both layouts)."""
        return f"{_escape(self.prefix)}d:*"

    def budget(self, channel: str) -> str:
        """The classifier token bucket of `channel`."""
        return f"{self.prefix}b:{{{channel}}}"

    @staticmethod
    def sender_digest(channel: str, sender: str) -> str:
        """32 hex characters of SHA-256 over (channel, sender): no raw user id in a key name."""
        return hashlib.sha256(f"{channel}\x1f{sender}".encode("utf-8", "surrogatepass")).hexdigest()[:32]

    def switches(self, channel: str, sender: str) -> str:
        """The explicit-switch token bucket of `sender` on `channel`."""
        return f"{self.prefix}s:{{{channel}:{self.sender_digest(channel, sender)}}}"

    def everything_pattern(self) -> str:
        """SCAN MATCH pattern of every key under this prefix (tests flush only their own)."""
        return f"{_escape(self.prefix)}*"
