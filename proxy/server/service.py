"""Service: builds the running proxy from a Config (classifier, router, forwarder, apps) and
serves the webhook and admin listeners with uvicorn in one process."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any, AsyncIterator, Callable, Mapping

import httpx
import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from proxy import clock as wall_clock
from proxy.forwarding.app import create_admin_app, create_app
from proxy.classifier.factory import build_classifier
from proxy.classifier.guard import GuardedClassifier
from proxy.classifier.keywords import KeywordClassifier
from proxy.classifier.stats import ClassifierStats
from proxy.config.model import Config
from proxy.forwarding.dispatch import Dispatcher, Inbound, RecordHook
from proxy.forwarding.forwarder import Forwarder
from proxy.routing.keywords import KeywordScorer
from proxy.routing.router import Router, keyword_scorer, reason_counts

log = logging.getLogger("stickyroute")


def global_scorer(config: Config) -> KeywordScorer:
    """Keyword scorer with the global `[routing]` weights (used by the heuristic classifier)."""
    return keyword_scorer(config, config.routing)


class Service:
    """Everything one running config needs; `start()` inside the event loop, `aclose()` after.

    `clock` (seconds, wall time) drives routes and redeliveries; `guard_clock` (seconds,
    monotonic by default) the classifier's budget and breaker; tests pass fake clocks for both.
    `transport` replaces the production forwarding leg with an httpx transport.
    """

    def __init__(self, config: Config, env: Mapping[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None,
                 groq_http_client: httpx.AsyncClient | None = None,
                 clock: Callable[[], float] = wall_clock.now,
                 guard_clock: Callable[[], float] | None = None,
                 recorder: RecordHook | None = None) -> None:
        self.config = config
        self.stats = ClassifierStats()
        scorer = global_scorer(config)
        inner, self.classifier_line = build_classifier(
            config.classifier, scorer.scores, config.routing.confidence_threshold,
            os.environ if env is None else env, http_client=groq_http_client, config_path=config.path,
        )
        self.classifier = GuardedClassifier(
            inner, config.classifier, self.stats, guard_clock or wall_clock.monotonic,
            log_text=lambda channel: config.channels[channel].routing.log_text if channel in config.channels
            else config.routing.log_text,
            protect=not isinstance(inner, KeywordClassifier),
        )
        self.router = Router(config, self.classifier)
        self._transport = transport
        self._clock = clock
        self._recorder = recorder
        self.forwarder: Forwarder | None = None
        self.dispatcher: Dispatcher | None = None

    async def start(self) -> Dispatcher:
        """Create the pooled upstream client (needs a running loop) and the dispatcher."""
        if self.dispatcher is None:
            self.forwarder = Forwarder(self.config.upstream, transport=self._transport)
            self.dispatcher = Dispatcher(self.config, self.router, self.forwarder, self._clock, self._recorder)
            log.info("%s", self.classifier_line)
        return self.dispatcher

    async def aclose(self) -> None:
        """Close the upstream client and the classifier's client."""
        if self.forwarder is not None:
            await self.forwarder.aclose()
        await self.classifier.aclose()

    def ready(self) -> bool:
        """True once the config is loaded and the upstream client exists."""
        return self.dispatcher is not None

    def stats_snapshot(self) -> dict[str, Any]:
        """JSON-able stats: classifier accounting, decisions per reason, live routes per channel."""
        return {
            "classifier": {"provider": self.classifier.name, **self.stats.snapshot()},
            "decisions": reason_counts(self.router),
            "routes": {name: len(self.router.store(name)) for name in self.config.channels},
        }

    def metrics(self) -> tuple[bytes, str]:
        """Prometheus text exposition of the classifier metrics."""
        return generate_latest(self.stats.registry), CONTENT_TYPE_LATEST

    def public_app(self) -> Any:
        """The webhook ASGI app; its lifespan starts and closes the service."""

        @contextlib.asynccontextmanager
        async def lifespan(_app: Any) -> AsyncIterator[None]:
            await self.start()
            try:
                yield
            finally:
                await self.aclose()

        return create_app(self.config, self.handle, lifespan=lifespan)

    async def handle(self, channel: Any, inbound: Inbound) -> Any:
        """Dispatch one request (starting the service on first use when no lifespan ran)."""
        dispatcher = self.dispatcher or await self.start()
        return await dispatcher.handle(channel, inbound)

    def admin_app(self) -> Any:
        """The admin ASGI app (health, readiness, stats, metrics)."""
        return create_admin_app(self.stats_snapshot, self.ready, self.metrics)


async def serve(config: Config, host: str | None = None, port: int | None = None,
                recorder: RecordHook | None = None, demo: bool = False) -> None:
    """Run the webhook listener and the admin listener (and, with `demo`, the demo agents of
    `proxy.server.demo`) until interrupted."""
    service = Service(config, recorder=recorder)
    server = config.server
    public = uvicorn.Config(
        service.public_app(), host=host or server.host, port=port or server.port,
        ssl_certfile=server.ssl_certfile, ssl_keyfile=server.ssl_keyfile,
        log_level="info", access_log=False, proxy_headers=False, lifespan="on",
        server_header=False, date_header=False,
    )
    admin = uvicorn.Config(service.admin_app(), host=config.admin.host, port=config.admin.port,
                           log_level="warning", access_log=False, lifespan="off")
    servers = [uvicorn.Server(public), uvicorn.Server(admin)]
    if demo:
        from proxy.server.demo import demo_servers

        extra = demo_servers(config)
        log.info("demo agents: %s", ", ".join(f"{s.config.host}:{s.config.port}" for s in extra))
        servers += extra
    log.info("stickyroute: webhooks on %s:%s, admin on %s:%s", public.host, public.port, admin.host, admin.port)
    await asyncio.gather(*(s.serve() for s in servers))
