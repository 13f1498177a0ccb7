"""End to end, Telegram: the app in-process, real upstream agents on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from tests.proxy.harness import CLIENT_IP, Proxy, payload, sha, telegram_text, upstream_set, write_config

# The shipped samples: text_private from user 7212345678 (no binding), group_command in chat
# -1003456789012, forum_topic_message in chat -1001987654321 topic 412, callback_query from 7212345678.
LAYER1 = """
[[channels.telegram.bindings]]
user = "5234567890"
agent = "billing"
[[channels.telegram.bindings]]
chat = "-1003456789012"
agent = "support"
[[channels.telegram.thread_routes]]
chat = "-1001987654321"
thread = "412"
agent = "qa"
"""


@pytest.mark.parametrize(("sample", "agent", "reason"), [
    ("text_private", "general", "default"),
    ("group_command", "billing", "binding"),
    ("group_mention", "support", "chat_binding"),
    ("callback_query", "general", "non_text"),
    ("edited_message", "general", "non_text"),
    ("channel_post", "general", "no_sender"),
    ("my_chat_member", "support", "chat_binding"),
])
async def test_shipped_sample_lands_at_layer1_agent_byte_identical(tmp_path, sample, agent, reason):
    body = payload("telegram", sample)
    with upstream_set("general", "billing", "support", "qa") as ups:
        config = write_config(tmp_path, ups, telegram=LAYER1)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram?src=tg&b=2&a=%2F", body)
        assert response.status_code == 200
        assert response.json() == {"ok": True}
        got = {name: up.requests for name, up in ups.items() if up.requests}
        assert list(got) == [agent]
        request = got[agent][0]
        assert sha(request.body) == sha(body)
        assert request.method == "POST"
        assert request.target == b"/webhooks/telegram?src=tg&b=2&a=%2F"
        assert request.header_values(b"x-stickyroute-agent") == [agent.encode()]
        assert request.header_values(b"x-stickyroute-reason") == [reason.encode()]
        assert request.header_values(b"x-forwarded-for") == [CLIENT_IP.encode()]
        assert request.header_values(b"host") == [ups[agent].host.encode()]


async def test_forum_topic_goes_to_thread_route_but_reply_chain_does_not(tmp_path):
    """T18: only is_topic_message marks a forum topic."""
    routes = '[[channels.telegram.thread_routes]]\nchat = "-1001000000001"\nthread = "4242"\nagent = "qa"\n'
    with upstream_set("general", "qa") as ups:
        config = write_config(tmp_path, ups, telegram=routes)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "hi", chat=-1001000000001, thread=4242))
            await proxy.post("/webhooks/telegram", telegram_text(2, "hi", chat=-1001000000001, thread=4242, topic=True))
        assert [json.loads(r.body)["update_id"] for r in ups["general"].requests] == [1]
        assert [json.loads(r.body)["update_id"] for r in ups["qa"].requests] == [2]


async def test_numeric_payload_ids_match_string_config_ids(tmp_path):
    """T25: config ids are strings, payload ids numbers."""
    binding = '[[channels.telegram.bindings]]\nchat = "-1001000000001"\nagent = "billing"\n'
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, telegram=binding)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "anything at all", chat=-1001000000001))
        assert len(ups["billing"].requests) == 1


async def test_callback_query_routes_by_presser_not_bot(tmp_path):
    """T20: callback_query.from (222) decides, not message.from (the bot, 999)."""
    bindings = ('[[channels.telegram.bindings]]\nuser = "111"\nagent = "billing"\n'
                '[[channels.telegram.bindings]]\nuser = "222"\nagent = "support"\n'
                '[[channels.telegram.bindings]]\nuser = "999"\nagent = "qa"\n')
    body = (b'{"update_id":2001,"callback_query":{"id":"cq1","from":{"id":222,"is_bot":false,"first_name":"Ben"},'
            b'"message":{"message_id":77,"from":{"id":999,"is_bot":true,"first_name":"MyBot"},"chat":{"id":-1001000000001,'
            b'"type":"supergroup"},"date":1700000000,"text":"pick one"},"chat_instance":"ci-1","data":"opt-2"}}')
    with upstream_set("general", "billing", "support", "qa") as ups:
        config = write_config(tmp_path, ups, telegram=bindings)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", body)
        assert [len(up.requests) for up in ups.values()] == [0, 0, 1, 0]


@pytest.mark.parametrize(("header", "status", "forwarded"), [
    ({"X-Telegram-Bot-Api-Secret-Token": "tg-secret-1"}, 200, 1),
    ({"X-Telegram-Bot-Api-Secret-Token": "tg-secret-2"}, 401, 0),
    ({}, 401, 0),
])
async def test_secret_token_checked(tmp_path, header, status, forwarded):
    settings = 'secret_token = "tg-secret-1"\n[channels.telegram.overrides]\nauto_route = "explicit_only"\n'
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, telegram=settings)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram", telegram_text(1, "/agent billing"), header)
            routes = await proxy.live_routes("telegram")
        assert response.status_code == status
        assert len(ups["billing"].requests) == forwarded
        assert routes == forwarded  # a rejected request touches no route state
        if forwarded:
            assert ups["billing"].requests[0].header_values(b"x-telegram-bot-api-secret-token") == [b"tg-secret-1"]


async def test_explicit_switch_with_bot_suffix(tmp_path):
    """T16: /agent@MyBot switches (case-insensitive); /agent@OtherBot is not ours."""
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, telegram='bot_username = "MyBot"\n')
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "/agent@OtherBot billing", chat=-1001000000001))
            await proxy.post("/webhooks/telegram", telegram_text(2, "/agent@mybot billing", chat=-1001000000001))
            await proxy.post("/webhooks/telegram", telegram_text(3, "and what about my invoice", chat=-1001000000001))
        assert [json.loads(r.body)["update_id"] for r in ups["general"].requests] == [1]
        assert [(json.loads(r.body)["update_id"], r.header_values(b"x-stickyroute-reason")) for r in ups["billing"].requests] == [
            (2, [b"explicit"]), (3, [b"explicit_pin"])]


async def test_agent_command_alone_answered_by_proxy_with_send_message(tmp_path):
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "/agent billing"))
            response = await proxy.post("/webhooks/telegram", telegram_text(2, "/agent"))
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/json"
        call = response.json()
        assert call["method"] == "sendMessage"
        assert call["chat_id"] == 111
        assert call["text"].splitlines()[1:] == ["• general - the general agent", "• billing (current) - the billing agent"]
        assert [json.loads(r.body)["update_id"] for r in ups["billing"].requests] == [1]
        assert ups["general"].requests == []


async def test_unparsed_body_forwarded_to_default(tmp_path):
    with upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram", b"{not json")
        assert response.status_code == 200
        assert [r.body for r in ups["general"].requests] == [b"{not json"]
        assert ups["general"].requests[0].header_values(b"x-stickyroute-reason") == [b"unparsed"]


async def test_unknown_path_404_and_oversized_body_413(tmp_path):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, top="[server]\nmax_body_bytes = 1024\n")
        async with Proxy(config) as proxy:
            missing = await proxy.post("/webhooks/nope", b"{}")
            large = await proxy.post("/webhooks/telegram", telegram_text(1, "x" * 2000))
            fits = await proxy.post("/webhooks/telegram", telegram_text(2, "x" * 100))
        assert (missing.status_code, large.status_code, fits.status_code) == (404, 413, 200)
        assert len(ups["general"].requests) == 1


async def test_inline_reply_relayed_and_stored_for_redelivery(tmp_path):
    """T6: a redelivered update_id is answered with the stored reply, not forwarded again."""
    reply = b'{"method":"sendMessage","chat_id":111,"text":"hi"}'
    with upstream_set("general") as ups:
        ups["general"].respond(status=200, headers=[(b"content-type", b"application/json")], body=reply)
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/telegram", telegram_text(5001, "what is my balance?"))
            again = await proxy.post("/webhooks/telegram", telegram_text(5001, "what is my balance?"))
        assert (first.status_code, first.content) == (200, reply)
        assert (again.status_code, again.content) == (200, reply)
        assert again.headers["content-type"] == "application/json"
        assert again.headers["x-stickyroute-reason"] == "redelivery"
        assert len(ups["general"].requests) == 1


async def test_redelivery_after_failure_is_forwarded_again_to_the_same_agent(tmp_path):
    with upstream_set("general", "billing") as ups:
        ups["billing"].respond(status=500, body=b"down")
        config = write_config(tmp_path, ups, telegram='[channels.telegram.overrides]\nauto_route = "explicit_only"\n')
        async with Proxy(config) as proxy:
            first = await proxy.post("/webhooks/telegram", telegram_text(7, "/agent billing"))
            ups["billing"].respond(status=200)
            again = await proxy.post("/webhooks/telegram", telegram_text(7, "/agent billing"))
            third = await proxy.post("/webhooks/telegram", telegram_text(7, "/agent billing"))
        assert (first.status_code, again.status_code, third.status_code) == (500, 200, 200)
        assert len(ups["billing"].requests) == 2
        assert [r.header_values(b"x-stickyroute-reason") for r in ups["billing"].requests] == [[b"explicit"]] * 2
        assert third.headers["x-stickyroute-reason"] == "redelivery"


async def test_redelivery_while_in_flight_waits_for_first_result(tmp_path):
    import asyncio

    with upstream_set("general") as ups:
        ups["general"].respond(status=200, body=b'{"first":true}', hang=True)
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            first = asyncio.ensure_future(proxy.post("/webhooks/telegram", telegram_text(9, "hello there, agent")))
            await ups["general"].until_requests(1)
            second = asyncio.ensure_future(proxy.post("/webhooks/telegram", telegram_text(9, "hello there, agent")))
            await asyncio.sleep(0)
            ups["general"].release()
            one, two = await asyncio.wait_for(asyncio.gather(first, second), 10)
        assert one.content == two.content == b'{"first":true}'
        assert len(ups["general"].requests) == 1


@pytest.mark.parametrize(("status", "expected"), [(None, 502)])
async def test_agent_down_gives_502(tmp_path, status, expected):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
    # the upstream server is stopped now: connection refused
    async with Proxy(config) as proxy:
        response = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
    assert response.status_code == expected


def _with_upstream(config, **upstream):
    return type(config)(**{**{f: getattr(config, f) for f in config.__dataclass_fields__},
                           "upstream": type(config.upstream)(**upstream)})


async def test_agent_too_slow_gives_504_and_its_late_answer_answers_the_retry(tmp_path):
    """Issue #10: an agent slower than the deadline gets the update once; the platform gets 504,
    and its retry gets the agent's late answer instead of a second forward."""
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True, body=b'{"late":true}')
        config = _with_upstream(write_config(tmp_path, ups), connect_timeout_s=0.1, timeout_s=0.2)
        async with Proxy(config) as proxy:
            slow = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            ups["general"].release()
            retry = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            late = dict(proxy.service.dispatcher.late.outcomes)
        assert (slow.status_code, retry.status_code, retry.content) == (504, 200, b'{"late":true}')
        assert retry.headers["x-stickyroute-reason"] == "redelivery"
        assert (len(ups["general"].requests), late) == (1, {"answered": 1})


async def test_agent_too_slow_without_late_answers_gives_504_and_retry_is_forwarded(tmp_path):
    """`late_answer_s = 0`: the request is cancelled at the 504 and the retry forwarded again."""
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True)
        config = _with_upstream(write_config(tmp_path, ups), connect_timeout_s=2.0, timeout_s=0.2, late_answer_s=0.0)
        async with Proxy(config) as proxy:
            slow = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            ups["general"].respond()
            ups["general"].release()
            retry = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
        assert (slow.status_code, retry.status_code) == (504, 200)
        assert len(ups["general"].requests) == 2


async def test_a_late_failure_releases_the_delivery_for_the_retry(tmp_path):
    """A late answer that is not a 2xx is not kept: a retry waiting for it gets it (500), the next
    one is forwarded again."""
    with upstream_set("general") as ups:
        ups["general"].respond(hang=True, status=500)
        config = _with_upstream(write_config(tmp_path, ups), connect_timeout_s=0.1, timeout_s=0.2)
        async with Proxy(config) as proxy:
            slow = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            ups["general"].respond()
            ups["general"].release()
            retry = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            third = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
            late = dict(proxy.service.dispatcher.late.outcomes)
        assert (slow.status_code, retry.status_code, third.status_code) == (504, 500, 200)
        assert (len(ups["general"].requests), late) == (2, {"failed": 1})


async def test_redirect_relayed_not_followed(tmp_path):
    """T33."""
    with upstream_set("general") as ups:
        ups["general"].respond(status=307, headers=[(b"location", b"/webhooks/telegram/")], body=b"")
        config = write_config(tmp_path, ups)
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"))
        assert response.status_code == 307
        assert response.headers["location"] == "/webhooks/telegram/"
        assert len(ups["general"].requests) == 1


async def test_binding_specificity_topic_route_does_not_capture_whole_chat(tmp_path):
    """T23 mapped: a thread route for one topic of a chat must not capture the chat's other
    topics, which fall through to the chat binding; a user binding beats both."""
    layer1 = ('[[channels.telegram.thread_routes]]\nchat = "-1001000000001"\nthread = "10"\nagent = "sales"\n'
              '[[channels.telegram.bindings]]\nchat = "-1001000000001"\nagent = "support"\n'
              '[[channels.telegram.bindings]]\nuser = "222"\nagent = "billing"\n')
    with upstream_set("general", "sales", "support", "billing") as ups:
        config = write_config(tmp_path, ups, telegram=layer1)
        async with Proxy(config) as proxy:
            await proxy.post("/webhooks/telegram", telegram_text(1, "hello", chat=-1001000000001, thread=10, topic=True))
            await proxy.post("/webhooks/telegram", telegram_text(2, "hello", chat=-1001000000001, thread=11, topic=True))
            await proxy.post("/webhooks/telegram", telegram_text(3, "hello", user=222, chat=-1001000000001, thread=10, topic=True))
            await proxy.post("/webhooks/telegram", telegram_text(4, "hello", chat=-1001000000002))
        ids = {name: [json.loads(r.body)["update_id"] for r in up.requests] for name, up in ups.items()}
        assert ids == {"general": [4], "sales": [1], "support": [2], "billing": [3]}


async def test_updates_without_sender_touch_no_route_and_call_no_classifier(tmp_path):
    """T9: channel_post and my_chat_member go to the default; no classifier call, no route write."""
    import respx

    posts = [
        b'{"update_id":9001,"channel_post":{"message_id":1,"sender_chat":{"id":-1002000000001,"type":"channel",'
        b'"title":"News"},"chat":{"id":-1002000000001,"type":"channel","title":"News"},"date":1700000000,"text":"hello"}}',
        b'{"update_id":9002,"my_chat_member":{"chat":{"id":-1001000000001,"type":"supergroup"},"from":{"id":111,'
        b'"is_bot":false,"first_name":"Ana"},"date":1700000000}}',
    ]
    with respx.mock(assert_all_mocked=True) as groq, upstream_set("general", "billing") as ups:
        config = write_config(tmp_path, ups, telegram='[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\n',
                              agents={"billing": 'keywords = ["hello"]'})
        import httpx

        async with httpx.AsyncClient() as groq_client:
            async with Proxy(config, env={"GROQ_API_KEY": "k"}, groq_http_client=groq_client) as proxy:
                statuses = [(await proxy.post("/webhooks/telegram", body)).status_code for body in posts]
                routes = await proxy.live_routes("telegram")
        assert statuses == [200, 200]
        assert routes == 0
        assert len(groq.calls) == 0
        assert [r.header_values(b"x-stickyroute-reason") for r in ups["general"].requests] == [[b"no_sender"]] * 2


@pytest.mark.parametrize(("peer", "received", "expected"), [
    # T3/T35: a trusted front (loopback) keeps its scheme/host and the chain is extended
    ("127.0.0.1", {"X-Forwarded-For": "198.51.100.1", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "hooks.example.test"},
     {b"x-forwarded-for": [b"198.51.100.1, 127.0.0.1"], b"x-forwarded-proto": [b"https"],
      b"x-forwarded-host": [b"hooks.example.test"]}),
    # an untrusted peer cannot spoof them: replaced by what the proxy saw
    ("203.0.113.7", {"X-Forwarded-For": "10.0.0.1", "X-Forwarded-Proto": "https", "X-Forwarded-Host": "evil.test"},
     {b"x-forwarded-for": [b"203.0.113.7"], b"x-forwarded-proto": [b"http"], b"x-forwarded-host": [b"hooks.example.test"]}),
])
async def test_forwarded_headers_extended_only_for_trusted_peers(tmp_path, peer, received, expected):
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups)
        async with Proxy(config, client_ip=peer) as proxy:
            await proxy.post("/webhooks/telegram?agent=auto", telegram_text(1, "hello"), received)
        (request,) = ups["general"].requests
        assert {name: request.header_values(name) for name in expected} == expected
        assert request.header_values(b"host") == [ups["general"].host.encode()]
        assert request.target == b"/webhooks/telegram?agent=auto"


async def test_signature_and_vendor_headers_reach_the_agent_unchanged(tmp_path):
    """T5: every signature header is forwarded as received."""
    vendor = {"X-Slack-Signature": "v0=abc", "X-Slack-Request-Timestamp": "1700000000", "X-Slack-Retry-Num": "1",
              "X-Slack-Retry-Reason": "http_timeout", "X-Hub-Signature-256": "sha256=00ff", "X-Twilio-Signature": "tw==",
              "X-Telegram-Bot-Api-Secret-Token": "tg-secret-1", "Authorization": "Bearer eyJ0"}
    with upstream_set("general") as ups:
        config = write_config(tmp_path, ups, telegram='secret_token = "tg-secret-1"\n')
        async with Proxy(config) as proxy:
            response = await proxy.post("/webhooks/telegram", telegram_text(1, "hello"), vendor)
        assert response.status_code == 200
        (request,) = ups["general"].requests
        assert {k: request.header_values(k.lower().encode()) for k in vendor} == {k: [v.encode()] for k, v in vendor.items()}
