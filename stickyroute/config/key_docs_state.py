"""The words of the configuration reference for `[state]` (`stickyroute.config._state`; merged
into `key_docs.DESCRIPTIONS`)."""

from __future__ import annotations

__all__ = ["STATE_DESCRIPTIONS"]

STATE_DESCRIPTIONS: dict[str, str] = {
    "state.backend": "`memory`: this process only (one worker); `redis`: shared by every replica and `serve --workers "
                     "N`.",
    "state.url": "The Redis server: `redis://[user:password@]host:6379/0`, `rediss://` (TLS) or `unix:///path`; "
                 "`\"${REDIS_URL}\"` works; the password never appears in logs.",
    "state.key_prefix": "Prefix of every Redis key (several deployments can share one Redis); no `{` or `}`.",
    "state.op_timeout_ms": "How long one Redis operation may take, counted in the event loop's free time (a busy "
                           "process does not make Redis late). Past it, while Redis is up: a delivery answers 503 "
                           "(the platform retries), a routing decision uses the route this process last saw.",
    "state.when_unavailable": "During a Redis outage (refused, reset, or late and no answer to a ping): `memory` "
                              "keeps serving from this process's memory (at-least-once, routes not shared); `refuse` "
                              "answers deliveries 503 so the platforms hold them until Redis is back.",
    "state.delivery_ttl_hours": "How long answered deliveries are remembered: a platform retry within it gets the "
                                "stored answer (Telegram retries for about a day, Meta up to 7 days).",
    "state.mode": "How Redis is deployed: `single` (one server at `url`), `cluster` (Redis Cluster; `url` is any seed "
                  "node, the others are discovered) or `sentinel` (the master named `master`, found through "
                  "`sentinels` and followed after a failover; `url` gives its scheme, password and database).",
    "state.delivery_log_max_bytes": "Memory backend: bound of the stored answers (bytes); the least recently used are "
                                    "forgotten first.",
    "state.claim_lease_s": "Redis backend: lease of a delivery claim (seconds), renewed every third of it while the "
                           "forward runs: a replica that dies frees its deliveries within it, and the platform's "
                           "retry goes to the agent of the first decision.",
}
