"""Webhook payload shapes taken from other projects' test suites and the platforms' own
documentation, re-created with invented ids and texts (structure, field names and value types
kept). One file per platform under `payloads/realworld/`, each sample with its `source`.

    realworld.names("slack")          -> the sample names, file order
    realworld.body("slack", name)     -> the request body bytes (JSON compact, or the form as is)
    realworld.source("slack", name)   -> where the shape comes from
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

DIRECTORY = Path(__file__).resolve().parent / "payloads" / "realworld"


@functools.cache
def _samples(platform: str) -> dict[str, dict[str, Any]]:
    loaded: dict[str, dict[str, Any]] = json.loads((DIRECTORY / f"{platform}.json").read_text())
    return loaded


def names(platform: str) -> list[str]:
    return list(_samples(platform))


def source(platform: str, name: str) -> str:
    return str(_samples(platform)[name]["source"])


def body(platform: str, name: str) -> bytes:
    sample = _samples(platform)[name]
    if "form" in sample:
        return str(sample["form"]).encode()
    return json.dumps(sample["body"], ensure_ascii=False, separators=(",", ":")).encode()
