"""The words of the configuration reference: every table's intro and every key's description.

One entry per key the loader accepts (`stickyroute.config.reference.accepted_keys`), keyed by its
dotted pattern (`server.host`, `agents.NAME.url`, `channels.NAME.bindings[].user`). A description
is a string, or a `Doc` that also gives the type and default of a key no model field holds. Types
and defaults of the others come from the model (`stickyroute.config.model`); `FIELDS` names the
field of a key whose TOML name differs. Links are relative to docs/. `make reference` writes
docs/configuration.md from this; `tests/test_config_reference.py` fails, naming the key, when a
key has no entry here or the page is stale.
"""

from __future__ import annotations

from dataclasses import dataclass

from stickyroute.config.choices import ChannelType
from stickyroute.config.key_docs_edge import EDGE_DESCRIPTIONS
from stickyroute.config.key_docs_state import STATE_DESCRIPTIONS

__all__ = ["DESCRIPTIONS", "FIELDS", "INTRO", "TABLES", "Doc", "Table"]


@dataclass(frozen=True, slots=True)
class Doc:
    """A key's description, with the type and default shown when no model field gives them."""

    text: str
    type: str | None = None
    default: str | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A table's intro; `model`: the dataclass of `stickyroute.config.model` holding its keys;
    `same_as`: the table whose keys (and descriptions) it shares."""

    text: str
    model: str | None = None
    same_as: str | None = None


INTRO = """\
# Configuration reference

<!-- Generated from the config model by `make reference` (stickyroute/config/key_docs.py holds the
words): edit those, not this page. -->

A TOML file: `stickyroute init` writes a commented one, `stickyroute check PATH` validates it and
prints every problem as `file: dotted.key: what is wrong` (exit 2; warnings alone exit 0). `serve`,
`check` and a live reload apply the same validation, the classifier's API key included.

- Unknown keys are errors (with a "did you mean" when a key is close).
- `${ENV_VAR}` may appear in any string value and is replaced from the environment; an unset
  variable is an error naming the key and the variable. The platform API keys (`bot_token`,
  `app_id`, `access_token`) are the exception: only `stickyroute webhook` reads them, when it runs.
- Relative paths (`agents.NAME.rules`, `server.ssl_certfile`, `server.ssl_keyfile`) are relative to
  the config file's folder; `rules = "builtin:NAME"` names a rule pack shipped with stickyroute.
- Ids in bindings and thread routes are strings or integers; payload ids are normalised (numbers
  match their string, a WhatsApp number loses its leading `+`).
- Units are in the names: `_s` seconds, `_ms` milliseconds, `_minutes`, `_hours`, `_bytes`.
- Command-line options of `serve` (`--host`, `--port`, `--admin-port`, `--log-format`, `--log-level`)
  override the file; the config hash shown by `/stats` is the file's, the overrides are shown apart.
"""

TABLES: dict[str, Table] = {
    "server": Table("The public webhook listener: the platforms POST here.", "ServerSettings"),
    "admin": Table("The admin listener: `/healthz`, `/readyz` and `/metrics` for everyone; `/stats`, the admin API "
                   "(`/v1/...`) and the dashboard with `Authorization: Bearer <token>` (see "
                   "[Operating it](operating.md)).", "AdminSettings"),
    "upstream": Table("The forwarding leg to the agents (see [Forwarding](forwarding.md)).", "UpstreamSettings"),
    "routing": Table("Routing settings of every channel; a channel's `[channels.NAME.overrides]` may replace each one "
                     "(see [Routing](routing.md)).", "RoutingSettings"),
    "classifier": Table("The classifier that confirms a switch (see [The classifier](classifier.md)).",
                        "ClassifierSettings"),
    "state": Table("Where routes, remembered deliveries and the classifier budget live (see "
                   "[Replicas and Redis](replicas.md)).", "StateSettings"),
    "hints": Table("Agent hints and handoffs (see [Agent hints and handoffs](agent-hints.md)).", "HintSettings"),
    "agents.NAME": Table("One agent: its webhook, what it is about, its keywords. NAME is lowercase letters, digits, "
                         "`-` and `_`; at least one agent is required.", "Agent"),
    "channels.NAME": Table("One inbound webhook endpoint of one platform (see [Platforms](platforms/index.md)). At "
                           "least one channel is required.", "Channel"),
    "channels.NAME.overrides": Table("This channel's routing settings.", same_as="routing"),
    "channels.NAME.upstream": Table("This channel's own deadlines, merged over `[upstream]` (Slack and Discord wait "
                                    "3 seconds for an answer, LINE about 2: a channel's deadline can sit under its "
                                    "platform's).", same_as="upstream"),
    "channels.NAME.bindings[]": Table("Layer 1: a user or a chat always goes to one agent (a user binding wins over "
                                      "a thread route, which wins over a chat binding). One binding per id.",
                                      "Binding"),
    "channels.NAME.thread_routes[]": Table("Layer 1: a thread of a chat goes to one agent (a Telegram forum topic, a "
                                           "Slack or Discord thread).", "ThreadRoute"),
}

FIELDS: dict[str, str] = {
    "routing.auto_route": "strategy",
    "routing.auto_route_ttl_minutes": "ttl_s",
    **{f"routing.auto_route_{name}": name for name in (
        "confidence_threshold", "sticky_bonus", "divergence_count", "explicit_pin", "first_message_margin",
        "early_confirm_margin", "keyword_switch_margin", "contest_confirm", "agent_hints", "agent_handoffs",
        "agent_releases")},
    "agents.NAME.hold_minutes": "hold_s",
    "agents.NAME.channels": "channel_urls",
    "channels.NAME.path": "paths",
    "channels.NAME.bot_token": "api.bot_token",
    "channels.NAME.app_id": "api.app_id",
    "channels.NAME.access_token": "api.access_token",
}
"""Dotted key pattern -> the model field holding it, where the names differ."""

_OPT_IN = "opt-in, off when absent: "

DESCRIPTIONS: dict[str, str | Doc] = {
    # [server]
    "server.host": "Listen address: `127.0.0.1` (this machine, a reverse proxy in front) or `0.0.0.0` (every "
                   "interface: a container). `serve --host` overrides it.",
    "server.port": "Listen port. `serve --port` overrides it.",
    "server.max_body_bytes": "Largest accepted request body (bytes); a larger one is answered 413.",
    "server.trusted_proxies": "CIDRs whose `X-Forwarded-*` headers are extended; from any other peer they are "
                              "replaced.",
    "server.ssl_certfile": "TLS certificate chain (PEM), with `ssl_keyfile`; Telegram only calls HTTPS on ports 443, "
                           "80, 88 or 8443.",
    "server.ssl_keyfile": "TLS private key (PEM), with `ssl_certfile`.",
    "server.drain_s": "SIGTERM: in-flight webhooks may finish this long (seconds); those still running are then "
                      "answered 503 so the platform retries them (see [Graceful shutdown](operating.md#graceful-"
                      "shutdown)).",
    "server.log_format": "`text`: one line per record; `json`: one JSON object per line (time, level, logger, message "
                         "and the record's fields). Every logger of every process, uvicorn's included, writes to "
                         "standard error in it. `serve --log-format` overrides it.",
    "server.log_level": "The least severe records written; uvicorn's own start-up lines only at `debug`. `serve "
                        "--log-level` overrides it.",
    # [admin]
    "admin.host": "Listen address of the admin listener; keep it off the internet.",
    "admin.port": "Listen port; must differ from `server.port` on the same host. `serve --admin-port` overrides it.",
    "admin.token": "Bearer token of `/stats`, `/v1/...` and the dashboard, e.g. `\"${STICKYROUTE_ADMIN_TOKEN}\"`; "
                   "none: they answer 401. Printable ASCII without spaces; shorter than 16 characters is a warning.",
    **EDGE_DESCRIPTIONS,  # both listeners' limits, the throttle and sessions (key_docs_edge.py)
    # [upstream]
    "upstream.connect_timeout_s": "To connect to an agent, and to wait for a free connection of its pool (then 503).",
    "upstream.timeout_s": "With `connect_timeout_s`, the longest the platform waits for an agent's answer (then 504).",
    "upstream.max_connections": "Connections of each agent's own pool (an agent's `max_connections` replaces it).",
    "upstream.max_reply_bytes": "Largest agent reply body relayed (bytes); past it the status and headers are relayed "
                                "with an empty body.",
    "upstream.late_answer_s": "After a 504, how long an agent's late answer is still awaited and kept for the "
                              "platform's retry (0: the request is cancelled at the 504).",
    # [routing] (and every channel's overrides)
    "routing.short_message_chars": "Messages shorter than this reuse the current route and are never classified (see "
                                   "[Message rules](routing.md#message-rules)).",
    "routing.acknowledgements": "Messages that only acknowledge (compared case-insensitively) reuse the current route.",
    "routing.strong_weight": "Keyword points of a strong keyword.",
    "routing.weak_weight": "Keyword points of a weak keyword.",
    "routing.max_conversations": "Routes kept per channel; the least recently active are dropped first.",
    "routing.log_text": "Log message text in decision and classifier lines (and keep it in the decisions stream).",
    "routing.explicit_switches_per_minute": "Explicit switches (`/agent NAME`, `@NAME`) one sender may make per minute "
                                            "on a channel; over it they are ignored (`explicit_limited`); 0: none.",
    "routing.auto_route": "The Layer-2 strategy (see [The four strategies]"
                          "(routing.md#the-four-strategies-auto_route)).",
    "routing.auto_route_ttl_minutes": Doc("How long a route lives after the conversation's last message (minutes).",
                                          "number", "`30`"),
    "routing.auto_route_confidence_threshold": "Keyword points an agent needs to be a candidate.",
    "routing.auto_route_sticky_bonus": "Points added to the current agent's score.",
    "routing.auto_route_divergence_count": "Divergent messages in a row before the classifier is asked to confirm a "
                                           "switch.",
    "routing.auto_route_explicit_pin": "An explicit choice holds until it expires: never switched automatically.",
    "routing.auto_route_first_message_margin": _OPT_IN + "a session's first message goes by keywords alone when the "
                                               "top agent reaches the threshold and leads by this many points.",
    "routing.auto_route_early_confirm_margin": _OPT_IN + "ask the classifier at the first divergence when the "
                                               "candidate beats the current agent's effective score by this many "
                                               "points.",
    "routing.auto_route_keyword_switch_margin": _OPT_IN + "at a divergence, switch by keywords alone (reason "
                                                "`keywords`) when the candidate beats every other effective score by "
                                                "this many points.",
    "routing.auto_route_contest_confirm": "Ask the classifier when another agent (at or above the threshold) ties the "
                                          "current agent's effective score, instead of counting it as agreement.",
    "routing.auto_route_agent_hints": "What an agent's `not-mine` hint does: ignored, one divergence increment "
                                      "(`sticky_heuristic`), or the classifier at once.",
    "routing.auto_route_agent_handoffs": "An agent's handoff switches the route at once (never over a user's explicit "
                                         "pin).",
    "routing.auto_route_agent_releases": "An agent's `done` releases the route: the next message is decided from "
                                         "scratch (never over a user's explicit pin; a desk's `done` always ends its "
                                         "hold). See [Evaluation](evaluation.md#tasks-and-detours-measured).",
    # [classifier]
    "classifier.provider": "`auto`: Groq when the variable `api_key_env` is set, else the keyword classifier; `groq`: "
                           "always Groq (`check`, `serve` and a reload refuse the config without the key); `keywords`: "
                           "the offline keyword classifier, no LLM calls (it answers the unique top keyword scorer at "
                           "or above the confidence threshold); `heuristic`: the old name of `keywords`.",
    "classifier.model": "The Groq model.",
    "classifier.timeout_s": "The webhook never waits longer for a classification.",
    "classifier.api_key_env": "The environment variable holding the Groq API key (a refused key is failure kind "
                              "`auth` in the stats, with a hint in the log).",
    "classifier.base_url": "A Groq-compatible server (the variable `GROQ_BASE_URL` works too); none: "
                           "https://api.groq.com.",
    "classifier.context_messages": "Also send the sender's last N messages (N more messages of tokens per call).",
    "classifier.max_tokens": "Completion tokens per call (an agent name).",
    "classifier.calls_per_minute": "Classifier calls per minute and channel (shared by replicas); over it the route "
                                   "stays (`classifier_budget`).",
    "classifier.breaker_failures": "Consecutive failures that open the circuit breaker.",
    "classifier.breaker_cooldown_s": "How long an open breaker skips the classifier before one trial call.",
    **STATE_DESCRIPTIONS,  # [state] (key_docs_state.py)
    "state.sentinels": Doc("`mode = \"sentinel\"`: the sentinels' addresses, `[\"10.0.0.1:26379\", "
                           "\"10.0.0.2:26379\"]`.", "array of \"host:port\"", "none"),
    "state.master": Doc("`mode = \"sentinel\"`: the master's name as the sentinels monitor it (`sentinel monitor "
                        "NAME ...`).", "string", "none"),
    # [hints]
    "hints.secret": "HMAC key of the conversation tokens, e.g. `\"${STICKYROUTE_HINT_SECRET}\"`; set it, the same on "
                    "every replica, whenever an agent has a token. None: a random secret per process.",
    "hints.rate_per_s": "Agent API calls per second per agent (over it 429).",
    # [agents.NAME]
    "agents.NAME.url": "The agent's webhook base URL (http or https); the inbound path and query are appended.",
    "agents.NAME.channels": Doc("Per channel, an exact target URL that replaces `url` + path: `[agents.NAME.channels]` "
                                "`telegram = \"http://host/hooks/telegram\"`.", "table of URLs", "none"),
    "agents.NAME.description": "What the agent does, in one sentence: the classifier reads it.",
    "agents.NAME.aliases": "More names for `/agent NAME` and `@NAME` (unique across agents).",
    "agents.NAME.keywords": "Strong keywords (`strong_weight` points each), merged with the rule pack's.",
    "agents.NAME.weak_keywords": "Weak keywords (`weak_weight` points each), merged with the rule pack's.",
    "agents.NAME.confirm_keywords": "Strong keywords that never decide alone: what they lead goes to the classifier "
                                    "(see [Keyword gate](routing.md#keyword-gate)); a rule-pack key too.",
    "agents.NAME.sticky": "False: a detour agent: what keywords or the classifier send it is answered there and the "
                          "route stays with the previous agent (reason `detour`); `/agent NAME` still pins it.",
    "agents.NAME.human": "A human desk: a conversation handed, switched or pinned to it is held there (reason `held`) "
                         "until it says `done`, an operator resets it, the user switches explicitly or the hold runs "
                         "out; always sticky (see [Tasks, detours and human desks](routing.md#tasks-detours-and-human-"
                         "desks)).",
    "agents.NAME.hold_minutes": Doc("A human desk's hold, in minutes without a message (> 0; only with `human = "
                                    "true`); the route does not expire while held.", "number", "`1440`"),
    "agents.NAME.sticky_bonus_offset": Doc("Extra points (0-100) on top of `sticky_bonus` while this agent holds the "
                                           "route, so that one keyword of another agent no longer ties it; a rule-pack "
                                           "key too (`stickyroute learn` sets it, see [Learning keywords]"
                                           "(learning.md)); the agent's own key wins over its pack's.",
                                           "integer", "`0`"),
    "agents.NAME.two_topic_confirm": "While this agent holds the route, a message of several sentences that opens "
                                     "with its business (the first sentence no courtesy, without the other agent's "
                                     "keywords) and brings up another agent's later is confirmed by the classifier "
                                     "instead of switched by keywords alone; a rule-pack key too (`stickyroute learn` "
                                     "sets it).",
    "agents.NAME.rules": Doc("A rule pack: `\"builtin:NAME\"` (shipped: billing, coder, debugger, devops, researcher, "
                             "sales, support, travel, writer) or a path relative to the config file (see "
                             "[Learning keywords](learning.md)).", "string", "none"),
    "agents.NAME.max_connections": "This agent's own pool size; none: `upstream.max_connections`.",
    "agents.NAME.hidden": "Never listed, never chosen by `/agent`, `@NAME`, the classifier or keywords: reached only "
                          "through Layer 1 (bindings, thread routes, a channel default).",
    "agents.NAME.token": "This agent's bearer token on the agent API `POST /v1/hints`, e.g. `\"${CODER_TOKEN}\"`; "
                         "none: it cannot call it.",
    # [channels.NAME]
    "channels.NAME.type": Doc("The platform.", " \\| ".join(f"`{kind.value}`" for kind in ChannelType),
                              "the table's name, when it is a platform"),
    "channels.NAME.path": Doc("The exact inbound path (or `paths`, several), unique across channels.", "string",
                              '`"/NAME"`'),
    "channels.NAME.paths": Doc("Several exact inbound paths (instead of `path`).", "array of strings", "none"),
    "channels.NAME.default_agent": "Layer 1's fallback: the agent of whatever nothing else claims.",
    "channels.NAME.secret_token": "Telegram: the `X-Telegram-Bot-Api-Secret-Token` every update must carry (1-256 "
                                  "characters of `A-Z a-z 0-9 _ -`); `stickyroute webhook set` registers it.",
    "channels.NAME.bot_username": "Telegram: the bot's username; enables `/agent@Bot` in groups.",
    "channels.NAME.app_secret": "WhatsApp, Messenger, Instagram: the Meta app secret; every POST's "
                                "`X-Hub-Signature-256` is checked with it.",
    "channels.NAME.verify_token": "WhatsApp, Messenger, Instagram: the token of Meta's verification request, which "
                                  "stickyroute answers.",
    "channels.NAME.signing_secret": "Slack: the app's Signing Secret; every request's `X-Slack-Signature` is checked "
                                    "with it.",
    "channels.NAME.public_key": "Discord: the application's Ed25519 public key (64 hex digits); every request's "
                                "`X-Signature-Ed25519` is checked with it.",
    "channels.NAME.channel_secret": "LINE: the channel secret; every request's `X-Line-Signature` is checked with it.",
    "channels.NAME.upstream": Doc("This channel's own deadlines (see below).", "table", "none"),
    "channels.NAME.overrides": Doc("This channel's routing settings (the keys of `[routing]`).", "table", "none"),
    "channels.NAME.bindings": Doc("Layer-1 bindings (see below).", "array of tables", "none"),
    "channels.NAME.thread_routes": Doc("Layer-1 thread routes: Telegram forum topics, Slack and Discord threads (see "
                                       "below).", "array of tables", "none"),
    "channels.NAME.agents": "The agents reachable on this channel; the default agent and every binding's and thread "
                            "route's agent must be among them. None: every agent.",
    "channels.NAME.bot_token": "Telegram, read only by `stickyroute webhook`: the bot's token from @BotFather, e.g. "
                               "`\"${TELEGRAM_BOT_TOKEN}\"` (resolved when the command runs; never printed).",
    "channels.NAME.app_id": "WhatsApp, Messenger, Instagram, read only by `stickyroute webhook`: the Meta app's id.",
    "channels.NAME.access_token": "WhatsApp, Messenger, Instagram, read only by `stickyroute webhook`: an app access "
                                  "token; none: `app_id|app_secret` (never printed).",
    # [[channels.NAME.bindings]]
    "channels.NAME.bindings[].user": "A user id (exactly one of `user` or `chat`).",
    "channels.NAME.bindings[].chat": "A chat id (exactly one of `user` or `chat`).",
    "channels.NAME.bindings[].agent": "The agent.",
    # [[channels.NAME.thread_routes]]
    "channels.NAME.thread_routes[].chat": "The forum's chat id.",
    "channels.NAME.thread_routes[].thread": "The thread: a Telegram topic's `message_thread_id`, a Slack thread's "
                                            "`thread_ts`, a Discord thread's channel id.",
    "channels.NAME.thread_routes[].agent": "The agent.",
}
"""Dotted key pattern -> its description (see the module docstring)."""
