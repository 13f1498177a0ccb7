"""Rule building: the engine's view of a channel, built once from the config.

    build_rules(config, channel, lists_agents=...) -> ChannelRules
    build_all_rules(config, lists_agents) -> {channel name: ChannelRules}
    layer2_agents(config, channel) -> (agent names Layer 2 may choose there)
    keyword_scorer(config, settings, agents=None) -> KeywordScorer   the agents' keywords, given weights
    global_scorer(config) -> KeywordScorer              `[routing]` weights (the keyword classifier's)

`lists_agents` is the channel adapter's capability (`stickyroute.channels.lists_agents`): whether the
proxy can answer `/agent` alone itself on that platform (Telegram: a Bot API call in the webhook
reply). Routing never asks which platform a channel is.

Who may be chosen (issue #11): a channel reaches the agents of its `agents` list (default all);
Layer 2 (keywords, the classifier, `/agent`, `@name`) chooses only those that are not `hidden`
(`ChannelRules.agents`); a route to an agent the channel does not reach is no route.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from stickyroute.config.model import Channel, ChannelType, Config, RoutingSettings
from stickyroute.routing.explicit import AgentNames
from stickyroute.routing.keywords import AgentKeywords, KeywordScorer

__all__ = ["ChannelRules", "build_all_rules", "build_rules", "global_scorer", "keyword_scorer", "layer2_agents"]


@dataclass(frozen=True, slots=True)
class ChannelRules:
    """Everything the engine needs to know about one channel, built once from the config."""

    channel: str
    default_agent: str
    settings: RoutingSettings
    names: AgentNames
    scorer: KeywordScorer
    agents: tuple[str, ...]
    """The agents Layer 2 may choose on this channel (reachable and not hidden), config order."""
    bot_username: str | None = None
    acknowledgements: frozenset[str] = frozenset()
    lists_agents: bool = False
    """`/agent` alone is answered by the proxy (with the agent list) instead of forwarded."""
    reachable: frozenset[str] | None = None
    """The agents of the channel's `agents` list, or of the whole config without one (hidden ones
    included); None: no check. A route to an agent outside it (removed from the channel or the
    config by a reload) is treated as no route."""
    choosable: frozenset[str] | None = None
    """`agents` as a set: what an explicit switch may name (others: `explicit_denied`); None:
    every agent."""
    detours: frozenset[str] = frozenset()
    """Non-sticky agents (`sticky = false`): what keywords or the classifier send them is a
    detour (issue #22): answered there, the route stays where it was."""
    desks: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    """Human desks (`human = true`) and their hold in seconds of inactivity (issue #22)."""
    sticky_offsets: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    """Agents with a `sticky_bonus_offset` (points added to the sticky bonus while they hold)."""

    two_topic: frozenset[str] = frozenset()
    """Agents with `two_topic_confirm`: while they hold, a second topic after their own business
    is confirmed by the classifier instead of switched by keywords alone."""

    def sticky_bonus(self, agent: str) -> int:
        """The sticky bonus a route on `agent` gets: `[routing] sticky_bonus` plus the agent's
        `sticky_bonus_offset` (points)."""
        return self.settings.sticky_bonus + self.sticky_offsets.get(agent, 0)

    def hold_for(self, agent: str) -> float | None:
        """The hold (seconds) a route to `agent` gets when handed, switched or pinned to it: its
        desk's `hold_s`, None for an agent that is not a human desk."""
        return self.desks.get(agent)


def layer2_agents(config: Config, channel: Channel) -> tuple[str, ...]:
    """The agents Layer 2 may choose on `channel`: on its `agents` list and not hidden."""
    return tuple(a.name for a in config.agents.values() if channel.allows(a.name) and not a.hidden)


def keyword_scorer(config: Config, settings: RoutingSettings, agents: Collection[str] | None = None
                   ) -> KeywordScorer:
    """The keyword gate over the agents of `config` (only `agents` when given), with
    `settings`' strong/weak weights."""
    return KeywordScorer(
        (AgentKeywords(a.name, a.keywords, a.weak_keywords, a.confirm_keywords) for a in config.agents.values()
         if agents is None or a.name in agents),
        strong_weight=settings.strong_weight,
        weak_weight=settings.weak_weight,
    )


def global_scorer(config: Config) -> KeywordScorer:
    """The keyword gate with the global `[routing]` weights (used by the keyword classifier)."""
    return keyword_scorer(config, config.routing)


def build_rules(config: Config, channel: Channel, *, lists_agents: bool) -> ChannelRules:
    """The engine rules of `channel`: its settings, agent names, keyword scorer (built once)."""
    settings = channel.routing
    agents = layer2_agents(config, channel)
    return ChannelRules(
        channel=channel.name,
        default_agent=channel.default_agent,
        settings=settings,
        names=AgentNames((a.name, a.aliases) for a in config.agents.values()),
        scorer=keyword_scorer(config, settings, agents),
        agents=agents,
        bot_username=channel.bot_username,
        acknowledgements=frozenset(a.casefold() for a in settings.acknowledgements),
        lists_agents=lists_agents,
        reachable=frozenset(channel.agents if channel.agents is not None else config.agents),
        choosable=frozenset(agents),
        detours=frozenset(a.name for a in config.agents.values() if not a.sticky),
        desks=MappingProxyType({a.name: a.hold_s for a in config.agents.values() if a.human}),
        sticky_offsets=MappingProxyType({a.name: a.sticky_bonus_offset for a in config.agents.values()
                                         if a.sticky_bonus_offset}),
        two_topic=frozenset(a.name for a in config.agents.values() if a.two_topic_confirm),
    )


def build_all_rules(config: Config, lists_agents: Callable[[ChannelType], bool]) -> dict[str, ChannelRules]:
    """The rules of every channel; `lists_agents(type)` is the platform's capability
    (`stickyroute.channels.lists_agents`)."""
    return {name: build_rules(config, ch, lists_agents=lists_agents(ch.type)) for name, ch in config.channels.items()}
