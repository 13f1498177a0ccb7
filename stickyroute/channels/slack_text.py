"""Slack message text as people read it: Slack's `<...>` entities resolved, `&amp;` unescaped.

    plain_text(text) -> str

Slack writes mentions and links as entities (Slack "Formatting text for app surfaces"):
`<@U123>` / `<@U123|name>` a user (a Slack person or bot, never an agent name: removed),
`<#C123|general>` a channel (`#general`), `<!here>`, `<!channel>`, `<!everyone>`,
`<!subteam^S123|@team>` special and user-group mentions (removed: a Slack group is not an agent),
`<!date^...|fallback>` (the fallback), `<https://x|label>` / `<mailto:a@b|a@b>` links (the label,
else the URL). `&lt;`, `&gt;` and `&amp;` are the only escapes. What is left is what the router
reads: a typed `@billing` (no Slack user of that name) stays a mention of the agent `billing`.
"""

from __future__ import annotations

import re

__all__ = ["plain_text"]

_ENTITY = re.compile(r"<([^<>\n]*)>")


def _resolve(match: re.Match[str]) -> str:
    target, _, label = match.group(1).partition("|")
    if target.startswith("@"):
        return ""
    if target.startswith("#"):
        return f"#{label}" if label else ""
    if target.startswith("!"):
        return label if target.startswith("!date") else ""
    return label or target


def plain_text(text: str) -> str:
    """`text` with Slack entities resolved and escapes undone (linear in its length), trimmed."""
    if "<" in text:
        text = _ENTITY.sub(_resolve, text)
    if "&" in text:
        text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return text.strip()
