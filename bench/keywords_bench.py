"""Keyword-gate benchmark (issue #3): score a 200-character message against 50 agents with 30
keywords each. Target: under 50 microseconds per call on the 2-core bench machine.

    .venv/bin/python bench/keywords_bench.py        # prints the table, writes results/bench/keywords.md

Keywords are generated deterministically (seeded) from the shipped rule packs' vocabulary plus a
domain word list: each agent gets 30 keywords, about a third of them multi-word phrases, and
10 weak keywords. Each message is scored with `KeywordScorer.scores`; the figure is the median
over `REPEATS` timeit repeats of µs per call. Measured, never asserted.
"""

from __future__ import annotations

import platform
import random
import re
import statistics
import sys
import timeit
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from stickyroute.routing.keywords import AgentKeywords, KeywordScorer  # noqa: E402

AGENTS = 50
KEYWORDS_PER_AGENT = 30
WEAK_PER_AGENT = 10
REPEATS = 7
TARGET_US = 50.0
OUT = ROOT / "results" / "bench" / "keywords.md"
"""Written on every run; `results/` is ignored by git (docs/bench/ holds the hand-updated copies)."""

_WORDS = ["invoice", "refund", "payment", "billing", "subscription", "account", "login", "password", "reset", "deploy", "kubernetes", "docker", "cluster", "pipeline", "pod", "container", "helm", "terraform", "ansible", "nginx", "latency", "outage", "incident", "monitoring", "alert", "grafana", "prometheus", "database", "schema", "query", "index", "migration", "backup", "restore", "replica", "shard", "cache", "redis", "kafka", "queue", "worker", "cron", "scheduler", "flight", "hotel", "booking", "itinerary", "visa", "passport", "luggage", "train", "ticket", "refactor", "review", "merge", "branch", "commit", "rebase", "lint", "typing", "compiler", "runtime", "stack", "trace", "exception", "segfault", "memory", "leak", "profiler", "benchmark", "regression", "draft", "essay", "article", "blog", "headline", "proofread", "grammar", "tone", "outline", "summary", "citation", "paper", "survey", "dataset", "statistics", "chart", "dashboard", "report", "forecast", "revenue", "pricing", "quote", "discount", "lead", "prospect", "demo", "trial", "contract", "renewal", "churn", "onboarding", "ticket", "escalation", "warranty", "shipping", "delivery", "tracking", "parcel", "order", "return", "exchange", "coupon", "voucher", "loyalty", "points"]


def _pack_vocabulary() -> tuple[list[str], list[str]]:
    """(strong keywords, distinct words) of the shipped rule packs (stickyroute/rules/*.toml)."""
    phrases: list[str] = []
    words: set[str] = set(_WORDS)
    for pack in sorted((ROOT / "stickyroute" / "rules").glob("*.toml")):
        data = tomllib.loads(pack.read_text(encoding="utf-8"))
        for key in ("keywords", "weak_keywords"):
            for k in data.get(key, []):
                if isinstance(k, str):
                    words.update(w for w in re.findall(r"[a-z][a-z0-9]+", k.casefold())
                                 if len(w) > 3 and w not in _STOPWORDS)
                    if key == "keywords":
                        phrases.append(k)
    return phrases, sorted(words)


_STOPWORDS = frozenset(["a", "an", "and", "are", "as", "at", "be", "but", "by", "can", "do", "for", "from", "has", "have", "how", "i", "in", "is", "it", "its", "my", "not", "of", "on", "or", "our", "so", "that", "the", "this", "to", "was", "we", "what", "when", "where", "which", "who", "why", "will", "with", "you", "your", "can't", "please", "about", "into"])
_PREFIXES = ["auto", "micro", "data", "cloud", "flow", "sync", "net", "pay", "mail", "doc", "code", "test", "build", "ship", "track", "book"]
_SUFFIXES = ["ctl", "hub", "desk", "kit", "ops", "base", "scan", "sync", "view", "link", "port", "guard", "board", "forge", "stack"]


def generate_agents(seed: int = 7, overlap: bool = False) -> list[AgentKeywords]:
    """50 agents x 30 keywords (about 1/3 two-word phrases) + 10 weak keywords, deterministic.

    Default: each agent draws from its own slice of a ~700-word vocabulary (the rule packs'
    words plus product-like compounds such as "autoscaler"/"payhub"), so a word belongs to at
    most about two agents, as in a real deployment of distinct agents. `overlap=True` is the
    stress case: every agent draws from one shared 150-word list (a message then hits most agents).
    """
    rng = random.Random(seed)
    _phrases, words = _pack_vocabulary()
    words = words + sorted({p + s for p in _PREFIXES for s in _SUFFIXES})
    rng.shuffle(words)
    agents = []
    step = len(words) / AGENTS
    for n in range(AGENTS):
        if overlap:
            domain = _WORDS
        else:
            lo = int(n * step)
            domain = (words + words)[lo: lo + int(step * 2)]  # own slice, half shared with the next agent
        strong: list[str] = []
        while len(strong) < KEYWORDS_PER_AGENT:
            kw = " ".join(rng.sample(domain, 2)) if rng.random() < 0.35 else rng.choice(domain)
            if kw not in strong:
                strong.append(kw)
        weak = [w for w in rng.sample(domain, min(len(domain), WEAK_PER_AGENT + 10)) if w not in strong][:WEAK_PER_AGENT]
        agents.append(AgentKeywords(f"agent{n:02d}", tuple(strong), tuple(weak)))
    return agents


def _fit(text: str, length: int = 200) -> str:
    return (text * (length // len(text) + 1))[:length]


MESSAGES = {
    "english, several hits": _fit(
        "Hi team, the deploy pipeline failed again after the merge conflict on the main branch; "
        "can someone check the kubernetes pod logs and the grafana alert? Also the invoice refund "
        "for order 4411 is still pending. "
    ),
    "english, no hits": _fit(
        "Good morning! I just wanted to say that yesterday was lovely and the weather was nice. "
        "We walked along the river, had some coffee and talked about plans for the weekend ahead. "
    ),
    "mixed script (accents + CJK)": _fit(
        "Bonjour, la réservation d'hôtel à Zürich est confirmée; 请帮我检查一下部署 pipeline 的状态, "
        "und die Rechnung für den Flug bitte. Café ☕ später? "
    ),
}


def measure() -> list[tuple[str, int, int, float, float, int]]:
    """Rows: (message, chars, matched agents, median µs, min µs, calls per repeat)."""
    rows = []
    cases = [(f"distinct vocabularies: {name}", generate_agents(), text) for name, text in MESSAGES.items()]
    cases.append(("stress, shared 150-word vocabulary: english, several hits",
                  generate_agents(overlap=True), MESSAGES["english, several hits"]))
    for name, agents, text in cases:
        scorer = KeywordScorer(agents)
        score = scorer.scores
        timer = timeit.Timer(lambda score=score, text=text: score(text))
        number, _ = timer.autorange()
        number = max(number, 1000)
        per_call = [t / number * 1e6 for t in timer.repeat(repeat=REPEATS, number=number)]
        rows.append((name, len(text), len(score(text)), statistics.median(per_call), min(per_call), number))
    return rows


def render(rows) -> str:
    lines = [
        "# Keyword gate benchmark",
        "",
        f"`KeywordScorer.scores(text)` against {AGENTS} agents x {KEYWORDS_PER_AGENT} keywords "
        f"(+{WEAK_PER_AGENT} weak each, about a third phrases; seeded, from the rule packs' vocabulary). "
        f"Median of {REPEATS} timeit repeats. Target: < {TARGET_US:.0f} µs per call (issue #3).",
        f"Python {platform.python_version()}, {platform.machine()}; command: `.venv/bin/python bench/keywords_bench.py`.",
        "",
        "| message | chars | agents matched | µs/call (median) | µs/call (min) | target |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for name, chars, matched, med, best, _n in rows:
        ok = "met" if med < TARGET_US else f"MISSED by {med - TARGET_US:.1f} µs"
        lines.append(f"| {name} | {chars} | {matched} | {med:.1f} | {best:.1f} | {ok} |")
    return "\n".join(lines) + "\n"


def main() -> str:
    report = render(measure())
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(report, encoding="utf-8")
    print(report)
    return report


if __name__ == "__main__":
    main()
