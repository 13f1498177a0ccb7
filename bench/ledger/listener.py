"""One aiohttp app listening on 127.0.0.1: what the ledger's fake agents and fake Groq serve on."""

from __future__ import annotations

from aiohttp import web


class Listener:
    """`port = await listener.start(app, port)` (0: any free port); `await listener.stop()` closes
    open connections and the socket (a later `start` on the same port listens again)."""

    def __init__(self) -> None:
        self._runner: web.AppRunner | None = None

    async def start(self, app: web.Application, port: int = 0) -> int:
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, reuse_address=True).start()
        self._runner = runner
        return int(runner.addresses[-1][1])

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
