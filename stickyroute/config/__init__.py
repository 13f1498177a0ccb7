"""Configuration: `load_config` / `check_config` read a TOML file into frozen dataclasses."""

from stickyroute.config.listeners import MIB, AdminSettings, ServerSettings
from stickyroute.config.loader import check_config, load_config
from stickyroute.config.model import (
    DEFAULT_ACKNOWLEDGEMENTS,
    Agent,
    AgentHints,
    Binding,
    Channel,
    ChannelType,
    ClassifierSettings,
    Config,
    HintSettings,
    RoutingSettings,
    Strategy,
    ThreadRoute,
    UpstreamSettings,
)
from stickyroute.config.rulepack import RulePack, load_rule_pack

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
