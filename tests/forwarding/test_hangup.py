"""stickyroute/forwarding/hangup.py: the platform's hang-up, from the connection or from `receive`."""

from __future__ import annotations

import asyncio

from starlette.types import Message

from stickyroute.forwarding.hangup import HANGUP, HANGUP_EXTENSION, Hangups, Watching


async def _never() -> Message:
    raise AssertionError("receive must not be read when the connection reports the hang-up")


async def test_the_connections_hangups_resolve_the_request_without_a_watcher_task() -> None:
    hangups = Hangups()
    before = len(asyncio.all_tasks())
    async with Watching(_never, {"extensions": {HANGUP_EXTENSION: hangups}}) as gone:
        assert (len(asyncio.all_tasks()), HANGUP.get() is gone, gone.done()) == (before, True, False)
        hangups.hung_up()
        assert gone.done()
    assert HANGUP.get() is None


async def test_a_finished_request_is_no_longer_watched() -> None:
    hangups = Hangups()
    async with Watching(_never, {"extensions": {HANGUP_EXTENSION: hangups}}) as gone:
        pass
    hangups.hung_up()
    assert gone.done() is False


async def test_without_the_extension_receive_is_read_for_http_disconnect() -> None:
    messages = asyncio.Queue[Message]()

    async def receive() -> Message:
        return await messages.get()

    async with Watching(receive, {"type": "http"}) as gone:
        await messages.put({"type": "http.disconnect"})
        await asyncio.wait_for(asyncio.shield(gone), 5.0)  # hang guard
        assert gone.done()
