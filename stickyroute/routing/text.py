"""The shape of a message's text, as the gate reads it: an acknowledgement ("thanks"), a short
message, and the opening sentence of a message that brings up a second topic (pure functions)."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["is_acknowledgement", "is_short", "opening_sentence"]

_LONGEST_ACK_SCAN = 200
"""Characters beyond which a message is never an acknowledgement (bounds the scan)."""


def is_acknowledgement(text: str, acknowledgements: frozenset[str]) -> bool:
    """True when `text`, trimmed, casefolded and without trailing punctuation, is in the list."""
    core = text.strip()
    if len(core) > _LONGEST_ACK_SCAN:
        return False  # no acknowledgement is this long, whatever punctuation follows it
    end = len(core)
    while end and (unicodedata.category(core[end - 1]).startswith("P") or core[end - 1].isspace()):
        end -= 1
    return core[:end].casefold() in acknowledgements


def is_short(text: str, short_chars: int) -> bool:
    """True when `text` has fewer than `short_chars` characters (not bytes) after trimming.

    Characters are counted in NFC form, so an accent typed as a combining mark ("e" + U+0301)
    counts once, as it shows.
    """
    core = text.strip()
    if not core.isascii():
        core = unicodedata.normalize("NFC", core)
    return len(core) < short_chars


_SENTENCE_END = re.compile(r"(?<=[.!?\u3002\uff01\uff1f])(?:\s+|(?=[^\W\d_]))")
"""Where a sentence ends: after . ! ? (or the full-width ones), before spaces or a letter
("cotto?Also"), never inside a number ("3.15")."""


def opening_sentence(text: str, acknowledgements: frozenset[str], short_chars: int) -> str | None:
    """The first sentence of `text` when it has several and that one is no courtesy (not an
    acknowledgement, not short: `two_topic_confirm` reads it); else None."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    if len(sentences) < 2:
        return None
    first = sentences[0]
    if is_acknowledgement(first, acknowledgements) or is_short(first, short_chars):
        return None
    return first
