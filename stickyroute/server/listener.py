"""A uvicorn server whose signals its owner handles (several servers share one event loop and one
signal handler: uvicorn's own per-server handlers would replace each other)."""

from __future__ import annotations

import contextlib
from collections.abc import Generator

import uvicorn

__all__ = ["Listener"]


class Listener(uvicorn.Server):
    """`uvicorn.Server` without its signal handlers: stop it with `should_exit = True`."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield
