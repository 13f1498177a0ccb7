"""The Lua scripts of the Redis backend: one script per state step, each on the keys of one
hash tag (one slot; BEGIN, NOTE and FINISH also touch a delivery kept under its conversation's
tag), run with EVALSHA (redis-py reloads a script that a restarted Redis forgot). Times are the
caller's clock (seconds, `repr` floats): the scripts compare them; Redis's own expiry (PEXPIRE,
relative milliseconds) only collects garbage.
"""

from __future__ import annotations

ACQUIRE = """
-- KEYS: conversation hash, lock. ARGV: token, lock_ms.
-- Take the lock and read the route, version and recent texts in the same call.
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, redis.call('HMGET', KEYS[1], 'a', 'c', 'l', 'x', 'd', 'n', 'w', 'h', 'g', 'v', 'r', 'ru')}
end
return {0, redis.call('PTTL', KEYS[2])}
"""

_COMMIT = """
-- commit(conversation hash, lock, A, i): the arguments from A[i]: token, version seen, mode
-- (s store | f forget | k keep), nine route fields, recent blob ('' unchanged), recent until,
-- keep_ms (hash lifetime, <= 0 drops it). Fencing: write only while holding the lock, or when the
-- lock expired and nobody wrote since. 1 when written.
local function commit(conv, lock, A, i)
  local holder = redis.call('GET', lock)
  local version = redis.call('HGET', conv, 'v') or '0'
  if holder ~= A[i] and (holder or version ~= A[i + 1]) then
    return 0
  end
  local keep = tonumber(A[i + 14])
  if keep <= 0 then
    redis.call('DEL', conv)
  else
    if A[i + 2] == 's' then
      redis.call('HSET', conv, 'a', A[i + 3], 'c', A[i + 4], 'l', A[i + 5], 'x', A[i + 6], 'd', A[i + 7],
                 'n', A[i + 8], 'w', A[i + 9], 'h', A[i + 10], 'g', A[i + 11])
    elseif A[i + 2] == 'f' then
      redis.call('HDEL', conv, 'a', 'c', 'l', 'x', 'd', 'n', 'w', 'h', 'g')
    end
    if A[i + 12] ~= '' then
      redis.call('HSET', conv, 'r', A[i + 12], 'ru', A[i + 13])
    end
    redis.call('HSET', conv, 'v', tonumber(version) + 1)
    redis.call('PEXPIRE', conv, keep)
  end
  if holder == A[i] then
    redis.call('DEL', lock)
  end
  return 1
end
"""

COMMIT = _COMMIT + """
-- KEYS: conversation hash, lock. ARGV: commit's fifteen arguments.
return commit(KEYS[1], KEYS[2], ARGV, 1)
"""

RELEASE = """
-- KEYS: lock. ARGV: token. Delete the lock only when it is still ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""

SWAP = """
-- KEYS: conversation hash, lock. ARGV: nine route fields expected, nine route fields to write,
-- keep_ms (the hash's lifetime at least), '1' to write even while a decision holds the
-- conversation (a reload's prune) else ''. An agent signal (issue #12): write only when no
-- decision holds the conversation (-1) and the route is still the one expected (0); 1 when written.
if ARGV[20] ~= '1' and redis.call('EXISTS', KEYS[2]) == 1 then
  return -1
end
local f = redis.call('HMGET', KEYS[1], 'a', 'c', 'l', 'x', 'd', 'n', 'w', 'h', 'g')
for i = 1, 9 do
  if (f[i] or '') ~= ARGV[i] then
    return 0
  end
end
redis.call('HSET', KEYS[1], 'a', ARGV[10], 'c', ARGV[11], 'l', ARGV[12], 'x', ARGV[13], 'd', ARGV[14],
           'n', ARGV[15], 'w', ARGV[16], 'h', ARGV[17], 'g', ARGV[18])
redis.call('HINCRBY', KEYS[1], 'v', 1)
local keep = tonumber(ARGV[19])
if redis.call('PTTL', KEYS[1]) < keep then
  redis.call('PEXPIRE', KEYS[1], keep)
end
return 1
"""

_MEMO = """
local function live_memo(f_memo, f_until, now)
  if f_memo and tonumber(f_until) > now then return f_memo end
  return false
end
local function keep_at_least(key, ms)
  if redis.call('PTTL', key) < ms then redis.call('PEXPIRE', key, ms) end
end
"""

_CLAIM = """
local function claim_delivery(key, now, token, claim_until, claim_ms)
  local f = redis.call('HMGET', key, 'a', 'au', 'm', 'mu', 't', 'tu')
  local memo = live_memo(f[3], f[4], now)
  if f[1] and tonumber(f[2]) > now then return {'done', memo, f[1]} end
  if f[5] and tonumber(f[6]) > now then return {'busy', memo, f[5]} end
  redis.call('HSET', key, 't', token, 'tu', claim_until)
  local attempt = redis.call('HINCRBY', key, 'n', 1)
  keep_at_least(key, claim_ms)
  return {'first', memo, attempt}
end
"""

CLAIM = _MEMO + _CLAIM + """
-- KEYS: delivery hash. ARGV: now, token, claim until, claim_ms.
-- {'done', memo, answer} | {'busy', memo, holder token} | {'first', memo, attempt} (the caller holds it).
return claim_delivery(KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], tonumber(ARGV[4]))
"""

SETTLE = _MEMO + """
-- KEYS: delivery hash. ARGV: now, awaited token, token, claim until, claim_ms.
-- One poll of a waiter: {'done', memo, answer} | {'failed', memo, reply of the awaited attempt}
-- | {'busy', memo, holder token} | {'first', memo, attempt} (it ended without an answer: the caller holds it).
local now = tonumber(ARGV[1])
local f = redis.call('HMGET', KEYS[1], 'a', 'au', 'm', 'mu', 't', 'tu', 'ft', 'fr')
local memo = live_memo(f[3], f[4], now)
if f[1] and tonumber(f[2]) > now then return {'done', memo, f[1]} end
local failed = f[7] and f[7] == ARGV[2] and f[8] and f[8] ~= ''
if f[5] and tonumber(f[6]) > now then
  if failed and f[5] ~= ARGV[2] then return {'failed', memo, f[8]} end
  return {'busy', memo, f[5]}
end
if failed then return {'failed', memo, f[8]} end
redis.call('HSET', KEYS[1], 't', ARGV[3], 'tu', ARGV[4])
local attempt = redis.call('HINCRBY', KEYS[1], 'n', 1)
keep_at_least(KEYS[1], tonumber(ARGV[5]))
return {'first', memo, attempt}
"""

_DELIVERY = """
local function complete(key, now, answer, answer_until, memo, memo_until, keep_ms)
  redis.call('HSET', key, 'a', answer, 'au', answer_until)
  redis.call('HDEL', key, 't', 'tu')
  if memo ~= '' and not live_memo(redis.call('HGET', key, 'm'), redis.call('HGET', key, 'mu'), now) then
    redis.call('HSET', key, 'm', memo, 'mu', memo_until)
  end
  keep_at_least(key, keep_ms)
end
local function fail(key, now, token, reply, memo, memo_until, keep_ms)
  if redis.call('HGET', key, 't') == token then
    redis.call('HDEL', key, 't', 'tu')
  end
  redis.call('HSET', key, 'ft', token, 'fr', reply)
  if memo ~= '' and not live_memo(redis.call('HGET', key, 'm'), redis.call('HGET', key, 'mu'), now) then
    redis.call('HSET', key, 'm', memo, 'mu', memo_until)
  end
  keep_at_least(key, keep_ms)
end
"""

COMPLETE = _MEMO + _DELIVERY + """
-- KEYS: delivery hash. ARGV: now, answer, answer until, memo ('' none), memo until, keep_ms.
complete(KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]))
return 1
"""

FAIL = _MEMO + _DELIVERY + """
-- KEYS: delivery hash. ARGV: now, token, reply ('' died without one), memo ('' none), memo until, keep_ms.
-- Release our claim (not a newer holder's) and leave what the waiters need.
fail(KEYS[1], tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5], tonumber(ARGV[6]))
return 1
"""

TAKE = """
-- KEYS: budget hash. ARGV: now, rate per second, capacity, keep_ms. 1 when a token was spent.
-- The same arithmetic as proxy.state.budget.TokenBucket (doubles, %.17g round-trips exactly).
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local capacity = tonumber(ARGV[3])
local b = redis.call('HMGET', KEYS[1], 'k', 'u')
local tokens, updated = capacity, now
if b[1] then
  tokens = tonumber(b[1])
  updated = tonumber(b[2])
end
tokens = math.min(capacity, tokens + math.max(0, now - updated) * rate)
updated = math.max(updated, now)
local ok = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'k', string.format('%.17g', tokens), 'u', string.format('%.17g', updated))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return ok
"""
