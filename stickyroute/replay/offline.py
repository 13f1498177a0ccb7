"""The router the offline tools use: the server's decision path on the memory backend."""

from __future__ import annotations

from stickyroute import channels
from stickyroute.classifier.base import Classifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.config.model import Config
from stickyroute.routing.router import Router
from stickyroute.routing.rules import build_all_rules, global_scorer
from stickyroute.state.base import limits_for
from stickyroute.state.memory import MemoryConversationState


def offline_router(config: Config, classifier: Classifier) -> Router:
    """A `Router` for `config` with `classifier`, routes kept in a fresh memory backend, each
    channel's rules built with its real adapter's capabilities (as the server builds them)."""
    state = MemoryConversationState(limits_for(config), config.classifier.context_messages)
    return Router(config, classifier, state, build_all_rules(config, channels.lists_agents))


def keyword_classifier(config: Config) -> KeywordClassifier:
    """The keyword classifier the server builds for `config` (global scorer and threshold)."""
    return KeywordClassifier(global_scorer(config).decisive, config.routing.confidence_threshold)
