"""`DeliverySteps` on Redis: one single-message update of a known conversation in two round trips.

    begin    BEGIN script: claim the delivery (kept under the conversation's hash tag) and, when
             it is FIRST without a first decision, take the conversation's lock and read it (as
             ACQUIRE) in the same call; the lock lives a little less than one claim lease
             (`RedisDeliveryLog.lock_ms`) and is renewed with the claim until `finish`
    note     NOTE script: COMMIT before the forward and keep the first decision on the delivery
    finish   FINISH script: COMMIT after the forward and COMPLETE / FAIL the delivery

Every script names the delivery, the conversation hash and its lock: one hash tag, one slot.
A lock this process may have taken without learning it (the call failed or was cut) is given
back at once (RELEASE, in the background), as `acquire` does.
"""

from __future__ import annotations

from stickyroute.core.delivery import DecisionMemo, DeliveryKey
from stickyroute.core.route import ConversationKey
from stickyroute.reply import Reply
from stickyroute.state.base import ClaimState, Lease
from stickyroute.state.redis.conversations import RedisConversationState
from stickyroute.state.redis.deliveries import RedisDeliveryLog
from stickyroute.state.redis.step_scripts import BEGIN, FINISH, NOTE
from stickyroute.state.steps import Begun, Writes

__all__ = ["RedisDeliverySteps"]


class RedisDeliverySteps:
    """`DeliverySteps` over one Redis conversation state and delivery log (same store)."""

    def __init__(self, conversations: RedisConversationState, deliveries: RedisDeliveryLog) -> None:
        self.conversations = conversations
        self.deliveries = deliveries
        self._store = deliveries.store
        self._keys = self._store.keys

    async def begin(self, key: DeliveryKey, conversation: ConversationKey, now: float, *, hold: bool) -> Begun:
        log = self.deliveries
        name = log.place(key, conversation.digest())
        token, until = log.claim_args(now)
        lock_token = self.conversations.new_token()
        names = [name, self._keys.conversation(conversation), self._keys.lock(conversation)]
        try:
            result = await self._store.run("begin", BEGIN, names,
                                           [repr(now), token, until, log.claim_ms, "1" if hold else "0", lock_token,
                                            log.lock_ms])
        except BaseException:
            if hold:  # the script may have run before the error: give the conversation back
                self.conversations.release_soon(names[2], lock_token)
            raise
        claim = log.outcome(key, token, result[:3])
        if claim.state is ClaimState.FIRST and len(result) > 3:
            return Begun(claim, self.conversations.lease_from(conversation, lock_token, result[3], now))
        return Begun(claim)

    async def note(self, key: DeliveryKey, lease: Lease, writes: Writes, memo: DecisionMemo, now: float) -> None:
        names, args = self.conversations.commit_call(lease, now, writes)
        log = self.deliveries
        written = await self._store.run("note", NOTE, [*names, log.name(key)],
                                        [*args, repr(now), *log.memo_args(memo, now), log.ttl_ms])
        self.conversations.committed(lease, written)

    async def finish(self, key: DeliveryKey, lease: Lease, writes: Writes, reply: Reply | None,
                     memo: DecisionMemo | None, now: float, *, keep: bool = False) -> None:
        names, args = self.conversations.commit_call(lease, now, writes)
        log = self.deliveries
        memo_blob, memo_until = log.memo_args(memo, now)
        if keep:
            tail = ["k", "", b"", "", memo_blob, memo_until, log.ttl_ms]
        elif reply is not None and reply.ok:
            log.holder(key)
            blob, stored_s, _keep_ms = log.answer_args(reply)
            until = memo_until if stored_s == log.ttl_s else repr(now + stored_s)  # the same float: one repr
            tail = ["c", "", blob, until, memo_blob, memo_until, log.ttl_ms]
        else:
            tail = ["f", log.holder(key), log.failed_blob(reply), "", memo_blob, memo_until, log.ttl_ms]
        written = await self._store.run("finish", FINISH, [*names, log.name(key)], [*args, repr(now), *tail])
        self.conversations.committed(lease, written)
