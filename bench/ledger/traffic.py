"""Traffic: Telegram updates and WhatsApp messages and statuses from S senders over C chats, with
the agent the shipped config's rules say for the updates whose route is deterministic.

Deterministic (config/proxy.toml): Telegram user 111 -> coder (user binding), chat
-1003456789012 -> ops (chat binding), forum topic 4790 of chat -1002345678901 -> writer (thread
route), WhatsApp 15550100187 -> coder (user binding), and every `/agent <name>` message -> name
(explicit switch, outside Layer 1). Everything else is auto-routed (no expected agent).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

TEXTS = [
    "please refactor this python function, it has a bug",
    "the kubernetes pods crash after each deploy",
    "my invoice for March looks wrong, I want a refund",
    "can you draft the announcement blog post for the launch",
    "the login page says my password is wrong and the order is late",
    "ci pipeline fails on the docker build step again",
    "proofread this email to the customers please",
    "how do I write a unit test for this class",
    "thanks!", "ok", "and what about tomorrow?", "where is my delivery, the tracking number is dead",
]
EXPLICIT = ["coder", "support", "ops", "writer"]
BOUND_TELEGRAM_USER, BOUND_CHAT, FORUM_CHAT, FORUM_TOPIC = 111, -1003456789012, -1002345678901, 4790
BOUND_WHATSAPP = "15550100187"


@dataclass(frozen=True)
class Update:
    """One platform item: its ledger key, the chat it is queued on (Telegram), the agent the
    rules say (or None) and, for Telegram, the whole body; for WhatsApp the message or status."""

    platform: str
    key: str
    queue: str
    expected: str | None
    body: bytes = b""
    item: dict | None = None
    contact: dict | None = None


class Traffic:
    """Update generator: `senders` users over `chats` chats, half Telegram groups, half WhatsApp
    groups; `special` share of updates from the deterministic senders; `explicit` share of
    `/agent <name>` messages; `statuses` share of WhatsApp statuses. Seeded."""

    def __init__(self, senders: int = 5000, chats: int = 50, seed: int = 7, special: float = 0.1,
                 explicit: float = 0.03, statuses: float = 0.1, whatsapp: float = 0.4) -> None:
        self.rng = random.Random(seed)
        self.per_chat = max(1, senders // max(1, chats))
        self.tg_chats = [-1009000000000 - i for i in range(max(1, chats // 2))]
        self.wa_groups = [f"120363{i:012d}@g.us" for i in range(max(1, chats - len(self.tg_chats)))]
        self.special, self.explicit, self.statuses, self.whatsapp = special, explicit, statuses, whatsapp
        self.update_id = 100_000
        self.wamid = 0
        self.sent_wamids: list[tuple[str, str]] = []

    def next(self) -> Update:
        if self.rng.random() < self.whatsapp:
            return self._whatsapp()
        return self._telegram()

    def _text(self) -> tuple[str, str | None]:
        if self.rng.random() < self.explicit:
            name = self.rng.choice(EXPLICIT)
            return f"/agent {name}", name
        return self.rng.choice(TEXTS), None

    def _telegram(self) -> Update:
        self.update_id += 1
        text, expected = self._text()
        roll = self.rng.random()
        thread = None
        if roll < self.special / 3:
            chat, user, expected = self.rng.choice(self.tg_chats), BOUND_TELEGRAM_USER, "coder"
        elif roll < 2 * self.special / 3:
            chat, user, expected = BOUND_CHAT, self.rng.randrange(1, 10_000_000), "ops"
        elif roll < self.special:
            chat, user, thread, expected = FORUM_CHAT, self.rng.randrange(1, 10_000_000), FORUM_TOPIC, "writer"
        else:
            index = self.rng.randrange(len(self.tg_chats))
            chat, user = self.tg_chats[index], 1_000_000 + index * self.per_chat + self.rng.randrange(self.per_chat)
        message: dict = {"message_id": self.update_id, "from": {"id": user, "is_bot": False, "first_name": "U"},
                         "chat": {"id": chat, "type": "supergroup"}, "date": 1700000000, "text": text}
        if thread is not None:
            message.update(message_thread_id=thread, is_topic_message=True)
        body = json.dumps({"update_id": self.update_id, "message": message}, separators=(",", ":")).encode()
        return Update("telegram", f"tg:{self.update_id}", str(chat), expected, body=body)

    def _whatsapp(self) -> Update:
        if self.sent_wamids and self.rng.random() < self.statuses:
            wamid, phone = self.rng.choice(self.sent_wamids)
            state = self.rng.choice(["sent", "delivered", "read"])
            self.wamid += 1
            status = {"id": f"wamid.OUT{self.wamid}", "status": state, "timestamp": "1700000000",
                      "recipient_id": phone}
            return Update("whatsapp", f"wa:wamid.OUT{self.wamid}:{state}", phone, None, item={"status": status})
        self.wamid += 1
        text, expected = self._text()
        group = None
        if self.rng.random() < self.special:
            phone, expected = BOUND_WHATSAPP, "coder"
        else:
            index = self.rng.randrange(len(self.wa_groups))
            group = self.wa_groups[index]
            phone = f"1555{2000000 + index * self.per_chat + self.rng.randrange(self.per_chat):07d}"
        wamid = f"wamid.L{self.wamid}"
        message = {"from": phone, "id": wamid, "timestamp": "1700000000", "type": "text", "text": {"body": text}}
        if group is not None:
            message["group_id"] = group
        self.sent_wamids.append((wamid, phone))
        if len(self.sent_wamids) > 1000:
            self.sent_wamids = self.sent_wamids[-500:]
        contact = {"profile": {"name": "U"}, "wa_id": phone}
        return Update("whatsapp", f"wa:{wamid}", phone, expected, item={"message": message}, contact=contact)


def whatsapp_body(updates: list[Update]) -> bytes:
    """One Cloud API notification carrying `updates` (messages and statuses) in one change."""
    value: dict = {"messaging_product": "whatsapp",
                   "metadata": {"display_phone_number": "15550100100", "phone_number_id": "200000000000001"}}
    contacts = {u.contact["wa_id"]: u.contact for u in updates if u.contact is not None}
    messages = [u.item["message"] for u in updates if u.item and "message" in u.item]
    statuses = [u.item["status"] for u in updates if u.item and "status" in u.item]
    if contacts:
        value["contacts"] = list(contacts.values())
    if messages:
        value["messages"] = messages
    if statuses:
        value["statuses"] = statuses
    doc = {"object": "whatsapp_business_account",
           "entry": [{"id": "100000000000001", "changes": [{"field": "messages", "value": value}]}]}
    return json.dumps(doc, separators=(",", ":")).encode()
