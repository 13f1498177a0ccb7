"""Configuration: `load_config` / `check_config` read a TOML file into frozen dataclasses."""

from proxy.config.loader import check_config, load_config
from proxy.config.model import (
    DEFAULT_ACKNOWLEDGEMENTS,
    MIB,
    AdminSettings,
    Agent,
    AgentHints,
    Binding,
    Channel,
    ChannelType,
    ClassifierSettings,
    Config,
    HintSettings,
    RoutingSettings,
    ServerSettings,
    Strategy,
    ThreadRoute,
    UpstreamSettings,
)
from proxy.config.rulepack import RulePack, load_rule_pack

__all__ = [
    "DEFAULT_ACKNOWLEDGEMENTS",
    "MIB",
    "AdminSettings",
    "Agent",
    "AgentHints",
    "Binding",
    "Channel",
    "ChannelType",
    "ClassifierSettings",
    "Config",
    "HintSettings",
    "RoutingSettings",
    "RulePack",
    "ServerSettings",
    "Strategy",
    "ThreadRoute",
    "UpstreamSettings",
    "check_config",
    "load_config",
    "load_rule_pack",
]
