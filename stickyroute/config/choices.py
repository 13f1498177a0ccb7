"""The accepted values of the config's enumerated keys: the enums of the model (re-exported by
`stickyroute.config.model`) and the plain string choices."""

from __future__ import annotations

import enum

__all__ = ["CLASSIFIER_PROVIDERS", "LOG_FORMATS", "LOG_LEVELS", "AgentHints", "ChannelType", "Strategy"]

CLASSIFIER_PROVIDERS: tuple[str, ...] = ("auto", "groq", "keywords", "heuristic")
"""`classifier.provider`; "heuristic" is the old name of "keywords"."""
LOG_FORMATS: tuple[str, ...] = ("text", "json")
"""`server.log_format` (`serve --log-format`)."""
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")
"""`server.log_level` (`serve --log-level`)."""


class Strategy(enum.Enum):
    """Layer-2 auto-route strategy of a channel (`overrides.auto_route`)."""

    OFF = "off"
    EXPLICIT_ONLY = "explicit_only"
    STICKY_TTL = "sticky_ttl"
    STICKY_HEURISTIC = "sticky_heuristic"


class AgentHints(enum.Enum):
    """`auto_route_agent_hints`: what an agent's `not-mine` hint does (issue #12)."""

    OFF = "off"                # ignored
    DIVERGENCE = "divergence"  # one divergence increment (sticky_heuristic)
    CONFIRM = "confirm"        # the next non-short message goes to the classifier at once


class ChannelType(enum.Enum):
    """Platform of a channel (`channels.<name>.type`)."""

    TELEGRAM = "telegram"
    WHATSAPP = "whatsapp"
    SLACK = "slack"
    DISCORD = "discord"
    LINE = "line"
    MESSENGER = "messenger"
    INSTAGRAM = "instagram"
