"""`make fuzz`: 100,000 fuzzed webhook bodies through the adapters and the dispatcher; prints the
count of failures (target 0).

    .venv/bin/python bench/fuzz.py [--inputs 100000] [--seed 0]

Inputs (bench/fuzzing/strategies.py, bench/fuzzing/platforms.py): schema-shaped bodies of every
platform (Telegram, WhatsApp, Slack, Discord, LINE, Messenger, Instagram) and byte mutations of the
shipped payloads, split evenly over platform x (adapter, proxy) properties
(bench/fuzzing/properties.py). No shrinking: every failing input is counted
and the first few are printed with their violations. Writes results/fuzz.md (ignored by git).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fuzzing.properties import Target, check_adapter  # noqa: E402
from bench.fuzzing.strategies import PLATFORMS, any_body  # noqa: E402


def _case(one: Callable[[bytes, str, str, str], None], platform: str, prop: str, name: str) -> Callable[[bytes], None]:
    def case(body: bytes) -> None:
        one(body, platform, prop, name)
    return case


def run(inputs: int, seed_value: int) -> tuple[dict[str, int], dict[str, int], list[str]]:
    runs: dict[str, int] = {}
    failures: dict[str, int] = {}
    examples: list[str] = []
    loop = asyncio.new_event_loop()
    target = loop.run_until_complete(Target.create())
    per = max(1, inputs // (2 * len(PLATFORMS)))
    profile = settings(max_examples=per, deadline=None, database=None, phases=[Phase.generate],
                       suppress_health_check=list(HealthCheck))
    try:
        for platform in PLATFORMS:
            for prop in ("adapter", "proxy"):
                name = f"{platform}/{prop}"

                def one(body: bytes, platform: str, prop: str, name: str) -> None:
                    runs[name] = runs.get(name, 0) + 1
                    if prop == "adapter":
                        problems = check_adapter(platform, body)
                    else:
                        problems = loop.run_until_complete(target.check(platform, body))
                    if problems:
                        failures[name] = failures.get(name, 0) + 1
                        if len(examples) < 10:
                            examples.append(f"{name}: {problems} <- {body[:300]!r}")

                test = seed(seed_value)(profile(given(body=any_body(platform))(_case(one, platform, prop, name))))
                test()
                print(f"{name}: {runs.get(name, 0)} inputs, {failures.get(name, 0)} failure(s)", flush=True)
    finally:
        loop.run_until_complete(target.aclose())
        loop.close()
    return runs, failures, examples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    logging.disable(logging.CRITICAL)
    runs, failures, examples = run(args.inputs, args.seed)
    total = sum(runs.values())
    lines = [f"fuzz: {total} inputs, {sum(failures.values())} failure(s)",
             *(f"  {name}: {runs[name]} inputs, {failures.get(name, 0)} failure(s)" for name in runs),
             *(f"  e.g. {example}" for example in examples)]
    text = "\n".join(lines)
    print(text)
    out = ROOT / "results" / "fuzz.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text + "\n")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
