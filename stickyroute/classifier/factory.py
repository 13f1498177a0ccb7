"""Pick the classifier from `[classifier].provider` and say which in one startup log line.

    provider = "auto"       groq when env[api_key_env] is set (non-blank), else keywords
    provider = "groq"       groq; ConfigError (classifier.provider) when the key is not set (the
                            config loader reports the same first: `config.environment`)
    provider = "keywords"   the keyword gate, no LLM calls ("heuristic" is the same, kept for
                            configs written before the rename)

Groq's base URL: `classifier.base_url`, else env `GROQ_BASE_URL`, else https://api.groq.com.
The groq SDK is imported only when a Groq classifier is built.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import httpx

from stickyroute.classifier.base import Classifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.config.choices import CLASSIFIER_PROVIDERS as PROVIDERS
from stickyroute.config.environment import classifier_key_problem
from stickyroute.config.model import ClassifierSettings
from stickyroute.errors import ConfigError, ConfigProblem

BASE_URL_ENV = "GROQ_BASE_URL"
DEFAULT_BASE_URL = "https://api.groq.com"


def build_classifier(
    settings: ClassifierSettings,
    score: Callable[[str], Mapping[str, int]],
    threshold: int,
    env: Mapping[str, str],
    http_client: httpx.AsyncClient | None = None,
    *,
    clock: Callable[[], float],
    config_path: str = "<config>",
) -> tuple[Classifier, str]:
    """(classifier, startup log line) for `settings.provider`.

    `score`/`threshold` feed the keyword classifier; `clock` (seconds, monotonic) times Groq
    calls; `env` is the process environment (read
    for `settings.api_key_env` and GROQ_BASE_URL); `http_client` is handed to Groq (None: the
    classifier builds and owns one). Raises ConfigError naming `classifier.provider` for an
    unknown provider or `groq` without the key. The result is not guarded: wrap it in
    `GuardedClassifier` for budget, breaker, stats and per-call logs.
    """
    provider = settings.provider
    if provider not in PROVIDERS:
        raise ConfigError([ConfigProblem(
            config_path, "classifier.provider",
            f"expected one of {', '.join(PROVIDERS)}, got {provider!r}",
        )])
    api_key = env.get(settings.api_key_env, "").strip()
    if provider in ("keywords", "heuristic") or not api_key:
        problem = classifier_key_problem(settings, env)
        if problem is not None:  # `check_config` reports it first: this is the backstop
            raise ConfigError([ConfigProblem(config_path, "classifier.provider", problem)])
        return KeywordClassifier(score, threshold), describe_classifier(settings, env)
    from stickyroute.classifier.groq import GroqClassifier  # the only importer of the groq SDK

    classifier = GroqClassifier(settings, api_key, http_client=http_client, base_url=_base_url(settings, env),
                                clock=clock)
    return classifier, describe_classifier(settings, env)


def describe_classifier(settings: ClassifierSettings, env: Mapping[str, str]) -> str:
    """The startup log line of the classifier `build_classifier` builds for `settings` and
    `env` (without building it): `classifier: groq (model ..., timeout 2.0 s)` or
    `classifier: keyword gate (...; no LLM calls)`."""
    if settings.provider in ("keywords", "heuristic"):
        return f"classifier: keyword gate (provider = {settings.provider}; no LLM calls)"
    if not env.get(settings.api_key_env, "").strip():
        return f"classifier: keyword gate ({settings.api_key_env} not set; no LLM calls)"
    base_url = _base_url(settings, env)
    where = f", base_url {base_url}" if base_url != DEFAULT_BASE_URL else ""
    return f"classifier: groq (model {settings.model}, timeout {settings.timeout_s} s{where})"


def _base_url(settings: ClassifierSettings, env: Mapping[str, str]) -> str:
    return (settings.base_url or env.get(BASE_URL_ENV, "").strip() or DEFAULT_BASE_URL).rstrip("/")
