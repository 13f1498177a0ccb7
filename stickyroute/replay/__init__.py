"""Replay and evaluation: play a labelled corpus or recorded webhooks through the real Router.

    corpus.py    corpus JSONL + agents TOML -> Conversation / Config
    judges.py    oracle / noisy judges and the counting wrapper (calls, estimated tokens)
    metrics.py   accuracy, switch recall/delay, false switches, boomerangs; both baselines
    runner.py    one strategy over a corpus through stickyroute.routing.router.Router on a fake clock
    sweep.py     grid over the routing knobs, Pareto front, PNG plot
    recorded.py  what-if replay of `serve --record` files under another config
    cli.py       `stickyroute replay` (add_arguments / run)
    offline.py   the server's router on the memory backend, for the offline tools
    explain.py   `stickyroute explain` (the explanation itself: stickyroute.routing.explain)

`serve --record` files are written by stickyroute.forwarding.recording (the running server never
imports this package).
"""

from stickyroute.replay.offline import keyword_classifier, offline_router

__all__ = ["keyword_classifier", "offline_router"]
