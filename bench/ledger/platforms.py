"""The platforms, compressed in time: each update is posted until it gets a 2xx (Meta: a 200).

    bot = TelegramBot(session, url, ledger, clock, secret)   per-chat queues: the head of a chat is
                                                              retried, later updates of that chat
                                                              wait behind it (Bot API server source)
    app = MetaApp(session, url, ledger, clock, app_secret)    notifications batched (up to
                                                              `batch_max` per POST), each POST
                                                              retried as is, less and less often

Retry delays are the platforms' own shapes, scaled down: Telegram starts at 1 s and doubles to a
60-120 s cap (here `first_retry_s` doubling to `max_retry_s`); Meta retries "with decreasing
frequency" for up to 7 days (here the same doubling). `give_up_s` ends the retries of one update
(Telegram keeps an update about a day, Meta 7 days). A connection error or timeout is a failed
attempt like a non-2xx answer. `timeout_s` is the platform's own deadline for an answer.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import hmac
from collections.abc import Callable

import aiohttp

from bench.ledger.book import Ledger
from bench.ledger.traffic import Update, whatsapp_body


class _Platform:
    def __init__(self, session: aiohttp.ClientSession, url: str | list[str], ledger: Ledger,
                 clock: Callable[[], float], *, first_retry_s: float, max_retry_s: float, give_up_s: float,
                 timeout_s: float, max_connections: int) -> None:
        self.session, self.ledger, self.clock = session, ledger, clock
        self.urls = [url] if isinstance(url, str) else list(url)
        """Several URLs: a round-robin load balancer in front of replicas (each attempt, the next)."""
        self._turn = 0
        self.first_retry_s, self.max_retry_s, self.give_up_s = first_retry_s, max_retry_s, give_up_s
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.gate = asyncio.Semaphore(max_connections)
        self.statuses: collections.Counter[str] = collections.Counter()
        """Answers by status (or the error class name for a failed connection)."""
        self.unacked: set[str] = set()
        self.gave_up: set[str] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def _spawn(self, coro: object) -> None:
        task = asyncio.ensure_future(coro)  # type: ignore[arg-type]
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _post(self, body: bytes, headers: dict[str, str], keys: list[str], ok: Callable[[int], bool]) -> bool:
        for key in keys:
            self.ledger.attempt(key)
        url = self.urls[self._turn % len(self.urls)]
        self._turn += 1
        async with self.gate:
            try:
                async with self.session.post(url, data=body, headers=headers, timeout=self.timeout) as response:
                    await response.read()
                    status = response.status
            except (aiohttp.ClientError, TimeoutError) as exc:
                self.statuses[type(exc).__name__] += 1
                return False
        self.statuses[str(status)] += 1
        if ok(status):
            now = self.clock()
            for key in keys:
                self.ledger.acked(key, now)
                self.unacked.discard(key)
            return True
        return False

    async def _until_acked(self, body: bytes, headers: dict[str, str], keys: list[str],
                           ok: Callable[[int], bool]) -> None:
        started = self.clock()
        delay = self.first_retry_s
        while not await self._post(body, headers, keys, ok):
            if self.clock() - started > self.give_up_s:
                self.gave_up.update(keys)
                self.unacked.difference_update(keys)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.max_retry_s)

    @property
    def retrying(self) -> set[str]:
        """Keys not acknowledged yet and not given up."""
        return set(self.unacked)

    async def drain(self, timeout_s: float) -> bool:
        """Wait until every update is acknowledged or given up; False when `timeout_s` passed."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self.unacked or self._busy():
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    def _busy(self) -> bool:
        return False

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


class TelegramBot(_Platform):
    """One bot's webhook: per-chat ordered queues, `max_connections` (setWebhook, default 40)."""

    def __init__(self, session: aiohttp.ClientSession, url: str | list[str], ledger: Ledger,
                 clock: Callable[[], float], secret: str | None = None, *, first_retry_s: float = 0.05, max_retry_s: float = 1.0,
                 give_up_s: float = 600.0, timeout_s: float = 60.0, max_connections: int = 40) -> None:
        super().__init__(session, url, ledger, clock, first_retry_s=first_retry_s, max_retry_s=max_retry_s,
                         give_up_s=give_up_s, timeout_s=timeout_s, max_connections=max_connections)
        self.headers = {"content-type": "application/json"}
        if secret:
            self.headers["x-telegram-bot-api-secret-token"] = secret
        self._queues: dict[str, collections.deque[Update]] = {}

    def push(self, update: Update) -> None:
        self.ledger.sent(update.key, update.expected, self.clock())
        self.unacked.add(update.key)
        queue = self._queues.get(update.queue)
        if queue is None:
            queue = self._queues[update.queue] = collections.deque()
            queue.append(update)
            self._spawn(self._chat(update.queue))
        else:
            queue.append(update)

    async def _chat(self, chat: str) -> None:
        queue = self._queues[chat]
        try:
            while queue:
                head = queue[0]
                await self._until_acked(head.body, self.headers, [head.key], lambda s: 200 <= s < 300)
                queue.popleft()
        finally:
            del self._queues[chat]

    def _busy(self) -> bool:
        return bool(self._queues)


class MetaApp(_Platform):
    """One WhatsApp Business app: notifications batched up to `batch_max` per POST every
    `window_s`, signed with `app_secret`; only a 200 counts."""

    def __init__(self, session: aiohttp.ClientSession, url: str | list[str], ledger: Ledger,
                 clock: Callable[[], float], app_secret: str | None = None, *, batch_max: int = 5, window_s: float = 0.02,
                 first_retry_s: float = 0.1, max_retry_s: float = 2.0, give_up_s: float = 600.0,
                 timeout_s: float = 30.0, max_connections: int = 40) -> None:
        super().__init__(session, url, ledger, clock, first_retry_s=first_retry_s, max_retry_s=max_retry_s,
                         give_up_s=give_up_s, timeout_s=timeout_s, max_connections=max_connections)
        self.app_secret = app_secret
        self.batch_max = batch_max
        self.window_s = window_s
        self._pending: list[Update] = []
        self._flusher: asyncio.Task[None] | None = None

    def push(self, update: Update) -> None:
        self.ledger.sent(update.key, update.expected, self.clock())
        self.unacked.add(update.key)
        self._pending.append(update)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.ensure_future(self._flush())

    async def _flush(self) -> None:
        await asyncio.sleep(self.window_s)
        pending, self._pending = self._pending, []
        for start in range(0, len(pending), self.batch_max):
            batch = pending[start:start + self.batch_max]
            body = whatsapp_body(batch)
            headers = {"content-type": "application/json"}
            if self.app_secret:
                digest = hmac.new(self.app_secret.encode(), body, hashlib.sha256).hexdigest()
                headers["x-hub-signature-256"] = f"sha256={digest}"
            self._spawn(self._until_acked(body, headers, [u.key for u in batch], lambda s: s == 200))

    def _busy(self) -> bool:
        return bool(self._pending)
