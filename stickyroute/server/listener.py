"""A uvicorn server whose signals its owner handles (several servers share one event loop and one
signal handler: uvicorn's own per-server handlers would replace each other), and which says when
it is up."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Generator

import uvicorn

__all__ = ["Listener"]


class Listener(uvicorn.Server):
    """`uvicorn.Server` without its signal handlers: stop it with `should_exit = True`; `up` is
    set once its sockets are bound and it serves."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.up = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            self.up.set()
