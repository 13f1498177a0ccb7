"""`[hints]`: agent signals (issue #12): the HMAC key of conversation tokens, the agent API rate.

    [hints]
    secret = "${STICKYROUTE_HINT_SECRET}"   # signs X-Stickyroute-Conversation tokens
    rate_per_s = 10                         # POST /v1/hints calls per second, per agent

Without `secret`, each process signs with a random secret of its own: tokens die with a restart,
and another replica (or worker) rejects them. An agent with a `token` but no `secret` is
therefore a warning, naming the replicas when the state is shared (Redis).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields

from stickyroute.config._reader import Problems, Table
from stickyroute.config.model import Agent, HintSettings, StateSettings

MIN_SECRET_CHARS = 16


def read_hints(table: Table | None) -> HintSettings:
    """`[hints]` (defaults when absent); a short `secret` is a warning."""
    if table is None:
        return HintSettings()
    table.reject_unknown(f.name for f in fields(HintSettings))
    secret = table.string("secret")
    if secret is not None and len(secret) < MIN_SECRET_CHARS:
        table.problems.warn(table.sub("secret"), f"shorter than {MIN_SECRET_CHARS} characters: easy to guess")
    rate = table.number("rate_per_s", positive=True)
    return HintSettings(secret=secret) if rate is None else HintSettings(secret=secret, rate_per_s=rate)


def warn_unsigned(problems: Problems, hints: HintSettings, agents: Mapping[str, Agent],
                  state: StateSettings) -> None:
    """Warn when an agent may call the agent API but tokens are signed with a per-process secret."""
    callers = [a.name for a in agents.values() if a.token]
    if hints.secret is not None or not callers:
        return
    shared = " and the other replicas reject them (set it to the same value on every replica)" if state.shared else ""
    problems.warn("hints.secret", f"not set while agents.{callers[0]}.token is: conversation tokens are signed "
                  f"with a random per-process secret, so they die with a restart{shared}")
