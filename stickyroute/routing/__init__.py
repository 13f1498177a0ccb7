"""Routing: Layer 1 (bindings, thread routes, default) and Layer 2 (the pure engine), and the
async router that drives them per conversation.

    envelope.py   Envelope, MessageKind: what an adapter reads out of an update
    layer1.py     Layer1.match(envelope) -> Resolution (bindings > thread route > chat > default)
    decision.py   Decision, NeedsClassification, NeedsPermit, Purpose, Conversation (the values)
    engine.py     decide(envelope, route, rules, now) -> Decision | NeedsClassification | NeedsPermit;
                  conclude()
    signals.py    agent hints and handoffs: apply_signal(signal, route, version, rules, now)
    explicit.py   /agent <name>, /agent auto, /agent, @mentions
    keywords.py   the zero-token keyword gate (KeywordScorer)
    rules.py      ChannelRules built once from the config (build_rules, keyword_scorer)
    router.py     Router.decide: Layer 1, then Layer 2 under the conversation's lease; Router.signal
    deadline.py   ClassifierDeadline: one classifier wait per request, shared by its messages
"""

from stickyroute.routing.engine import (
    Conversation,
    Decision,
    NeedsClassification,
    NeedsPermit,
    Purpose,
    conclude,
    decide,
)
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.layer1 import Layer1, Resolution
from stickyroute.routing.router import Router
from stickyroute.routing.rules import ChannelRules, build_all_rules, build_rules, global_scorer, keyword_scorer
from stickyroute.routing.signals import Ignored, Signal, SignalKind, apply_signal

__all__ = [
    "ChannelRules", "Conversation", "Decision", "Envelope", "Ignored", "Layer1", "MessageKind", "NeedsClassification",
    "NeedsPermit", "Purpose", "Resolution", "Router", "Signal", "SignalKind", "apply_signal", "build_all_rules",
    "build_rules", "conclude", "decide", "global_scorer", "keyword_scorer",
]
