"""Which errors a Redis operation may raise, all translated to `StateUnavailable` at the store's
boundary (client.py): no error from Redis reaches a request as a 500.

    FOREIGN_ERRORS      redis-py's base classes, OS and timeout errors
    is_redis_failure(exc)   True for those, any class defined in redis-py, and `CLIENT_SLIPS`
                            raised from redis-py's own code (never ours)
"""

from __future__ import annotations

from redis.exceptions import ChildDeadlockedError, IncorrectPolicyType, RedisClusterException, RedisError

FOREIGN_ERRORS = (RedisError, RedisClusterException, ChildDeadlockedError, IncorrectPolicyType, OSError,
                  TimeoutError)
"""What a Redis operation may raise besides cancellation (all translated; a test walks
redis.exceptions so a new redis-py error class cannot slip through)."""

CLIENT_SLIPS = (AttributeError, KeyError, IndexError, TypeError, ValueError, RuntimeError)
"""Errors that are not redis-py's exception classes but that its cluster client raises from its
own code while the slot map changes under it (e.g. `'NoneType' object has no attribute ...` on
a node that a failover just removed, or the event loop's `RuntimeError` for a write on a
connection a failed node closed): translated when raised inside a redis-py call, never ours."""


def is_redis_failure(exc: BaseException) -> bool:
    """True for every error a Redis operation may raise: every exception class redis-py defines
    (in any of its modules), OS and timeout errors, and `CLIENT_SLIPS` raised while a call into
    the `redis` package ran (a redis-py frame in the traceback)."""
    if isinstance(exc, FOREIGN_ERRORS) or any(c.__module__.startswith("redis.") for c in type(exc).__mro__):
        return True
    if not isinstance(exc, CLIENT_SLIPS):
        return False
    tb = exc.__traceback__
    while tb is not None:  # raised while redis-py ran (its frame, or the loop's under it)
        module = str(tb.tb_frame.f_globals.get("__name__", ""))
        if module == "redis" or module.startswith(("redis.", "hiredis")):
            return True
        tb = tb.tb_next
    return False
