"""The router the offline tools use: the server's decision path on the memory backend."""

from __future__ import annotations

from proxy import channels
from proxy.classifier.base import Classifier
from proxy.classifier.keywords import KeywordClassifier
from proxy.config.model import Config
from proxy.routing.router import Router
from proxy.routing.rules import build_all_rules, global_scorer
from proxy.state.base import limits_for
from proxy.state.memory import MemoryConversationState


def offline_router(config: Config, classifier: Classifier) -> Router:
    """A `Router` for `config` with `classifier`, routes kept in a fresh memory backend, each
    channel's rules built with its real adapter's capabilities (as the server builds them)."""
    state = MemoryConversationState(limits_for(config), config.classifier.context_messages)
    return Router(config, classifier, state, build_all_rules(config, channels.lists_agents))


def keyword_classifier(config: Config) -> KeywordClassifier:
    """The keyword classifier the server builds for `config` (global scorer and threshold)."""
    return KeywordClassifier(global_scorer(config).scores, config.routing.confidence_threshold)
