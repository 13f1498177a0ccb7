"""The demo agents of `make run` (issue #10: a deeply nested JSON body made them answer 500)."""

from __future__ import annotations

import httpx
import pytest

from stickyroute.server.demo import _text_of, demo_agent_app
from tests.upstreams import serve_app

DEEP = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
DEEP_LIST = b"[" * 50_000 + b"]" * 50_000
TEXTS = b'{"entry":[{"changes":[{"value":{"messages":[{"text":{"body":"hi there"}},{"image":{"caption":"a cat"}}]}}]}]}'


@pytest.mark.parametrize("body", [DEEP, DEEP_LIST, b"not json", b"\xff\xfe", b""], ids=["deep-object", "deep-list",
                                                                                     "not-json", "not-utf8", "empty"])
def test_the_demo_agent_answers_200_to_any_body(body: bytes) -> None:
    with serve_app(demo_agent_app("coder"), lifespan="off") as base:
        response = httpx.post(f"{base}/telegram", content=body, timeout=10.0)
    assert (response.status_code, response.json()) == (200, {"ok": True, "agent": "coder"})


def test_the_demo_hint_reads_texts_in_document_order_at_any_depth() -> None:
    nested = b'{"x":' * 500 + b'{"text":"deep"}' + b"}" * 500
    assert (_text_of(TEXTS), _text_of(nested), _text_of(DEEP)) == ("hi there | a cat", "deep", "")
