"""Shared set-up of the engine tests (tests/routing/test_engine_*.py): the pure `decide` / `conclude`
played on a fake clock with a scripted classifier (`tests.scenario.Playbook`): messages (short, acknowledgement, non-text, edit, button, status), explicit switches
under every strategy, the four strategies, the sticky_heuristic steps 1-5 with the seed's own
examples, classifier answers, field reports T21, T26, T27, T28 and the opt-in knobs.

Every row states the exact (agent, reason) of each decision, the classifier call count and the
route left in the store as (agent, explicit, candidate, counter) or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from stickyroute.classifier.base import Classification, Outcome
from stickyroute.config.model import Strategy
from tests.scenario import (
    AGENTS,
    Answer,
    Playbook,
    ScriptedClassifier,
    Step,
    make_config,
)

OFF, ONLY, TTL, HEUR = Strategy.OFF, Strategy.EXPLICIT_ONLY, Strategy.STICKY_TTL, Strategy.STICKY_HEURISTIC
AUTO_STRATEGIES = [pytest.param(s, id=s.value) for s in (ONLY, TTL, HEUR)]
ALL_STRATEGIES = [pytest.param(s, id=s.value) for s in (OFF, ONLY, TTL, HEUR)]
ERROR, BUDGET, OPEN = Outcome.ERROR, Outcome.BUDGET, Outcome.OPEN
INVALID = Classification(outcome=Outcome.AGENT, agent="translator")
"""A classifier claiming an agent that does not exist."""

LONG = "tell me something interesting"
"""A non-short message without any keyword."""


async def run(
    steps: Sequence[Step],
    *,
    strategy: Strategy = HEUR,
    seed: Mapping[str, Any] | None = None,
    answers: Mapping[str, Answer] | Answer = None,
    roster: Mapping[str, Any] = AGENTS,
    **settings: Any,
) -> tuple[Playbook, list[tuple[str, str]]]:
    """Build a scenario, seed a route (`Playbook.seed` kwargs with `agent`), play `steps`."""
    scenario = Playbook(make_config(strategy, roster=roster, **settings), ScriptedClassifier(answers))
    if seed is not None:
        scenario.seed(**seed)
    return scenario, await scenario.play(steps)


def seeded(agent_: str, **kw: Any) -> dict[str, Any]:
    return {"agent_": agent_, **kw}


