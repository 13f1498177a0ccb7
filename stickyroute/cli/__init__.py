"""`stickyroute` command line: `main` dispatches to one module per command."""

from stickyroute.cli.main import main

__all__ = ["main"]
