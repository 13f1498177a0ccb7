"""The Lua scripts of one single-message update (`RedisDeliverySteps`) and of a claim's lease:
each names the delivery hash, the conversation hash and its lock, all under the conversation's
hash tag (one slot). The shared pieces (`commit`, `complete`, `fail`, first decisions) are the
same Lua as the per-step scripts of `scripts.py`.
"""

from __future__ import annotations

from stickyroute.state.redis.scripts import _CLAIM, _COMMIT, _DELIVERY, _MEMO

__all__ = ["BEGIN", "FINISH", "MEMO", "NOTE", "RENEW"]

BEGIN = _MEMO + _CLAIM + """
-- KEYS: delivery hash, conversation hash, lock (one hash tag: the conversation's).
-- ARGV: now, token, claim until, claim_ms, hold ('1' | '0'), lock token, lock_ms.
-- CLAIM's answers; a FIRST without a first decision, when asked to hold and the lock is free,
-- also takes the lock and reads the conversation as ACQUIRE does: {'first', false, attempt, fields}.
local claimed = claim_delivery(KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4]))
if claimed[1] ~= 'first' or claimed[2] or ARGV[5] ~= '1' then return claimed end
local attempt = claimed[3]
if redis.call('SET', KEYS[3], ARGV[6], 'NX', 'PX', ARGV[7]) then
  return {'first', false, attempt,
          redis.call('HMGET', KEYS[2], 'a', 'c', 'l', 'x', 'd', 'n', 'w', 'h', 'g', 'v', 'r', 'ru')}
end
return {'first', false, attempt}
"""

NOTE = _MEMO + _COMMIT + """
-- KEYS: conversation hash, lock, delivery hash. ARGV: commit's fifteen arguments, now, memo,
-- memo until, keep_ms. Commit before the forward and keep the first decision on the delivery.
local written = commit(KEYS[1], KEYS[2], ARGV, 1)
local now = tonumber(ARGV[16])
if not live_memo(redis.call('HGET', KEYS[3], 'm'), redis.call('HGET', KEYS[3], 'mu'), now) then
  redis.call('HSET', KEYS[3], 'm', ARGV[17], 'mu', ARGV[18])
end
keep_at_least(KEYS[3], tonumber(ARGV[19]))
return written
"""

FINISH = _MEMO + _COMMIT + _DELIVERY + """
-- KEYS: conversation hash, lock, delivery hash. ARGV: commit's fifteen arguments, then now,
-- outcome (c complete | f fail | k keep the claim: a late answer still runs), token, answer or
-- reply, answer until, memo, memo until, keep_ms. After the forward: commit and end the claim.
local written = commit(KEYS[1], KEYS[2], ARGV, 1)
local now = tonumber(ARGV[16])
if ARGV[17] == 'c' then
  complete(KEYS[3], now, ARGV[19], ARGV[20], ARGV[21], ARGV[22], tonumber(ARGV[23]))
elseif ARGV[17] == 'f' then
  fail(KEYS[3], now, ARGV[18], ARGV[19], ARGV[21], ARGV[22], tonumber(ARGV[23]))
elseif ARGV[21] ~= '' and not live_memo(redis.call('HGET', KEYS[3], 'm'), redis.call('HGET', KEYS[3], 'mu'), now) then
  redis.call('HSET', KEYS[3], 'm', ARGV[21], 'mu', ARGV[22])
end
return written
"""

MEMO = _MEMO + """
-- KEYS: delivery hash. ARGV: now, memo, memo until, keep_ms. Keep the first decision (before
-- the forward) unless the delivery has one.
if not live_memo(redis.call('HGET', KEYS[1], 'm'), redis.call('HGET', KEYS[1], 'mu'), tonumber(ARGV[1])) then
  redis.call('HSET', KEYS[1], 'm', ARGV[2], 'mu', ARGV[3])
end
keep_at_least(KEYS[1], tonumber(ARGV[4]))
return 1
"""

RENEW = _MEMO + """
-- KEYS: delivery hash[, lock]. ARGV: token, claim until, claim_ms[, lock token, lock_ms].
-- Extend our claim (not a newer holder's) and the conversation lock we hold with it. 1 when ours.
local ours = 0
if redis.call('HGET', KEYS[1], 't') == ARGV[1] then
  redis.call('HSET', KEYS[1], 'tu', ARGV[2])
  keep_at_least(KEYS[1], tonumber(ARGV[3]))
  ours = 1
end
if KEYS[2] and redis.call('GET', KEYS[2]) == ARGV[4] then
  redis.call('PEXPIRE', KEYS[2], ARGV[5])
end
return ours
"""
