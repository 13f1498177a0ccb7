"""Shared fakes of the classifier tests: candidates, a fake clock, Groq completion bodies."""

from __future__ import annotations

from stickyroute.classifier.base import Candidate, ClassificationRequest
from stickyroute.clock import FakeClock  # re-exported for the classifier tests

__all__ = ["CANDIDATES", "CHAT_URL", "FakeClock", "completion", "request"]

CHAT_URL = "https://api.groq.com/openai/v1/chat/completions"

CANDIDATES = (
    Candidate("coder", "Writes, reviews and fixes code", ("dev",)),
    Candidate("ops-agent", "Deployments, servers and infrastructure", ("ops",)),
    Candidate("writer", "Drafts articles and documentation"),
)


def completion(content: str | None, prompt_tokens: int = 120, completion_tokens: int = 2) -> dict:
    """A Groq chat-completion body answering `content`."""
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "llama-3.1-8b-instant",
        "choices": [{
            "index": 0,
            "message": {"role": "assistant", "content": content},
            "finish_reason": "stop",
        }],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def request(text: str = "please refactor this function", channel: str = "telegram",
            context: tuple[str, ...] = ()) -> ClassificationRequest:
    return ClassificationRequest(channel=channel, text=text, candidates=CANDIDATES,
                                 current="writer", context=context)
