"""stickyroute/security.py: Telegram secret token, Meta X-Hub-Signature-256, Meta GET verification (T1, T14)."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from starlette.datastructures import Headers, QueryParams

from stickyroute.channels import security
from stickyroute.channels.security import (
    check_meta_signature,
    check_telegram_secret,
    meta_signature,
    verification_reply,
)

APP_SECRET = "test-app-secret"

# T1: Meta's bytes with "\/" and "\u00e9" escapes, exactly as sent (backslashes included).
T1_BODY = (
    rb'{"object":"whatsapp_business_account","entry":[{"id":"WABA1","changes":[{"field":"messages",'
    rb'"value":{"messaging_product":"whatsapp","metadata":{"phone_number_id":"PN1"},"contacts":[{"wa_id":'
    rb'"15550000001","profile":{"name":"Ana Test"}}],"messages":[{"from":"15550000001","id":"wamid.T1",'
    rb'"timestamp":"1700000000","type":"text","text":{"body":"see http:\/\/ex.test\/a caf\u00e9"}}]}}]}]}'
)
T1_SIGNATURE = "sha256=" + hmac.new(APP_SECRET.encode(), T1_BODY, hashlib.sha256).hexdigest()


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        pytest.param([(b"x-telegram-bot-api-secret-token", b"tg-secret-1")], True, id="raw-match"),
        pytest.param([(b"X-Telegram-Bot-Api-Secret-Token", b"tg-secret-1")], True, id="raw-any-case-name"),
        pytest.param(Headers({"X-Telegram-Bot-Api-Secret-Token": "tg-secret-1"}), True, id="starlette-headers"),
        pytest.param({"X-Telegram-Bot-Api-Secret-Token": "tg-secret-1"}, True, id="plain-dict-any-case"),
        pytest.param([(b"x-telegram-bot-api-secret-token", b"tg-secret-2")], False, id="wrong"),
        pytest.param([(b"x-telegram-bot-api-secret-token", b"TG-SECRET-1")], False, id="case-matters-in-value"),
        pytest.param([(b"x-telegram-bot-api-secret-token", b"tg-secret-1 ")], False, id="trailing-space"),
        pytest.param([(b"x-telegram-bot-api-secret-token", b"")], False, id="empty"),
        pytest.param([], False, id="missing"),
        pytest.param([(b"x-telegram-bot-api-secret-token", "tg-s\u00e9cret".encode())], False, id="non-ascii"),
    ],
)
def test_check_telegram_secret(headers: object, expected: bool) -> None:
    assert check_telegram_secret(headers, "tg-secret-1") is expected  # type: ignore[arg-type]


def test_check_telegram_secret_with_no_configured_secret_never_matches() -> None:
    assert check_telegram_secret([(b"x-telegram-bot-api-secret-token", b"")], "") is False


def test_secret_checks_compare_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(security.hmac, "compare_digest", spy)
    assert check_telegram_secret([(b"x-telegram-bot-api-secret-token", b"tg-secret-2")], "tg-secret-1") is False
    assert check_meta_signature(T1_BODY, [(b"x-hub-signature-256", T1_SIGNATURE.encode())], APP_SECRET) is True
    assert verification_reply({"hub.mode": "subscribe", "hub.verify_token": "x", "hub.challenge": "1"}, "VT-123") == (
        403,
        "forbidden",
    )
    assert calls == [
        (b"tg-secret-2", b"tg-secret-1"),
        (T1_SIGNATURE.encode(), T1_SIGNATURE.encode()),
        (b"x", b"VT-123"),
    ]


def test_meta_signature_is_hmac_sha256_over_raw_t1_bytes() -> None:
    assert meta_signature(T1_BODY, APP_SECRET) == T1_SIGNATURE
    assert b"http:\\/\\/ex.test\\/a caf\\u00e9" in T1_BODY


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param(T1_SIGNATURE.encode(), True, id="good"),
        pytest.param(T1_SIGNATURE.upper().replace("SHA256=", "sha256=").encode(), True, id="upper-hex"),
        pytest.param(T1_SIGNATURE.replace("sha256=", "SHA256=").encode(), True, id="upper-prefix"),
        pytest.param(T1_SIGNATURE[:-1].encode() + (b"0" if T1_SIGNATURE[-1] != "0" else b"1"), False, id="one-digit-off"),
        pytest.param(T1_SIGNATURE[7:].encode(), False, id="no-prefix"),
        pytest.param(b"sha1=" + T1_SIGNATURE[7:].encode(), False, id="sha1-prefix"),
        pytest.param(b"sha256=", False, id="empty-digest"),
        pytest.param(b"sha256=zz", False, id="not-hex"),
        pytest.param(None, False, id="missing"),
    ],
)
def test_check_meta_signature(header: bytes | None, expected: bool) -> None:
    headers = [(b"content-type", b"application/json")] + ([(b"X-Hub-Signature-256", header)] if header is not None else [])
    assert check_meta_signature(T1_BODY, headers, APP_SECRET) is expected


def test_meta_signature_fails_over_re_serialised_t1_json() -> None:
    """T1: a json.loads/json.dumps round trip changes the bytes, so the signature no longer matches."""
    import json

    reencoded = json.dumps(json.loads(T1_BODY), separators=(",", ":"), ensure_ascii=False).encode()
    assert reencoded != T1_BODY
    assert check_meta_signature(reencoded, [(b"x-hub-signature-256", T1_SIGNATURE.encode())], APP_SECRET) is False


def test_meta_signature_with_wrong_secret_or_no_secret_fails() -> None:
    headers = [(b"x-hub-signature-256", T1_SIGNATURE.encode())]
    assert check_meta_signature(T1_BODY, headers, "other-secret") is False
    assert check_meta_signature(T1_BODY, headers, "") is False


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("hub.mode=subscribe&hub.verify_token=VT-123&hub.challenge=1158201444", (200, "1158201444"), id="T14"),
        pytest.param("hub.challenge=1158201444&hub.verify_token=VT-123&hub.mode=subscribe", (200, "1158201444"), id="any-order"),
        pytest.param("hub.mode=subscribe&hub.verify_token=VT-999&hub.challenge=1158201444", (403, "forbidden"), id="T14-wrong-token"),
        pytest.param("hub.mode=subscribe&hub.challenge=1158201444", (403, "forbidden"), id="no-token"),
        pytest.param("hub.mode=unsubscribe&hub.verify_token=VT-123&hub.challenge=1", (403, "forbidden"), id="wrong-mode"),
        pytest.param("hub.mode=subscribe&hub.verify_token=VT-123", (403, "forbidden"), id="no-challenge"),
        pytest.param("", None, id="plain-get"),
        pytest.param("agent=auto&page=2", None, id="other-query"),
    ],
)
def test_verification_reply(query: str, expected: tuple[int, str] | None) -> None:
    assert verification_reply(QueryParams(query), "VT-123") == expected


def test_verification_reply_with_no_verify_token_configured_is_forbidden() -> None:
    query = QueryParams("hub.mode=subscribe&hub.verify_token=&hub.challenge=5")
    assert verification_reply(query, "") == (403, "forbidden")
