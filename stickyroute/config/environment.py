"""Checks of a config against the process environment, shared by `check`, `serve` and reload.

    classifier_key_problem(settings, env) -> str | None

A value written in the file is checked by the readers; what the file asks of the environment
beyond `${VAR}` substitution is checked here, once, so the three never disagree: today the
classifier's API key (`classifier.provider = "groq"` needs `env[classifier.api_key_env]`).
"""

from __future__ import annotations

from collections.abc import Mapping

from stickyroute.config.model import ClassifierSettings

__all__ = ["classifier_key_problem"]


def classifier_key_problem(settings: ClassifierSettings, env: Mapping[str, str]) -> str | None:
    """What is wrong with the classifier's API key for `settings.provider` (problem of
    `classifier.provider`), or None. Only "groq" needs one; "auto" falls back to the keyword
    classifier without it."""
    if settings.provider != "groq" or env.get(settings.api_key_env, "").strip():
        return None
    return (f'"groq" needs an API key in the environment variable {settings.api_key_env} '
            "(classifier.api_key_env), which is not set")
