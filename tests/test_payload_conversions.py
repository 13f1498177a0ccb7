"""Every place a payload value is converted to a number (issue #10, "found by trying to break it":
`/agent` in a chat whose id is `"²"` gave a 500, `"٣"` built a reply to chat 3).

The walk: every call of `int()`, `float()`, `complex()`, `Decimal()` and every `.isdigit()`,
`.isdecimal()`, `.isnumeric()` in the modules that read webhook bytes must be one of the known
sites below, and each known site has a test feeding it non-ASCII digits. A new conversion site
fails `test_every_conversion_site_is_known` until it is added here with its test.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from stickyroute.channels import telegram
from stickyroute.config.ids import ascii_int, normalise_id
from stickyroute.config.model import Agent
from stickyroute.forwarding.body import declared_length
from tests.proxy.harness import Proxy, telegram_text, upstream_set, write_config

ROOT = Path(__file__).resolve().parents[1]
PAYLOAD_MODULES = [
    *sorted((ROOT / "stickyroute" / "channels").glob("*.py")),
    *sorted((ROOT / "stickyroute" / "forwarding").glob("*.py")),
    *sorted((ROOT / "stickyroute" / "routing").glob("*.py")),
    *sorted((ROOT / "stickyroute" / "state").glob("*.py")),
    *sorted((ROOT / "stickyroute" / "server").glob("*.py")),
    ROOT / "stickyroute" / "config" / "ids.py",
    ROOT / "stickyroute" / "reply.py",
]
CONVERTERS = {"int", "float", "complex", "Decimal"}
DIGIT_TESTS = {"isdigit", "isdecimal", "isnumeric"}
KNOWN_SITES = {
    ("stickyroute/config/ids.py", "normalise_id", "int"),  # a JSON float that is a whole number
    ("stickyroute/config/ids.py", "ascii_int", "int"),     # after the ASCII-only regex
    ("stickyroute/state/memory_deliveries.py", "stored_bytes", "int"),  # cachetools' size bookkeeping, not a payload value
    ("stickyroute/routing/router.py", "__init__", "int"),  # signal retries from the configured classifier timeout
    ("stickyroute/state/budget.py", "refill_s", "float"),  # a configured rate, not a payload value
    ("stickyroute/server/logs.py", "formatTime", "int"),   # a log record's time (seconds), not a payload value
}
NOT_ASCII_INTEGERS = ["²", "¹", "٣", "３", "-٣", "1²", "۱۲", "⑦", " 7 ", "+7", "7.0", "1e3", "0x1f", "", "-"]


def _sites() -> set[tuple[str, str, str]]:
    found = set()
    for path in PAYLOAD_MODULES:
        tree = ast.parse(path.read_text())
        for func in ast.walk(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(func):
                if not isinstance(node, ast.Call):
                    continue
                name = None
                if isinstance(node.func, ast.Name) and node.func.id in CONVERTERS:
                    name = node.func.id
                elif isinstance(node.func, ast.Attribute) and node.func.attr in DIGIT_TESTS | CONVERTERS:
                    name = node.func.attr
                if name is not None:
                    found.add((str(path.relative_to(ROOT)), func.name, name))
    return found


def test_every_conversion_site_is_known() -> None:
    assert _sites() == KNOWN_SITES


@pytest.mark.parametrize("text", NOT_ASCII_INTEGERS)
def test_ascii_int_never_coerces(text: str) -> None:
    assert ascii_int(text) is None


@pytest.mark.parametrize(("text", "number"), [("0", 0), ("42", 42), ("-1001000000001", -1001000000001)])
def test_ascii_int_reads_plain_integers(text: str, number: int) -> None:
    assert ascii_int(text) == number


@pytest.mark.parametrize(("value", "expected"), [
    (3.0, "3"), (-5.0, "-5"), (2.5, "2.5"), (float("inf"), "inf"), (float("nan"), "nan"),
    ("²", "²"), ("٣", "٣"), ("+٣", "٣"), (7, "7"),
])
def test_normalise_id_keeps_strings_as_written(value: object, expected: str) -> None:
    assert normalise_id(value) == expected


@pytest.mark.parametrize("text", NOT_ASCII_INTEGERS)
def test_content_length_is_never_coerced(text: str) -> None:
    assert declared_length(text.encode()) is None


@pytest.mark.parametrize("chat", ["²", "٣", "３", "-100²"])
def test_agent_list_keeps_a_non_ascii_chat_id_as_the_string_received(chat: str) -> None:
    (envelope,) = telegram.parse(json.dumps({"update_id": 1, "message": {
        "message_id": 1, "from": {"id": 5}, "chat": {"id": chat, "type": "private"}, "date": 0,
        "text": "/agent", "message_thread_id": "¹", "is_topic_message": True}}).encode(), "tg")
    call = telegram.agent_list_call(envelope, [Agent("coder", "http://127.0.0.1:1")], "coder")
    assert (call["chat_id"], call["message_thread_id"]) == (chat, "¹")


async def test_agent_alone_in_a_non_ascii_digit_chat_is_answered_not_a_500(tmp_path: Path) -> None:
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            body = json.dumps({"update_id": 9, "message": {
                "message_id": 9, "from": {"id": 5, "is_bot": False, "first_name": "A"},
                "chat": {"id": "²", "type": "private"}, "date": 0, "text": "/agent"}}).encode()
            response = await proxy.post("/webhooks/telegram", body)
            three = await proxy.post("/webhooks/telegram", telegram_text(10, "/agent").replace(b'"id": 111, "type"', b'"id": "\\u0663", "type"'))
    assert response.status_code == 200
    assert response.json()["chat_id"] == "²"
    assert three.status_code == 200
    assert three.json()["chat_id"] == "٣"
