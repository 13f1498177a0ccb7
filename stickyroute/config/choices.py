"""The accepted values of the config's enumerated string keys (where no `enum.Enum` models them)."""

from __future__ import annotations

__all__ = ["CLASSIFIER_PROVIDERS", "LOG_FORMATS", "LOG_LEVELS"]

CLASSIFIER_PROVIDERS: tuple[str, ...] = ("auto", "groq", "keywords", "heuristic")
"""`classifier.provider`; "heuristic" is the old name of "keywords"."""
LOG_FORMATS: tuple[str, ...] = ("text", "json")
"""`server.log_format` (`serve --log-format`)."""
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")
"""`server.log_level` (`serve --log-level`)."""
