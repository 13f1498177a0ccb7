"""Decision values (stickyroute/routing/decision.py)."""

from __future__ import annotations

import dataclasses
import hashlib

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.core.route import ConversationKey, Route
from stickyroute.routing.decision import Conversation, Decision


def test_about_sets_the_conversation_like_dataclasses_replace_and_keeps_every_other_field():
    key = ConversationKey("telegram", "-100", "7", "42")
    full = Decision("coder", "keywords", store=Route("coder", chosen_at=10.0, last_active=10.0), forget=True,
                    scores={"coder": 3}, list_agents=True, classification=Classification(outcome=Outcome.AGENT,
                                                                                           agent="coder"),
                    switched=True)
    conversation = Conversation(key, 10.0)
    assert full.about(conversation) == dataclasses.replace(full, conversation=conversation)
    assert [f.name for f in dataclasses.fields(Decision)][-1] == "conversation"  # about() builds positionally


def test_conversation_digest_is_sha256_of_the_parts_and_the_same_when_asked_again():
    key = ConversationKey("telegram", "-100", None, "42")
    expected = hashlib.sha256(b"telegram\x1f-100\x1f\x1f42").hexdigest()[:32]
    assert key.digest() == expected
    assert key.digest() == expected  # answered from the cache
    assert key.hashed() == expected[:12]
    assert ConversationKey("telegram", "-100", "", "42").digest() == expected  # "" and None join alike
