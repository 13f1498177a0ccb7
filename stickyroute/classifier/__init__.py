"""The intent classifier: interface (base), Groq and keyword providers, guard, stats, factory.

    base.py       Classifier protocol, Candidate, Classification, Outcome, parse_answer
    groq.py       GroqClassifier (the only importer of the groq SDK)
    keywords.py   KeywordClassifier (offline keyword gate)
    guard.py      GuardedClassifier: per-channel budget, circuit breaker, hard timeout, logs
    stats.py      ClassifierStats: JSON snapshot and Prometheus metrics
    factory.py    build_classifier: provider auto | groq | keywords (alias heuristic)
"""

from stickyroute.classifier.base import (
    Candidate,
    Classification,
    ClassificationRequest,
    Classifier,
    Outcome,
    parse_answer,
)
from stickyroute.classifier.factory import build_classifier
from stickyroute.classifier.guard import GuardedClassifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.classifier.stats import ClassifierStats

__all__ = [
    "Candidate", "Classification", "ClassificationRequest", "Classifier", "ClassifierStats", "GuardedClassifier",
    "KeywordClassifier", "Outcome", "build_classifier", "parse_answer",
]
