"""Service: the running proxy assembled from a Config (classifier, state, router, leg, apps).

    service = Service(config)
    service.public_app()   the webhook ASGI app (its lifespan starts and closes the service)
    service.admin_app()    the admin ASGI app
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import AsyncIterator, Callable, Mapping

import httpx
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from starlette.applications import Starlette

from proxy import clock as wall_clock
from proxy.admin.app import create_admin_app
from proxy.channels import lists_agents
from proxy.classifier.factory import build_classifier
from proxy.classifier.guard import GuardedClassifier
from proxy.classifier.keywords import KeywordClassifier
from proxy.classifier.stats import ClassifierStats
from proxy.config.model import Channel, Config
from proxy.forwarding.app import create_app
from proxy.forwarding.dispatch import Dispatcher, RecordHook
from proxy.forwarding.inbound import Inbound
from proxy.forwarding.leg import Forwarding, Leg
from proxy.reply import Reply
from proxy.routing.router import Router, reason_counts
from proxy.routing.rules import build_all_rules, global_scorer
from proxy.server.upstream_stats import upstream_snapshot
from proxy.state.build import build_state

__all__ = ["Service"]

log = logging.getLogger("stickyroute")


class Service:
    """Everything one running config needs; `start()` inside the event loop, `aclose()` after.

    `clock` (seconds, wall time) drives routes and deliveries; `guard_clock` (seconds,
    monotonic by default) the classifier's budget, breaker and latency; tests pass fake clocks
    for both. `leg` replaces the aiohttp forwarding leg (unit tests); `groq_http_client` is
    handed to the Groq classifier (respx in tests). State comes from `config.state` (memory, or
    Redis behind the per-process memory fallback); with Redis the classifier budget is shared
    and asked on `clock` (the replicas' common wall clock). `registry` holds every metric of
    the service (classifier, state health) for /metrics.
    """

    def __init__(self, config: Config, env: Mapping[str, str] | None = None,
                 groq_http_client: httpx.AsyncClient | None = None,
                 clock: Callable[[], float] = wall_clock.now,
                 guard_clock: Callable[[], float] | None = None,
                 recorder: RecordHook | None = None,
                 leg: Forwarding | None = None) -> None:
        self.config = config
        self.registry = CollectorRegistry(auto_describe=True)
        self.stats = ClassifierStats(registry=self.registry)
        self.state = build_state(config, self.registry)
        guard_clock = guard_clock or wall_clock.monotonic
        scorer = global_scorer(config)
        inner, self.classifier_line = build_classifier(
            config.classifier, scorer.scores, config.routing.confidence_threshold,
            os.environ if env is None else env, http_client=groq_http_client, config_path=config.path,
            clock=guard_clock,
        )
        self.classifier = GuardedClassifier(
            inner, config.classifier, self.stats, guard_clock,
            log_text=lambda channel: config.channels[channel].routing.log_text if channel in config.channels
            else config.routing.log_text,
            protect=not isinstance(inner, KeywordClassifier),
            budget=self.state.budget, budget_clock=clock if self.state.shared else None,
        )
        self.conversations = self.state.conversations
        self.deliveries = self.state.deliveries
        self.router = Router(config, self.classifier, self.conversations, build_all_rules(config, lists_agents))
        self._clock = clock
        self._recorder = recorder
        self._leg = leg
        self.dispatcher: Dispatcher | None = None

    async def start(self) -> Dispatcher:
        """Create the forwarding leg (its pools need a running loop) and the dispatcher."""
        if self.dispatcher is None:
            await self.state.start()
            leg = self._leg or Leg(self.config.upstream, self.config.server)
            self.dispatcher = Dispatcher(self.config, self.router, self.deliveries, leg, self._clock, self._recorder)
            log.info("%s", self.classifier_line)
        return self.dispatcher

    async def aclose(self) -> None:
        """Close the forwarding pools, the classifier's client and the state backends."""
        if self.dispatcher is not None:
            await self.dispatcher.late.aclose()
            await self.dispatcher.leg.aclose()
        await self.classifier.aclose()
        await self.state.aclose()

    def ready(self) -> bool:
        """True once the config is loaded and the forwarding leg exists."""
        return self.dispatcher is not None

    def readiness(self) -> str:
        """"ready", "not ready" (not started) or "degraded" (the shared state backend does not
        answer: serving on the memory fallback) for /readyz."""
        if not self.ready():
            return "not ready"
        return "ready" if self.state.health.up else "degraded"

    async def stats_snapshot(self) -> dict[str, object]:
        """JSON-able stats: classifier accounting, decisions per reason, live routes per channel,
        the delivery log's size and bound, and the forwarding leg's failures and pools."""
        now = self._clock()
        return {
            "classifier": {"provider": self.classifier.name, **self.stats.snapshot()},
            "decisions": reason_counts(self.router),
            "routes": {name: await self.conversations.count(name, now) for name in self.config.channels},
            "state": {"backend": self.config.state.backend, "up": self.state.health.up},
            "deliveries": {
                "stored": await self.deliveries.size(now),
                "stored_bytes": await self.deliveries.stored_bytes(now),
                "max_bytes": self.config.state.delivery_log_max_bytes if not self.state.shared else None,
                "ttl_s": self.config.state.delivery_ttl_hours * 3600.0,
            },
            "upstream": upstream_snapshot(self.dispatcher),
        }

    def metrics(self) -> tuple[bytes, str]:
        """Prometheus text exposition of the service's metrics (classifier, state health)."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def public_app(self) -> Starlette:
        """The webhook ASGI app; its lifespan starts and closes the service."""

        @contextlib.asynccontextmanager
        async def lifespan(_app: Starlette) -> AsyncIterator[None]:
            await self.start()
            try:
                yield
            finally:
                await self.aclose()

        return create_app(self.config, self.handle, lifespan=lifespan)

    async def handle(self, channel: Channel, inbound: Inbound) -> Reply:
        """Dispatch one request (starting the service on first use when no lifespan ran)."""
        dispatcher = self.dispatcher or await self.start()
        return await dispatcher.handle(channel, inbound)

    def admin_app(self) -> Starlette:
        """The admin ASGI app (health, readiness, stats, metrics)."""
        return create_admin_app(self.stats_snapshot, self.readiness, self.metrics)
