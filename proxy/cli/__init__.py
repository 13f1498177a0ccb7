"""`stickyroute` command line: `main` dispatches to one module per command."""

from proxy.cli.main import main

__all__ = ["main"]
