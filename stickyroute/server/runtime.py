"""Runtime: one loaded config ready to serve (rules, router, classifier, dispatcher, leg, webhook
app), built whole and swapped in one assignment on reload.

    runtime = build_runtime(config, parts, loaded_at, previous=None)
    runtime.enter() / runtime.leave()     the public app counts the requests running on it
    await runtime.idle()                  until none is running (a retired runtime then closes)

A request runs start to end on the runtime that was current when it arrived: its app holds the
channel table, its dispatcher the router and leg of that config. What outlives a config is in
`Parts`, shared by every runtime of a service: the state backends (routes survive a reload), the
accounting (counters keep counting), the classifier's statistics. The forwarding leg, with its
pools, passes from one runtime to the next while `[upstream]` and `server.trusted_proxies` stay
the same (the pools of agents that are kept survive; an agent removed leaves its idle pooled
connections to the pool's idle timeout, `forwarding.pools.IDLE_KEEP_S`).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import httpx
from starlette.types import ASGIApp

from stickyroute.channels import lists_agents
from stickyroute.classifier.factory import build_classifier
from stickyroute.classifier.guard import GuardedClassifier
from stickyroute.classifier.keywords import KeywordClassifier
from stickyroute.classifier.stats import ClassifierStats
from stickyroute.config.digest import config_digest
from stickyroute.config.model import Config, UpstreamSettings
from stickyroute.forwarding.app import create_app
from stickyroute.forwarding.dispatch import Dispatcher, RecordHook
from stickyroute.forwarding.leg import Forwarding, Leg
from stickyroute.hints import AgentSignals, ConversationTokens
from stickyroute.observe import Accounting
from stickyroute.routing.router import Router
from stickyroute.routing.rules import ChannelRules, build_all_rules, global_scorer
from stickyroute.state.build import StateBackends

__all__ = ["Parts", "Runtime", "build_runtime"]


@dataclass(slots=True)
class Parts:
    """What every runtime of one service shares (see the module docstring). `leg` replaces the
    forwarding leg (unit tests); `groq_http_client` goes to the Groq classifier (respx in tests)."""

    state: StateBackends
    stats: ClassifierStats
    accounting: Accounting
    clock: Callable[[], float]
    guard_clock: Callable[[], float]
    env: Mapping[str, str] | None = None
    groq_http_client: httpx.AsyncClient | None = None
    recorder: RecordHook | None = None
    leg: Forwarding | None = None


class Runtime:
    """One config, ready to serve (see the module docstring)."""

    __slots__ = ("_idle", "active", "app", "classifier", "classifier_line", "config", "digest", "dispatcher", "leg",
                 "loaded_at", "router", "rules")

    def __init__(self, config: Config, digest: str, loaded_at: float, rules: Mapping[str, ChannelRules],
                 router: Router, classifier: GuardedClassifier, classifier_line: str, dispatcher: Dispatcher,
                 app: ASGIApp, leg: Forwarding) -> None:
        self.config = config
        self.digest = digest
        """SHA-256 of the config file's settings (`stickyroute.config.digest`), taken before the
        command-line overrides."""
        self.loaded_at = loaded_at
        """When it was loaded (seconds, wall clock)."""
        self.rules = rules
        self.router = router
        self.classifier = classifier
        self.classifier_line = classifier_line
        self.dispatcher = dispatcher
        self.app = app
        self.leg = leg
        self.active = 0
        """Requests running on this runtime."""
        self._idle: asyncio.Event | None = None

    def enter(self) -> None:
        self.active += 1

    def leave(self) -> None:
        self.active -= 1
        if self.active == 0 and self._idle is not None:
            self._idle.set()

    async def idle(self) -> None:
        """Return once no request runs on this runtime."""
        while self.active > 0:
            self._idle = asyncio.Event()
            await self._idle.wait()


def build_runtime(config: Config, parts: Parts, loaded_at: float, previous: Runtime | None = None, *,
                  digest: str | None = None) -> Runtime:
    """Everything `config` needs to serve, sharing `parts` (and `previous`' leg when its
    settings are unchanged). Builds, connects nothing: sessions and clients open on first use.
    `digest`: the hash to show (the file's, before command-line overrides; default: `config`'s).
    Raises ConfigError when the classifier cannot be built (`check_config` reports it first)."""
    scorer = global_scorer(config)
    inner, line = build_classifier(
        config.classifier, scorer.decisive, config.routing.confidence_threshold,
        os.environ if parts.env is None else parts.env, http_client=parts.groq_http_client,
        config_path=config.path, clock=parts.guard_clock,
    )
    channels = config.channels
    classifier = GuardedClassifier(
        inner, config.classifier, parts.stats, parts.guard_clock,
        log_text=lambda channel: channels[channel].routing.log_text if channel in channels
        else config.routing.log_text,
        protect=not isinstance(inner, KeywordClassifier),
        budget=parts.state.budget, budget_clock=parts.clock if parts.state.shared else None,
    )
    rules = build_all_rules(config, lists_agents)
    router = Router(config, classifier, parts.state.conversations, rules, parts.state.switches)
    leg = parts.leg or _leg(config, previous)
    signals = AgentSignals(config, router, _tokens(config, previous), released=parts.accounting.released)
    dispatcher = Dispatcher(config, router, parts.state.deliveries, leg, parts.clock, parts.recorder,
                            accounting=parts.accounting, signals=signals, steps=parts.state.steps,
                            lease_s=config.state.claim_lease_s if parts.state.shared else None)
    app = create_app(config, dispatcher.handle, rejected=parts.accounting.rejected)
    return Runtime(config, digest or config_digest(config), loaded_at, rules, router, classifier, line, dispatcher, app,
                   leg)


def _tokens(config: Config, previous: Runtime | None) -> ConversationTokens:
    """`previous`' conversation tokens while `[hints] secret` is unchanged (a per-process random
    secret survives a reload, so tokens already handed to agents stay valid), else new ones."""
    if previous is not None and previous.config.hints.secret == config.hints.secret:
        return previous.dispatcher.signals.tokens
    return ConversationTokens(config.hints.secret)


def _leg(config: Config, previous: Runtime | None) -> Forwarding:
    """`previous`' leg (and its pools) when its settings are the same, else a new one."""
    own = _channel_deadlines(config)
    if previous is not None and previous.config.upstream == config.upstream and (
            previous.config.server.trusted_proxies == config.server.trusted_proxies) and (
            _channel_deadlines(previous.config) == own):
        return previous.leg
    return Leg(config.upstream, config.server, channels=own)


def _channel_deadlines(config: Config) -> dict[str, UpstreamSettings]:
    """The channels with deadlines of their own (`[channels.<name>.upstream]`)."""
    return {name: channel.upstream for name, channel in config.channels.items() if channel.upstream is not None}
