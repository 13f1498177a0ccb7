"""The parsed, validated configuration: small frozen dataclasses, units in the names.

Built once by `stickyroute.config.loader.load_config`; nothing else reads TOML. Secrets are kept out
of `repr` so a logged config never shows them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stickyroute.config.agent import Agent
from stickyroute.config.choices import AgentHints, ChannelType, Strategy
from stickyroute.config.listeners import MIB, AdminSettings, ServerSettings
from stickyroute.config.platform_api import PlatformApi

__all__ = ["DEFAULT_ACKNOWLEDGEMENTS", "MIB", "STATE_BACKENDS", "AdminSettings", "Agent", "AgentHints", "Binding",
           "Channel", "ChannelType", "ClassifierSettings", "Config", "HintSettings", "PlatformApi", "RoutingSettings",
           "ServerSettings", "StateSettings", "Strategy", "ThreadRoute", "UpstreamSettings"]

DEFAULT_ACKNOWLEDGEMENTS: tuple[str, ...] = (
    "ok", "okay", "k", "thanks", "thank you", "thx", "ty", "cool", "great", "nice",
    "got it", "sounds good", "👍",
)


@dataclass(frozen=True, slots=True)
class UpstreamSettings:
    """`[upstream]`: the forwarding leg's HTTP client (seconds, connections, bytes)."""

    connect_timeout_s: float = 5.0
    """To connect a socket, and to wait for a free connection of the agent's pool."""
    timeout_s: float = 30.0
    """With `connect_timeout_s`: the longest the platform waits for an agent's answer (then 504)."""
    max_connections: int = 100
    """Connections of each agent's own pool (`agents.<name>.max_connections` overrides it)."""
    max_reply_bytes: int = 5 * MIB
    """Largest agent reply body relayed; past it the status and headers are relayed with an empty body."""
    late_answer_s: float = 60.0
    """After a 504, how long the agent's late answer is still awaited and kept for the platform's
    retry (so the retry is answered, not forwarded twice); 0 cancels the request at the 504."""


@dataclass(frozen=True, slots=True)
class RoutingSettings:
    """Routing knobs of one channel: `[routing]` merged with `channels.<name>.overrides`.

    Times are seconds (`ttl_s` comes from `auto_route_ttl_minutes`). Scores are keyword points.
    The `first_message_margin`, `early_confirm_margin`, `keyword_switch_margin` knobs are opt-in
    (None = off) and leave the seed semantics unchanged when off.
    """

    strategy: Strategy = Strategy.OFF
    ttl_s: float = 30 * 60.0
    confidence_threshold: int = 6
    sticky_bonus: int = 4
    divergence_count: int = 2
    explicit_pin: bool = True
    short_message_chars: int = 15
    acknowledgements: tuple[str, ...] = DEFAULT_ACKNOWLEDGEMENTS
    strong_weight: int = 6
    weak_weight: int = 1
    max_conversations: int = 100_000
    log_text: bool = False
    first_message_margin: int | None = None
    """First message of a session: route by keywords alone (no classifier call) when the top
    agent's score is >= confidence_threshold and beats the runner-up by at least this margin."""
    early_confirm_margin: int | None = None
    """Ask the classifier at the first divergence (not waiting for divergence_count) when the
    candidate's raw score beats the current agent's effective score by at least this margin."""
    keyword_switch_margin: int | None = None
    """sticky_heuristic: at a divergence, switch to the candidate by keywords alone (reason
    `keywords`, no classifier call) when its score beats the runner-up's effective score (the
    current agent's score + sticky_bonus included) by at least this margin."""
    contest_confirm: bool = False
    """sticky_heuristic: ask the classifier when another agent (>= confidence_threshold) ties the
    current agent's effective score at the top, instead of counting it as agreement."""
    explicit_switches_per_minute: float = 10.0
    """Explicit switches (`/agent <name>`, `@name`) one sender may make per minute on a channel
    (a token bucket shared by the replicas); over it the switch is ignored (`explicit_limited`)."""
    agent_hints: AgentHints = AgentHints.CONFIRM
    """What an agent's `not-mine` hint does; `confirm` measured better than `divergence`."""
    agent_handoffs: bool = True
    """An agent's handoff switches the route at once (never over a user's explicit pin)."""
    agent_releases: bool = True
    """An agent's `done` releases the route (issue #22; a desk's `done` always ends its hold)."""


@dataclass(frozen=True, slots=True)
class Binding:
    """`[[channels.<name>.bindings]]`: exactly one of `user` or `chat` set (normalised id)."""

    agent: str
    user: str | None = None
    chat: str | None = None


@dataclass(frozen=True, slots=True)
class ThreadRoute:
    """`[[channels.<name>.thread_routes]]`: a forum topic of a chat pinned to an agent."""

    chat: str
    thread: str
    agent: str


@dataclass(frozen=True, slots=True)
class Channel:
    """`[channels.<name>]`: one inbound webhook endpoint of one platform."""

    name: str
    type: ChannelType
    paths: tuple[str, ...]
    default_agent: str
    routing: RoutingSettings = RoutingSettings()
    bindings: tuple[Binding, ...] = ()
    thread_routes: tuple[ThreadRoute, ...] = ()
    bot_username: str | None = None
    secret_token: str | None = field(default=None, repr=False)
    """Telegram `X-Telegram-Bot-Api-Secret-Token` value (setWebhook secret_token)."""
    app_secret: str | None = field(default=None, repr=False)
    """Meta app secret (WhatsApp, Messenger, Instagram): key of the `X-Hub-Signature-256` HMAC-SHA256."""
    verify_token: str | None = field(default=None, repr=False)
    """Meta GET verification `hub.verify_token` (WhatsApp, Messenger, Instagram)."""
    # Slack signing secret (X-Slack-Signature), Discord public key (X-Signature-Ed25519), LINE channel secret
    signing_secret: str | None = field(default=None, repr=False)
    public_key: str | None = field(default=None, repr=False)
    channel_secret: str | None = field(default=None, repr=False)
    agents: tuple[str, ...] | None = None
    """The agents reachable on this channel (`channels.<name>.agents`); None: every agent."""
    upstream: UpstreamSettings | None = None
    """`[channels.<name>.upstream]` merged over `[upstream]`; None: the global `[upstream]`."""
    api: PlatformApi = field(default_factory=PlatformApi)
    """The platform API credentials `stickyroute webhook` uses (never the proxy itself)."""

    def allows(self, agent: str) -> bool:
        """True when `agent` may be reached on this channel (its `agents` list, default all)."""
        return self.agents is None or agent in self.agents


@dataclass(frozen=True, slots=True)
class ClassifierSettings:
    """`[classifier]`: the intent classifier that confirms switches (seconds, calls)."""

    provider: str = "auto"
    """auto (groq when the API key is set, else keywords) | groq | keywords (alias heuristic)."""
    model: str = "llama-3.1-8b-instant"
    timeout_s: float = 2.0
    api_key_env: str = "GROQ_API_KEY"
    base_url: str | None = None
    context_messages: int = 0
    max_tokens: int = 8
    calls_per_minute: float = 60.0
    """Token-bucket ceiling of classifier calls per minute and channel."""
    breaker_failures: int = 5
    """Consecutive failures that open the circuit breaker."""
    breaker_cooldown_s: float = 30.0
    """How long an open breaker skips the classifier before letting one call through."""


STATE_BACKENDS: tuple[str, ...] = ("memory", "redis")
STATE_MODES: tuple[str, ...] = ("single", "cluster", "sentinel")
WHEN_UNAVAILABLE: tuple[str, ...] = ("memory", "refuse")


@dataclass(frozen=True, slots=True)
class StateSettings:
    """`[state]`: where routes, deliveries and the classifier budget live.

    `memory`: this process only (the default; one worker). `redis`: shared by every replica and
    worker at `url` (redis://, rediss:// or unix://; a password in the URL is kept out of repr),
    keys under `key_prefix` (one server, a Redis Cluster or a master behind Sentinel: `mode`);
    one Redis operation never holds a webhook longer than
    `op_timeout_ms` of the event loop's own time (a late reply is not an outage: its request
    answers 503 or routes from the last route seen). During a declared outage (refused, reset,
    or a late reply and a failed ping) `when_unavailable` says what deliveries get: `memory`
    (served from per-process memory, at-least-once) or `refuse` (503: the platforms hold them).
    Answered deliveries are remembered `delivery_ttl_hours` on both backends.
    """

    backend: str = "memory"
    url: str = field(default="redis://127.0.0.1:6379/0", repr=False)
    key_prefix: str = "stickyroute:"
    op_timeout_ms: float = 250.0
    when_unavailable: str = "memory"
    delivery_ttl_hours: float = 24.0
    """How long an answered delivery is remembered: a platform retry within it gets the stored
    answer instead of a second forward (Telegram retries for about a day; Meta up to 7 days)."""
    delivery_log_max_bytes: int = 64 * MIB
    """Memory backend: bound of the stored answers' total size (bytes); past it the least recently
    used answers are forgotten first, and a retry of a forgotten delivery is forwarded again."""
    claim_lease_s: float = 5.0
    """Redis backend: how long a delivery claim (and the conversation an attempt holds) lives
    without renewal (seconds). An attempt renews it every third of it while it forwards, so a
    replica that died frees its deliveries this long after its last renewal and the platform's
    retry is forwarded again, to the agent of the first decision."""
    mode: str = "single"
    """How Redis is deployed: `single` (one server at `url`), `cluster` (Redis Cluster; `url` is any
    seed node) or `sentinel` (the master named `master`, found through `sentinels`; `url` gives
    its scheme, password and database, its host is not used)."""
    sentinels: tuple[str, ...] = ()
    """`mode = "sentinel"`: the sentinels' "host:port" addresses."""
    master: str = ""
    """`mode = "sentinel"`: the monitored master's name (`sentinel monitor <name> ...`)."""

    @property
    def op_timeout_s(self) -> float:
        """`op_timeout_ms` in seconds."""
        return self.op_timeout_ms / 1000.0

    @property
    def shared(self) -> bool:
        """True when replicas and workers share the state (not the per-process memory backend)."""
        return self.backend != "memory"


@dataclass(frozen=True, slots=True)
class HintSettings:
    """`[hints]`: agent signals (issue #12): the conversation tokens' HMAC key and the agent API's
    rate per agent (calls per second)."""

    secret: str | None = field(default=None, repr=False)
    """None: a random secret per process (tokens die with it; replicas must share a set one)."""
    rate_per_s: float = 10.0


@dataclass(frozen=True, slots=True)
class Config:
    """The whole configuration file, validated."""

    path: str
    agents: Mapping[str, Agent]
    channels: Mapping[str, Channel]
    server: ServerSettings = field(default_factory=ServerSettings)
    admin: AdminSettings = field(default_factory=AdminSettings)
    upstream: UpstreamSettings = UpstreamSettings()
    routing: RoutingSettings = RoutingSettings()
    classifier: ClassifierSettings = ClassifierSettings()
    state: StateSettings = StateSettings()
    hints: HintSettings = HintSettings()

    def channel_for_path(self, path: str) -> Channel | None:
        """The channel whose `path`/`paths` equals `path` exactly, or None."""
        for channel in self.channels.values():
            if path in channel.paths:
                return channel
        return None
