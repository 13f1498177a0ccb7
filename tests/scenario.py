"""Scenario helper for routing tests: play message sequences with timestamps through `Router`.

Shapes:
- `make_config(strategy, **routing) -> Config` builds a one-channel config from the dataclasses
  (no TOML), with the agent roster `AGENTS` unless `roster=` is given (`DESK_ROSTER`: the same
  plus a non-sticky `weather` agent and a human desk `humans`, issue #22).
- `text(...)`, `photo(...)`, `edit(...)`, `button(...)`, `status(...)` build envelopes; ids are
  normalised strings, a private chat's id is the sender's id.
- `ScriptedClassifier(answers)` implements the `Classifier` protocol from an answer table
  `{text: answer}`, a callable `request -> answer`, or one answer for everything, and records
  every `ClassificationRequest` in `.calls`. An answer is a raw string (parsed strictly with
  `parse_answer` against the request's candidates, as a real classifier does), `None` (none),
  an `Outcome` (ERROR / BUDGET / OPEN), or a ready `Classification`. `hold(text)` makes the
  classification of `text` wait until released (concurrency tests).
- `Playbook(config, classifier)` plays envelopes through the pure engine: `engine.decide` on
  the conversation's route, the scripted classifier when the engine asks, `engine.conclude`,
  then the decision's writes applied to a plain dict of routes (a route is live while
  `now < Route.expires_at(ttl_s)`: `last_active + ttl_s`, or a human desk's hold when longer). `send(item, after_s)` advances its `FakeClock` (seconds) by
  `after_s`, then decides; `play(steps)` sends a sequence of `item` or `(after_s, item)` and
  returns `[(agent, reason), ...]`; `seed(...)` writes a route as if set `age_s` seconds ago;
  `route(...)` / `state(...)` read the live route at the clock; `signal(signal)` applies an
  agent's hint or handoff (issue #12) to the route. Engine tests use it.
- `Scenario(config, classifier)` has the same interface (async `seed`, `route`, `state`,
  `routes`) over the real `Router` and the memory state backend: router tests use it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from stickyroute import channels
from stickyroute.classifier.base import Candidate, Classification, ClassificationRequest, Outcome, parse_answer
from stickyroute.clock import FakeClock
from stickyroute.config.model import (
    Agent,
    Binding,
    Channel,
    ChannelType,
    ClassifierSettings,
    Config,
    RoutingSettings,
    Strategy,
    ThreadRoute,
)
from stickyroute.core.route import ConversationKey, Route
from stickyroute.routing.engine import Decision, NeedsClassification, NeedsPermit, conclude, decide
from stickyroute.routing.envelope import Envelope, MessageKind
from stickyroute.routing.router import Router
from stickyroute.routing.rules import ChannelRules, build_all_rules
from stickyroute.routing.signals import Ignored, Released, Signal, apply_signal
from stickyroute.state.base import limits_for
from stickyroute.state.budget import MemorySwitchBudget
from stickyroute.state.memory import MemoryConversationState
from tests.state.routes import RoutesUnderTest

CHANNEL = "telegram"
USER = "111"
OTHER_USER = "222"
GROUP = "-1001000000001"
OTHER_GROUP = "-1001000000002"
T0 = 1_700_000_000.0
MIN = 60.0
TTL_S = 30 * MIN


def _agent(name: str, *, aliases: tuple[str, ...] = (), keywords: tuple[str, ...] = (),
           weak: tuple[str, ...] = (), hidden: bool = False, sticky: bool = True, human: bool = False,
           hold_s: float = 24 * 3600.0) -> Agent:
    return Agent(name=name, url=f"http://127.0.0.1:9/{name}", description=f"the {name} agent",
                 aliases=aliases, keywords=keywords, weak_keywords=weak, hidden=hidden, sticky=sticky, human=human,
                 hold_s=hold_s)


AGENTS: Mapping[str, Agent] = MappingProxyType({a.name: a for a in (
    _agent("general"),
    _agent("coder", keywords=("python", "bug", "refactor", "stack trace", "pull request"),
           weak=("code", "function", "script")),
    _agent("ops-agent", keywords=("k8s", "pods", "deploy", "kubernetes", "outage"), weak=("server", "logs")),
    _agent("debugger", keywords=("segfault", "core dump", "breakpoint"), weak=("crash",)),
    _agent("content-writer", keywords=("blog", "article", "headline", "newsletter"), weak=("draft", "tone")),
    _agent("billing", aliases=("accounts",), keywords=("invoice", "refund", "payment", "charged"),
           weak=("price",)),
    _agent("support", aliases=("helpdesk",), keywords=("password", "login", "locked out"), weak=("account",)),
    _agent("data-science", keywords=("regression",)),
    _agent("data-pipeline", keywords=("etl",)),
)})
"""The default roster: `general` is the channel default and has no keywords."""

HOLD_S = 4 * 3600.0
"""The hold of the `humans` desk in `DESK_ROSTER` (longer than `TTL_S`)."""
DESK_ROSTER: Mapping[str, Agent] = MappingProxyType({**AGENTS, **{a.name: a for a in (
    _agent("weather", keywords=("weather", "forecast", "rain", "umbrella"), sticky=False),
    _agent("humans", aliases=("person",), keywords=("complaint", "manager"), human=True, hold_s=HOLD_S),
)}})
"""`AGENTS` plus `weather` (sticky = false: a detour agent) and `humans` (a human desk, hold 4 h)."""


def agents(*specs: Agent) -> Mapping[str, Agent]:
    """A roster from `agent(...)` specs (the channel default must be among them)."""
    return MappingProxyType({a.name: a for a in specs})


agent = _agent


def make_config(
    strategy: Strategy = Strategy.STICKY_HEURISTIC,
    *,
    platform: ChannelType = ChannelType.TELEGRAM,
    default: str = "general",
    roster: Mapping[str, Agent] = AGENTS,
    bindings: Sequence[Binding] = (),
    thread_routes: Sequence[ThreadRoute] = (),
    bot_username: str | None = "stickybot",
    context_messages: int = 0,
    classifier_timeout_s: float = 2.0,
    allowed: Sequence[str] | None = None,
    **routing: object,
) -> Config:
    """One channel named `CHANNEL` of `platform` reaching `allowed` (None: every agent);
    `routing` are `RoutingSettings` fields."""
    settings = RoutingSettings(strategy=strategy, **routing)  # type: ignore[arg-type]
    channel = Channel(
        name=CHANNEL, type=platform, paths=(f"/webhooks/{CHANNEL}",), default_agent=default,
        routing=settings, bindings=tuple(bindings), thread_routes=tuple(thread_routes),
        bot_username=bot_username, agents=tuple(allowed) if allowed is not None else None,
    )
    return Config(path="scenario.toml", agents=roster, channels=MappingProxyType({CHANNEL: channel}),
                  routing=settings, classifier=ClassifierSettings(context_messages=context_messages,
                                                                timeout_s=classifier_timeout_s))


# --- envelopes ------------------------------------------------------------------------------

def text(body: str, *, sender: str = USER, chat: str | None = None, thread: str | None = None) -> Envelope:
    """A text message (or a caption: adapters give both as `text`)."""
    return Envelope(CHANNEL, MessageKind.TEXT, sender_id=sender, chat_id=chat or sender,
                    thread_id=thread, text=body, sender_aliases=(sender,))


def photo(*, sender: str = USER, chat: str | None = None) -> Envelope:
    """A message without text (image, voice, sticker, reaction...)."""
    return Envelope(CHANNEL, MessageKind.NON_TEXT, sender_id=sender, chat_id=chat or sender,
                    sender_aliases=(sender,))


def edit(body: str, *, sender: str = USER, chat: str | None = None) -> Envelope:
    """An edit of an earlier message, with its new text."""
    return Envelope(CHANNEL, MessageKind.EDIT, sender_id=sender, chat_id=chat or sender, text=body,
                    sender_aliases=(sender,))


def button(data: str, *, sender: str = USER, chat: str | None = None) -> Envelope:
    """A button press whose callback data is `data`."""
    return Envelope(CHANNEL, MessageKind.BUTTON, sender_id=sender, chat_id=chat or sender, text=data,
                    sender_aliases=(sender,))


def status(*, recipient: str = USER, chat: str | None = None) -> Envelope:
    """A delivery status of a message sent to `recipient` (keyed on the recipient)."""
    return Envelope(CHANNEL, MessageKind.STATUS, sender_id=recipient, chat_id=chat or recipient,
                    sender_aliases=(recipient,))


def key(*, sender: str = USER, chat: str | None = None, thread: str | None = None) -> ConversationKey:
    """The conversation key of `sender` in `chat` (private chat by default)."""
    return ConversationKey(CHANNEL, chat or sender, thread, sender)


# --- classifier -----------------------------------------------------------------------------

Answer = str | None | Outcome | Classification


@dataclass(frozen=True, slots=True)
class _Hold:
    started: asyncio.Event
    release: asyncio.Event


class ScriptedClassifier:
    """A `Classifier` answering from a table or callable; records every request in `calls`."""

    name = "scripted"

    def __init__(self, answers: Mapping[str, Answer] | Callable[[ClassificationRequest], Answer] | Answer = None,
                 *, default: Answer = None) -> None:
        self._answers = answers
        self._default = default
        self.calls: list[ClassificationRequest] = []
        self._holds: dict[str, _Hold] = {}

    def hold(self, text_: str) -> tuple[asyncio.Event, asyncio.Event]:
        """Make the classification of `text_` wait: returns (started, release) events."""
        held = _Hold(asyncio.Event(), asyncio.Event())
        self._holds[text_] = held
        return held.started, held.release

    @property
    def texts(self) -> list[str]:
        """The texts classified so far, in call order."""
        return [c.text for c in self.calls]

    async def classify(self, request: ClassificationRequest) -> Classification:
        self.calls.append(request)
        held = self._holds.get(request.text)
        if held is not None:
            held.started.set()
            await held.release.wait()
        if callable(self._answers):
            answer = self._answers(request)
        elif isinstance(self._answers, Mapping):
            answer = self._answers.get(request.text, self._default)
        else:
            answer = self._answers
        return _classification(answer, request)


def _classification(answer: Answer, request: ClassificationRequest) -> Classification:
    if isinstance(answer, Classification):
        return answer
    if isinstance(answer, Outcome):
        return Classification(outcome=answer, error_kind="timeout" if answer is Outcome.ERROR else None)
    chosen = parse_answer(answer, request.candidates)
    if chosen is None:
        return Classification(outcome=Outcome.NONE, raw_answer=answer)
    return Classification(outcome=Outcome.AGENT, agent=chosen, raw_answer=answer)


# --- scenario -------------------------------------------------------------------------------

Item = str | Envelope
Step = Item | tuple[float, Item]


class _Base:
    """Clock, classifier and keyword-gate call counting shared by Playbook and Scenario."""

    def __init__(self, config: Config | None, classifier: ScriptedClassifier | None, start: float) -> None:
        self.config = config or make_config()
        self.clock = FakeClock(start)
        self.start = start
        self.classifier = classifier if classifier is not None else ScriptedClassifier()
        self.rules: dict[str, ChannelRules] = build_all_rules(self.config, channels.lists_agents)
        self.score_calls = 0
        scorer = self.rules[CHANNEL].scorer
        scores = scorer.scores

        def counted(text_: str) -> dict[str, int]:
            self.score_calls += 1
            return scores(text_)

        scorer.scores = counted  # type: ignore[method-assign]

    @property
    def now(self) -> float:
        return self.clock()

    @property
    def calls(self) -> int:
        """How many times the classifier was called."""
        return len(self.classifier.calls)

    async def decide(self, envelope: Envelope, now: float) -> Decision:
        raise NotImplementedError

    async def send(self, item: Item, after_s: float = 0.0) -> Decision:
        """Advance the clock by `after_s` seconds and decide `item` (a text or an envelope)."""
        self.clock.advance(after_s)
        envelope = text(item) if isinstance(item, str) else item
        return await self.decide(envelope, self.clock())

    async def play(self, steps: Sequence[Step]) -> list[tuple[str, str]]:
        """Send each step (`item` or `(after_s, item)`); the (agent, reason) of each decision."""
        out = []
        for step in steps:
            after_s, item = step if isinstance(step, tuple) else (0.0, step)
            decision = await self.send(item, after_s)
            out.append((decision.agent, decision.reason))
        return out

    def _seeded(self, agent_: str, age_s: float, idle_s: float | None, explicit: bool,
                candidate: str | None, counter: int) -> Route:
        now = self.clock()
        idle = age_s if idle_s is None else idle_s
        return Route(agent_, chosen_at=now - age_s, last_active=now - idle, explicit=explicit,
                     candidate=candidate, counter=counter)


def _state_of(route: Route | None) -> tuple[str, bool, str | None, int] | None:
    if route is None:
        return None
    return (route.agent, route.explicit, route.candidate, route.counter)


class Playbook(_Base):
    """The pure engine on a fake clock: `decide` / `conclude` and a dict of routes (no Router)."""

    def __init__(self, config: Config | None = None, classifier: ScriptedClassifier | None = None,
                 *, start: float = T0) -> None:
        super().__init__(config, classifier, start)
        self.routes: dict[ConversationKey, Route] = {}
        self.ttl_s = self.config.channels[CHANNEL].routing.ttl_s
        self.switches = MemorySwitchBudget()

    async def decide(self, envelope: Envelope, now: float) -> Decision:
        """Layer 2 only (the envelope's Layer-1 result is taken to be the default)."""
        rules = self.rules[CHANNEL]
        who = ConversationKey(CHANNEL, envelope.chat_id, envelope.thread_id, envelope.sender_id or "")
        outcome = decide(envelope, self._live(who, now), rules, now)
        if isinstance(outcome, NeedsPermit):
            rate = rules.settings.explicit_switches_per_minute
            allowed = await self.switches.take(CHANNEL, who.sender_id, rate, now)
            outcome = outcome.granted if allowed else outcome.refused
        elif isinstance(outcome, NeedsClassification):
            request = ClassificationRequest(CHANNEL, outcome.text, _candidates(self.config, rules), outcome.current)
            outcome = conclude(outcome, await self.classifier.classify(request), rules, now)
        if outcome.forget:
            self.routes.pop(who, None)
        elif outcome.store is not None:
            self.routes[who] = outcome.store
        return outcome

    def signal(self, signal: Signal, *, after_s: float = 0.0, version: float | None = None,
               sender: str = USER) -> Route | Released | Ignored:
        """Advance the clock by `after_s` and apply an agent's `signal` to the conversation of
        `sender` (`signals.apply_signal`): the route written, the release of a `done` (its route,
        or none, replaces the conversation's), or why it was ignored."""
        self.clock.advance(after_s)
        who = key(sender=sender)
        result = apply_signal(signal, self._live(who, self.clock()), version, self.rules[CHANNEL], self.clock())
        if isinstance(result, Route):
            self.routes[who] = result
        elif isinstance(result, Released):
            if result.route is None:
                self.routes.pop(who, None)
            else:
                self.routes[who] = result.route
        return result

    def _live(self, who: ConversationKey, now: float) -> Route | None:
        route = self.routes.get(who)
        return route if route is not None and now < route.expires_at(self.ttl_s) else None

    def seed(self, agent_: str, *, age_s: float = 0.0, idle_s: float | None = None, explicit: bool = False,
             candidate: str | None = None, counter: int = 0, sender: str = USER, chat: str | None = None,
             thread: str | None = None) -> Route:
        """Store a route chosen `age_s` seconds ago and last active `idle_s` (default `age_s`) ago."""
        route = self._seeded(agent_, age_s, idle_s, explicit, candidate, counter)
        self.routes[key(sender=sender, chat=chat, thread=thread)] = route
        return route

    def route(self, *, sender: str = USER, chat: str | None = None, thread: str | None = None) -> Route | None:
        """The live route of the conversation at the clock's time."""
        return self._live(key(sender=sender, chat=chat, thread=thread), self.clock())

    def state(self, **who: str | None) -> tuple[str, bool, str | None, int] | None:
        """(agent, explicit, candidate, counter) of the live route, or None."""
        return _state_of(self.route(**who))  # type: ignore[arg-type]

    def live_routes(self) -> int:
        """How many routes are live at the clock's time."""
        return sum(1 for who in self.routes if self._live(who, self.clock()) is not None)


def _candidates(config: Config, rules: ChannelRules) -> tuple[Candidate, ...]:
    """What the classifier may answer on the channel (as the Router offers it)."""
    return tuple(Candidate(a.name, a.description, a.aliases) for a in config.agents.values() if a.name in rules.agents)


class Scenario(_Base):
    """The real Router on a fake clock with the memory state backend and a scripted classifier."""

    def __init__(self, config: Config | None = None, classifier: ScriptedClassifier | None = None,
                 *, start: float = T0) -> None:
        super().__init__(config, classifier, start)
        self.conversations = RoutesUnderTest(MemoryConversationState(limits_for(self.config),
                                                                     self.config.classifier.context_messages))
        self.router = Router(self.config, self.classifier, self.conversations.backend, self.rules)

    async def decide(self, envelope: Envelope, now: float) -> Decision:
        return await self.router.decide(CHANNEL, envelope, now)

    async def seed(self, agent_: str, *, age_s: float = 0.0, idle_s: float | None = None, explicit: bool = False,
                   candidate: str | None = None, counter: int = 0, sender: str = USER, chat: str | None = None,
                   thread: str | None = None) -> Route:
        """Store a route chosen `age_s` seconds ago and last active `idle_s` (default `age_s`) ago."""
        route = self._seeded(agent_, age_s, idle_s, explicit, candidate, counter)
        await self.conversations.put(key(sender=sender, chat=chat, thread=thread), route, self.clock())
        return route

    async def route(self, *, sender: str = USER, chat: str | None = None, thread: str | None = None) -> Route | None:
        """The live route of the conversation at the clock's time."""
        return await self.conversations.get(key(sender=sender, chat=chat, thread=thread), self.clock())

    async def state(self, **who: str | None) -> tuple[str, bool, str | None, int] | None:
        """(agent, explicit, candidate, counter) of the live route, or None."""
        return _state_of(await self.route(**who))  # type: ignore[arg-type]

    async def live_routes(self) -> int:
        """How many routes are live at the clock's time."""
        return await self.conversations.count(CHANNEL, self.clock())
