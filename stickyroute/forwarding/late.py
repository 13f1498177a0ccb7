"""Late answers: forwards that outlived the platform's 504 complete or fail their deliveries later.

    late = LateAnswers(deliveries, clock)
    late.watch(exchange, keys, memos)   # exchange: the leg's still-running forward (its claims renewed)
    await late.end(owned, outcomes, memos, now, lates)   # a request's keys: complete, fail or watch
    late.outcomes                       # Counter: answered (2xx), failed (non-2xx), lost (no answer)

An agent slower than `upstream.connect_timeout_s + timeout_s` makes the platform get a 504 and
retry, but the agent may still handle the update and answer after it (issue #10). The delivery
keys then stay in flight until the exchange ends: a platform retry waits for it (`settle`) and,
when the late answer is a 2xx, gets that answer instead of a second forward. A late non-2xx or no
answer at all (the agent failed, or `late_answer_s` passed) releases the keys: the next retry is
forwarded again, to the agent of the first decision.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.errors import UpstreamError
from stickyroute.forwarding.keepalive import Keeper
from stickyroute.forwarding.offload import chunks
from stickyroute.reply import Reply
from stickyroute.state.base import DeliveryLog

__all__ = ["LateAnswers"]

log = logging.getLogger("stickyroute.dispatch")


class LateAnswers:
    """Watches exchanges past their 504; `clock()` is seconds (the dispatcher's clock)."""

    def __init__(self, deliveries: DeliveryLog, clock: Callable[[], float], keeper: Keeper | None = None) -> None:
        self.deliveries = deliveries
        self.clock = clock
        self.keeper = keeper
        self.outcomes: Counter[str] = Counter()
        """Late exchanges by how they ended: answered (a 2xx kept for the retry), failed (non-2xx),
        lost (no answer: error, deadline, shutdown)."""
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def pending(self) -> int:
        """Exchanges still awaited."""
        return len(self._tasks)

    def watch(self, exchange: asyncio.Future[Reply], keys: Sequence[DeliveryKey],
              memos: Mapping[DeliveryKey, DecisionMemo]) -> None:
        """Complete `keys` with the exchange's 2xx, else fail them, when it ends."""
        task = asyncio.ensure_future(self._settle(exchange, list(keys), dict(memos)))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _settle(self, exchange: asyncio.Future[Reply], keys: list[DeliveryKey],
                      memos: dict[DeliveryKey, DecisionMemo]) -> None:
        reply: Reply | None = None
        stop = self.keeper.hold(keys) if self.keeper is not None else None
        try:
            reply = await asyncio.shield(exchange)
        except UpstreamError as exc:
            log.warning("late answer lost for %d delivery(ies): %s", len(keys), exc)
        except asyncio.CancelledError:
            if not exchange.cancelled():  # we are stopped (shutdown): stop the exchange too
                exchange.cancel()
                await self.deliveries.fail(keys, None, self.clock(), memos)
                self.outcomes["lost"] += 1
                raise
        except Exception:  # a bug must not leave the deliveries in flight forever
            log.exception("late answer of %d delivery(ies) failed unexpectedly", len(keys))
        finally:
            if stop is not None:
                stop()
        now = self.clock()
        if reply is not None and reply.ok:
            self.outcomes["answered"] += 1
            log.info("late answer %d kept for %d delivery(ies)", reply.status, len(keys))
            await self.deliveries.complete(keys, reply, now, memos)
        else:
            self.outcomes["failed" if reply is not None else "lost"] += 1
            await self.deliveries.fail(keys, reply, now, memos)

    async def end(self, owned: Sequence[DeliveryKey], outcomes: Mapping[DeliveryKey, Reply],
                  memos: Mapping[DeliveryKey, DecisionMemo], now: float,
                  lates: Mapping[DeliveryKey, asyncio.Future[Reply]]) -> None:
        """End a request's held keys: complete those whose part got a 2xx, fail the others (None:
        no answer at all); the keys of a part still awaited after its 504 are watched (`watch`)."""
        by_reply: dict[int, tuple[Reply, list[DeliveryKey]]] = {}
        for key, reply in outcomes.items():
            by_reply.setdefault(id(reply), (reply, []))[1].append(key)
        for reply, keys in by_reply.values():
            exchange = lates.get(keys[0])
            if exchange is not None:
                self.watch(exchange, keys, _memos_of(keys, memos))
                continue
            async for chunk in chunks(keys):
                if reply.ok:
                    await self.deliveries.complete(chunk, reply, now, _memos_of(chunk, memos))
                else:
                    await self.deliveries.fail(chunk, reply, now, _memos_of(chunk, memos))
        unanswered = [k for k in owned if k not in outcomes]
        if unanswered:
            async for chunk in chunks(unanswered):
                await self.deliveries.fail(chunk, None, now, _memos_of(chunk, memos))

    @staticmethod
    def ignore(exchange: asyncio.Future[Reply]) -> None:
        """Let an exchange with no delivery to complete run out (its outcome is not needed)."""
        exchange.add_done_callback(lambda f: None if f.cancelled() else f.exception())

    async def aclose(self) -> None:
        """Stop waiting: every watched delivery is released (its retry is forwarded again)."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _memos_of(keys: Sequence[DeliveryKey],
              memos: Mapping[DeliveryKey, DecisionMemo]) -> dict[DeliveryKey, DecisionMemo]:
    return {k: memos[k] for k in keys if k in memos}
