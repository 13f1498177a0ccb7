"""Rule building: the engine's view of a channel, built once from the config.

    build_rules(config, channel, lists_agents=...) -> ChannelRules
    build_all_rules(config, lists_agents) -> {channel name: ChannelRules}
    keyword_scorer(config, settings) -> KeywordScorer   every agent's keywords, given weights
    global_scorer(config) -> KeywordScorer              `[routing]` weights (the keyword classifier's)

`lists_agents` is the channel adapter's capability (`proxy.channels.lists_agents`): whether the
proxy can answer `/agent` alone itself on that platform (Telegram: a Bot API call in the webhook
reply). Routing never asks which platform a channel is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from proxy.config.model import Channel, ChannelType, Config, RoutingSettings
from proxy.routing.explicit import AgentNames
from proxy.routing.keywords import AgentKeywords, KeywordScorer

__all__ = ["ChannelRules", "build_all_rules", "build_rules", "global_scorer", "keyword_scorer"]


@dataclass(frozen=True, slots=True)
class ChannelRules:
    """Everything the engine needs to know about one channel, built once from the config."""

    channel: str
    default_agent: str
    settings: RoutingSettings
    names: AgentNames
    scorer: KeywordScorer
    agents: tuple[str, ...]
    bot_username: str | None = None
    acknowledgements: frozenset[str] = frozenset()
    lists_agents: bool = False
    """`/agent` alone is answered by the proxy (with the agent list) instead of forwarded."""


def keyword_scorer(config: Config, settings: RoutingSettings) -> KeywordScorer:
    """The keyword gate over every agent of `config`, with `settings`' strong/weak weights."""
    return KeywordScorer(
        (AgentKeywords(a.name, a.keywords, a.weak_keywords) for a in config.agents.values()),
        strong_weight=settings.strong_weight,
        weak_weight=settings.weak_weight,
    )


def global_scorer(config: Config) -> KeywordScorer:
    """The keyword gate with the global `[routing]` weights (used by the keyword classifier)."""
    return keyword_scorer(config, config.routing)


def build_rules(config: Config, channel: Channel, *, lists_agents: bool) -> ChannelRules:
    """The engine rules of `channel`: its settings, agent names, keyword scorer (built once)."""
    settings = channel.routing
    return ChannelRules(
        channel=channel.name,
        default_agent=channel.default_agent,
        settings=settings,
        names=AgentNames((a.name, a.aliases) for a in config.agents.values()),
        scorer=keyword_scorer(config, settings),
        agents=tuple(config.agents),
        bot_username=channel.bot_username,
        acknowledgements=frozenset(a.casefold() for a in settings.acknowledgements),
        lists_agents=lists_agents,
    )


def build_all_rules(config: Config, lists_agents: Callable[[ChannelType], bool]) -> dict[str, ChannelRules]:
    """The rules of every channel; `lists_agents(type)` is the platform's capability
    (`proxy.channels.lists_agents`)."""
    return {name: build_rules(config, ch, lists_agents=lists_agents(ch.type)) for name, ch in config.channels.items()}
