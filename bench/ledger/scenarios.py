"""The fault scenarios and the harness that plays them against a real proxy process.

    row = await run(SCENARIOS["agent_down"], Load(rate=60, duration_s=2))

Every scenario: the shipped config (agents coder, support, ops, writer; support is both channels'
default) against four fake agents and a fake Groq; Telegram and WhatsApp traffic at `rate`
updates/s for `duration_s`; the fault acts during the middle of the run and heals before its end;
then the platforms retry until every update is acknowledged (or `drain_s` passes) and the ledger
counts. Deadlines are short so a run takes seconds: the proxy answers 504 after 0.25 + 0.75 s,
keeps a late answer for 10 s more, and waits 0.3 s for the classifier.

Rule: 0 lost and 0 duplicated in every scenario, except two. The memory-backend restart's
duplicates are what a restart costs (reported, not hidden). A SIGKILL with the Redis backend
(`proxy_killed_redis`, `replica_killed`) keeps the crash rule (`Ledger.crash_rule`): duplicates
only among the updates in flight at the kill, each to the same agent, redelivered within the
claim lease plus `CRASH_MARGIN_S`. Redis scenarios run when the config loader accepts `[state]
backend = "redis"`; until then their row says so and nothing is faked.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp

from bench.ledger.agents import OK, FakeAgent, Mode
from bench.ledger.book import Counts, Ledger
from bench.ledger.groq import FakeGroq
from bench.ledger.platforms import MetaApp, TelegramBot
from bench.ledger.proxy import APP_SECRET, TELEGRAM_SECRET, ProxyProcess, free_port, write_config
from bench.ledger.traffic import Traffic

AGENTS = ("coder", "support", "ops", "writer")
DEADLINES = {"upstream": {"connect_timeout_s": 0.25, "timeout_s": 0.75, "late_answer_s": 10.0},
             "classifier": {"timeout_s": 0.3}}
ANSWER_S = 1.0
CLAIM_LEASE_S = 5.0
"""`[state] claim_lease_s` of the Redis scenarios (the product default)."""
CRASH_MARGIN_S = 7.0
"""The crash rule's margin past the lease: the platforms' longest retry delay here (2 s) and the
platform's patience for one attempt (5 s), the bound on how long a retry waits in the proxy."""
KEYWORDS = {"coder": ("python", "function", "unit test", "refactor"), "ops": ("kubernetes", "deploy", "docker", "ci "),
            "support": ("invoice", "refund", "login", "order", "delivery"),
            "writer": ("blog", "email", "proofread", "announcement")}


def groq_answer(text: str, names: list[str]) -> str:
    """The fake classifier's answer: the agent whose words the text has, else none."""
    lowered = text.lower()
    for agent, words in KEYWORDS.items():
        if agent in names and any(w in lowered for w in words):
            return agent
    return "none"


@dataclass(frozen=True)
class Load:
    """Traffic of one run: updates per second, seconds, senders over chats, drain bound."""

    rate: float = 60.0
    duration_s: float = 3.0
    senders: int = 200
    chats: int = 10
    drain_s: float = 60.0
    seed: int = 7


@dataclass
class Row:
    """One line of the fault table."""

    scenario: str
    counts: Counts | None
    note: str = ""
    restarts: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    broken: list[str] | None = None
    """Duplicates outside the crash rule (a Redis-backend kill), None where the rule is 0 duplicates."""

    @property
    def outside_rule(self) -> int:
        """Duplicates the scenario's rule does not allow."""
        if self.counts is None or self.scenario == "proxy_killed_memory":
            return 0
        return len(self.broken) if self.broken is not None else self.counts.duplicated

    @property
    def ok(self) -> bool:
        if self.counts is None:
            return True
        c = self.counts
        return c.lost == 0 and c.pending == 0 and c.misrouted == 0 and self.outside_rule == 0


class Harness:
    """Agents, Groq, one or more proxy processes on one config, the platforms and the ledger."""

    def __init__(self, load: Load, extra: dict[str, dict[str, Any]] | None = None, replicas: int = 1,
                 folder: Path | None = None, short_deadlines: bool = True) -> None:
        self.load = load
        self.extra = {**(DEADLINES if short_deadlines else {}), **(extra or {})}
        self.replicas = replicas
        self.ledger = Ledger()
        self._t0 = time.monotonic()
        self.agents = {name: FakeAgent(name, self.ledger, self.clock) for name in AGENTS}
        self.groq = FakeGroq(groq_answer, slow_s=2.0)
        self.proxies: list[ProxyProcess] = []
        self.kills: list[float] = []
        """When a proxy process was SIGKILLed (the ledger's clock)."""
        self.back: list[float] = []
        """When a proxy served again after each kill (its restart was ready, or at once: a replica)."""
        self.folder = folder
        self._temp: tempfile.TemporaryDirectory[str] | None = None

    def clock(self) -> float:
        return time.monotonic() - self._t0

    async def __aenter__(self) -> Harness:
        if self.folder is None:
            self._temp = tempfile.TemporaryDirectory(prefix="stickyroute-ledger-")
            self.folder = Path(self._temp.name)
        for agent in self.agents.values():
            await agent.start()
        await self.groq.start()
        urls = {name: agent.url for name, agent in self.agents.items()}
        for index in range(self.replicas):
            port, admin = free_port(), free_port()
            path = write_config(self.folder, urls, port, admin, self.groq.url, self.extra, name=f"proxy{index}.toml")
            proxy = ProxyProcess(path, port, admin, self.folder / f"proxy{index}.log")
            await proxy.start()
            self.proxies.append(proxy)
        self.session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=200))
        bases = [p.url for p in self.proxies]
        self.telegram = TelegramBot(self.session, [b + "/telegram" for b in bases], self.ledger, self.clock,
                                    TELEGRAM_SECRET, timeout_s=5.0)
        self.meta = MetaApp(self.session, [b + "/whatsapp" for b in bases], self.ledger, self.clock, APP_SECRET,
                            timeout_s=5.0)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.telegram.aclose()
        await self.meta.aclose()
        await self.session.close()
        for proxy in self.proxies:
            proxy.stop()
        for agent in self.agents.values():
            await agent.stop()
        await self.groq.stop()
        if self._temp is not None:
            self._temp.cleanup()

    async def play(self, on_tick: Callable[[float], None] | None = None) -> None:
        """Send `load.rate` updates per second for `load.duration_s` seconds."""
        traffic = Traffic(self.load.senders, self.load.chats, seed=self.load.seed)
        start = self.clock()
        sent = 0
        while (elapsed := self.clock() - start) < self.load.duration_s:
            due = int(elapsed * self.load.rate)
            while sent < due:
                update = traffic.next()
                (self.telegram if update.platform == "telegram" else self.meta).push(update)
                sent += 1
            if on_tick is not None:
                on_tick(elapsed)
            await asyncio.sleep(0.005)

    async def finish(self) -> Counts:
        """Let the platforms retry until every update is acknowledged, then count."""
        await self.telegram.drain(self.load.drain_s)
        await self.meta.drain(self.load.drain_s)
        await asyncio.sleep(0.5)  # receipts of answers still on the wire
        return self.ledger.counts(self.telegram.retrying | self.meta.retrying)

    def at(self, fraction: float) -> float:
        return self.load.duration_s * fraction


Fault = Callable[[Harness], Awaitable[None]]


@dataclass(frozen=True)
class Scenario:
    name: str
    what: str
    fault: Fault
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    replicas: int = 1
    redis: bool = False


async def _window(h: Harness, start: Callable[[], Any], end: Callable[[], Any], begin: float = 0.25,
                  length: float = 0.4) -> None:
    await asyncio.sleep(h.at(begin))
    result = start()
    if asyncio.iscoroutine(result):
        await result
    await asyncio.sleep(h.at(length))
    result = end()
    if asyncio.iscoroutine(result):
        await result


def _mode(agent: str, mode: Mode) -> Fault:
    async def fault(h: Harness) -> None:
        def start() -> None:
            h.agents[agent].mode = mode

        def end() -> None:
            h.agents[agent].mode = OK

        await _window(h, start, end)
    return fault


def _groq(mode: str) -> Fault:
    async def fault(h: Harness) -> None:
        def start() -> None:
            h.groq.mode = mode

        def end() -> None:
            h.groq.mode = "ok"

        await _window(h, start, end)
    return fault


async def _none(_h: Harness) -> None:
    return None


async def _agent_down(h: Harness) -> None:
    await _window(h, h.agents["support"].down, h.agents["support"].up)


async def _kill_and_restart(h: Harness) -> None:
    await asyncio.sleep(h.at(0.4))
    h.kills.append(h.clock())
    h.proxies[0].kill()
    await asyncio.sleep(0.3)
    await h.proxies[0].start()
    h.back.append(h.clock())


async def _kill_one_replica(h: Harness) -> None:
    await asyncio.sleep(h.at(0.4))
    h.kills.append(h.clock())
    h.back.append(h.kills[-1])  # the other replica serves on
    h.proxies[-1].kill()


SCENARIOS: dict[str, Scenario] = {s.name: s for s in [
    Scenario("no_fault", "no fault (baseline)", _none),
    Scenario("agent_down", "the default agent down for 40% of the run (502, retries), then back", _agent_down),
    Scenario("agent_slow", "the default agent answers after the proxy's deadline (504, late answers kept)",
             _mode("support", Mode(delay_s=ANSWER_S * 1.6))),
    Scenario("agent_500", "the default agent answers 500", _mode("support", Mode(status=500))),
    Scenario("agent_429", "the default agent answers 429", _mode("support", Mode(status=429))),
    Scenario("agent_reset", "the default agent resets the connection", _mode("support", Mode(reset=True))),
    Scenario("classifier_down", "the classifier answers 503", _groq("down")),
    Scenario("classifier_slow", "the classifier answers after its timeout", _groq("slow")),
    Scenario("classifier_garbage", "the classifier answers something that is not a completion", _groq("garbage")),
    Scenario("proxy_killed_memory", "the proxy SIGKILLed and restarted mid-run, memory backend (state lost)",
             _kill_and_restart),
    Scenario("proxy_killed_redis", "the proxy SIGKILLed and restarted mid-run, Redis backend", _kill_and_restart,
             redis=True),
    Scenario("redis_restarted", "Redis restarted mid-run", _none, redis=True),
    Scenario("replica_killed", "two replicas on one Redis, one SIGKILLed mid-run", _kill_one_replica, replicas=2,
             redis=True),
]}


def redis_config(url: str, prefix: str) -> dict[str, dict[str, Any]]:
    return {"state": {"backend": "redis", "url": url, "key_prefix": prefix, "claim_lease_s": CLAIM_LEASE_S}}


def redis_available() -> str | None:
    """None when the config loader accepts `[state] backend = "redis"`, else why not."""
    from stickyroute.config import check_config

    with tempfile.TemporaryDirectory() as tmp:
        urls = dict.fromkeys(AGENTS, "http://127.0.0.1:9")
        path = write_config(Path(tmp), urls, free_port(), free_port(), "http://127.0.0.1:9",
                            redis_config("redis://127.0.0.1:6379/0", "stickyroute-ledger:"))
        config, problems = check_config(path, env={"GROQ_API_KEY": "x"})
    errors = [str(p).split(": ", 1)[1] for p in problems if not p.warning]
    return None if config is not None and not errors else "; ".join(errors)


@contextlib.asynccontextmanager
async def _redis_server() -> AsyncIterator[tuple[str, Callable[[], Awaitable[None]]]]:
    """A private redis-server on a free port; yields its URL and a restart function."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise RuntimeError("redis-server is not installed")
    port = free_port()
    command = [binary, "--port", str(port), "--save", "", "--appendonly", "no", "--bind", "127.0.0.1"]
    holder = {"p": subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)}
    await asyncio.sleep(0.3)

    async def restart() -> None:
        holder["p"].terminate()
        holder["p"].wait(10)
        await asyncio.sleep(0.3)
        holder["p"] = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        await asyncio.sleep(0.3)

    try:
        yield f"redis://127.0.0.1:{port}/0", restart
    finally:
        holder["p"].terminate()
        holder["p"].wait(10)


async def run(scenario: Scenario, load: Load) -> Row:
    """Play `scenario` under `load`; a Redis scenario without a Redis backend is a pending row."""
    if scenario.redis:
        why = redis_available()
        if why is not None:
            return Row(scenario.name, None, f"pending: Redis backend not available ({why})")
        async with _redis_server() as (url, restart):
            extra = {**scenario.extra, **redis_config(url, f"ledger-{scenario.name}:")}
            fault = scenario.fault
            if scenario.name == "redis_restarted":
                async def fault(h: Harness) -> None:
                    await asyncio.sleep(h.at(0.4))
                    await restart()
            return await _play(scenario, load, extra, fault)
    return await _play(scenario, load, scenario.extra, scenario.fault)


async def _play(scenario: Scenario, load: Load, extra: dict[str, dict[str, Any]], fault: Fault) -> Row:
    async with Harness(load, extra, replicas=scenario.replicas) as h:
        injector = asyncio.ensure_future(fault(h))
        await h.play()
        await injector
        counts = await h.finish()
        restarts = sum(p.starts - 1 for p in h.proxies)
        extra_info = {"platform_answers": dict(h.telegram.statuses + h.meta.statuses),
                      "agent_requests": {n: a.requests for n, a in h.agents.items()}, "groq_calls": dict(h.groq.calls),
                      "kills": list(h.kills), "back": list(h.back)}
        broken = (h.ledger.crash_rule(h.kills, CLAIM_LEASE_S, CRASH_MARGIN_S, h.back) if scenario.redis and h.kills
                  else None)
        return Row(scenario.name, counts, scenario.what, restarts, extra_info, broken)
