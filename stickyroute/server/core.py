"""ServiceCore: the running proxy assembled from a Config, across reloads (without its reload and
admin API, which `stickyroute.server.service.Service` adds on top: `reload.py` and `operations.py`
work on a ServiceCore, so neither needs the module that ties them together).

    core = ServiceCore(config)
    core.public_app()        the webhook ASGI app (`PublicApp`: lifespan, current runtime, drain)
    core.note_config()       publish the current runtime's hash and load time (metrics)

What outlives a config lives here (state backends, accounting, classifier statistics, the one
Prometheus registry); what a config decides lives in the current `Runtime` (`service.runtime`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping

import httpx
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from stickyroute import clock as wall_clock
from stickyroute.classifier.guard import GuardedClassifier
from stickyroute.classifier.stats import ClassifierStats
from stickyroute.config.digest import config_digest
from stickyroute.config.model import Config
from stickyroute.config.overrides import Overrides
from stickyroute.forwarding.dispatch import Dispatcher, RecordHook
from stickyroute.forwarding.leg import Forwarding
from stickyroute.observe import Accounting
from stickyroute.routing.router import Router
from stickyroute.server.demo import DemoAgents
from stickyroute.server.runtime import Parts, Runtime, build_runtime
from stickyroute.server.shell import PublicApp
from stickyroute.server.upstream_stats import leg_snapshot
from stickyroute.state.base import ConversationState, DeliveryLog
from stickyroute.state.build import build_state

__all__ = ["ServiceCore"]

log = logging.getLogger("stickyroute")


class ServiceCore:
    """Everything one running proxy needs; `start()` inside the event loop, `aclose()` after.

    `clock` (seconds, wall time) drives routes and deliveries; `guard_clock` (seconds,
    monotonic by default) the classifier's budget, breaker and latency; tests pass fake clocks
    for both. `leg` replaces the forwarding leg (unit tests); `groq_http_client` is
    handed to the Groq classifier (respx in tests). State comes from `config.state` (memory, or
    Redis behind the per-process memory fallback); with Redis the classifier budget is shared
    and asked on `clock`. `registry` holds every metric of the service. `config` is the file's
    config; `overrides` (`serve --host/--port/--admin-port`) are applied to it and to every config
    a reload loads, after the hash is taken (the hash is the file's, the overrides are shown
    apart); `config_env` resolves its `${VAR}`s (default os.environ). `demo` are the in-process demo
    agents (`serve --demo-agents`), paused and resumed through the admin API.
    """

    def __init__(self, config: Config, env: Mapping[str, str] | None = None,
                 groq_http_client: httpx.AsyncClient | None = None,
                 clock: Callable[[], float] = wall_clock.now,
                 guard_clock: Callable[[], float] | None = None,
                 recorder: RecordHook | None = None,
                 leg: Forwarding | None = None,
                 overrides: Overrides | None = None,
                 config_env: Mapping[str, str] | None = None,
                 demo: DemoAgents | None = None) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.stats = ClassifierStats(registry=self.registry)
        self.state = build_state(config, self.registry)
        self.accounting = Accounting(self.registry, clock)
        self.parts = Parts(self.state, self.stats, self.accounting, clock, guard_clock or wall_clock.monotonic,
                           env, groq_http_client, recorder, leg)
        self.clock = clock
        self.overrides = overrides or Overrides()
        self.adjust = self.overrides.apply
        self.config_env = config_env
        self.demo = demo
        self.runtime = build_runtime(self.adjust(config), self.parts, clock(), digest=config_digest(config))
        self.retiring: set[asyncio.Task[None]] = set()
        """Closing what replaced runtimes used alone, once their last request ends."""
        self._retired: list[Runtime] = []
        """Replaced runtimes whose pools and classifier are not closed yet."""
        self.reload_lock = asyncio.Lock()
        self.rolling_restart: Callable[[], None] | None = None
        """Set in worker processes: a validated reload restarts every worker (uvicorn's SIGHUP)."""
        self.started = False
        self.draining = False
        self._public: PublicApp | None = None
        self.note_config()

    # --- the current runtime's parts (tests and the admin API read them) ---------------------

    @property
    def config(self) -> Config:
        return self.runtime.config

    @property
    def router(self) -> Router:
        return self.runtime.router

    @property
    def classifier(self) -> GuardedClassifier:
        return self.runtime.classifier

    @property
    def dispatcher(self) -> Dispatcher | None:
        """The current dispatcher once started (None before)."""
        return self.runtime.dispatcher if self.started else None

    @property
    def conversations(self) -> ConversationState:
        return self.state.conversations

    @property
    def deliveries(self) -> DeliveryLog:
        return self.state.deliveries

    # --- life cycle ------------------------------------------------------------------------

    async def start(self) -> Dispatcher:
        """Ping the state backend (degraded is not an error) and mark the service started."""
        if not self.started:
            await self.state.start()
            self.started = True
        return self.runtime.dispatcher

    async def aclose(self) -> None:
        """Close the forwarding pools and classifier clients (the replaced runtimes' too), and the
        state backends."""
        self.accounting.ring.close()
        for task in list(self.retiring):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for runtime in (*self._retired, self.runtime):
            await runtime.dispatcher.late.aclose()  # late answers still awaited: given up
        legs = {id(r.leg): r.leg for r in (*self._retired, self.runtime)}
        classifiers = {id(r.classifier): r.classifier for r in (*self._retired, self.runtime)}
        self._retired.clear()
        for leg in legs.values():
            await leg.aclose()
        for classifier in classifiers.values():
            await classifier.aclose()
        await self.state.aclose()

    def retire(self, old: Runtime, after_idle: Callable[[], Awaitable[None]] | None = None) -> None:
        """Once `old` is idle: run `after_idle`, close the leg and classifier `old` used that no
        runtime still serving (the current one, another replaced one not idle yet) uses."""
        self._retired.append(old)

        async def close() -> None:
            await old.idle()
            if after_idle is not None:
                await after_idle()
            self._retired.remove(old)
            await old.dispatcher.late.aclose()
            live = [self.runtime, *self._retired]
            if all(r.leg is not old.leg for r in live):
                await old.leg.aclose()
            if all(r.classifier is not old.classifier for r in live):
                await old.classifier.aclose()

        task = asyncio.get_running_loop().create_task(close())
        self.retiring.add(task)
        task.add_done_callback(self.retiring.discard)

    def ready(self) -> bool:
        """True once started and not draining."""
        return self.started and not self.draining

    def readiness(self) -> str:
        """"ready", "not ready" (not started), "draining" (shutting down) or "degraded" (the
        shared state backend does not answer: serving on the memory fallback) for /readyz."""
        if not self.started:
            return "not ready"
        if self.draining:
            return "draining"
        return "ready" if self.state.health.up else "degraded"

    def note_config(self) -> None:
        """Publish the current runtime's config hash, path and load time (`stickyroute_config_*`)."""
        runtime = self.runtime
        self.accounting.metrics.config_info.info({"hash": runtime.digest, "path": runtime.config.path})
        self.accounting.metrics.config_loaded.set(runtime.loaded_at)

    # --- views ---------------------------------------------------------------------------

    async def stats_snapshot(self) -> dict[str, object]:
        """JSON-able stats, derived from the metrics' counters: the config, requests, decisions and
        switches per reason, upstream forwards, the delivery log, the classifier, live routes."""
        now = self.clock()
        metrics = self.accounting.metrics
        runtime = self.runtime
        return {
            "config": {"hash": runtime.digest, "path": runtime.config.path, "loaded_at": runtime.loaded_at,
                       "overrides": self.overrides.shown(), "reloads": metrics.reloads_view()},
            "requests": metrics.requests_view(),
            "decisions": metrics.decisions_view(),
            "switches": metrics.switches_view(),
            "upstream": metrics.upstream_view(),
            "forwarding": leg_snapshot(runtime.dispatcher),
            "delivery_log": {
                "size": await self.deliveries.size(now),
                "stored_bytes": await self.deliveries.stored_bytes(now),
                "max_bytes": runtime.config.state.delivery_log_max_bytes if not self.state.shared else None,
                "ttl_s": runtime.config.state.delivery_ttl_hours * 3600.0,
                "hits": metrics.hits_view(),
            },
            "classifier": {"provider": runtime.classifier.name, **self.stats.snapshot()},
            "routes": {name: await self.state.views.count(name, now) for name in runtime.config.channels},
            "state": self.state.health.snapshot(),
        }

    async def metrics(self) -> tuple[bytes, str]:
        """Prometheus text exposition of the service's metrics, the live-route and delivery-log
        gauges refreshed first."""
        now = self.clock()
        metrics = self.accounting.metrics
        for name in self.runtime.config.channels:
            metrics.conversations.labels(name).set(await self.state.views.count(name, now))
        metrics.deliveries.set(await self.deliveries.size(now))
        return generate_latest(self.registry), CONTENT_TYPE_LATEST

    def public_app(self) -> PublicApp:
        """The webhook ASGI app (one per service); its lifespan starts and closes the service."""
        if self._public is None:
            self._public = PublicApp(self)
        return self._public
