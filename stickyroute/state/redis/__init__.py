"""The Redis backend of every state protocol: several replicas and worker processes share it.

    keys.py           KeyLayout: key names (one hash tag per conversation, delivery, budget)
    codec.py          routes, recent texts, replies, decisions as stored (exact round trips)
    scripts.py        the Lua scripts (one per state step, one slot each)
    step_scripts.py   BEGIN, NOTE, FINISH, MEMO, RENEW (a single-message update, a claim's lease)
    client.py         RedisStore: one pool per process, op timeout, error translation
    wire.py           Wire: script calls on pooled connections kept between round trips (one server, Sentinel)
    topology.py       [state] mode: one server, Redis Cluster (per-node calls, SCAN per primary) or Sentinel
    conversations.py  RedisConversationState (per-conversation lock with token and fencing)
    deliveries.py     RedisDeliveryLog (claims, stored answers, waiting on another replica)
    steps.py          RedisDeliverySteps (claim + acquire, commit + complete: two round trips)
    budget.py         RedisBudget (the classifier token bucket shared by the replicas), RedisSwitchBudget
"""

from stickyroute.state.redis.budget import RedisBudget, RedisSwitchBudget
from stickyroute.state.redis.client import RedisStore
from stickyroute.state.redis.conversations import RedisConversationState
from stickyroute.state.redis.deliveries import RedisDeliveryLog
from stickyroute.state.redis.keys import KeyLayout
from stickyroute.state.redis.steps import RedisDeliverySteps
from stickyroute.state.redis.topology import masked

__all__ = ["KeyLayout", "RedisBudget", "RedisConversationState", "RedisDeliveryLog", "RedisDeliverySteps",
           "RedisStore", "RedisSwitchBudget",
           "masked"]
