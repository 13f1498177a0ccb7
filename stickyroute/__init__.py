"""stickyroute: a chat-webhook reverse proxy that routes each conversation to the right agent."""

__all__ = ["__version__"]

__version__ = "0.1.0"
