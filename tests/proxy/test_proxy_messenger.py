"""End to end, Messenger and Instagram: GET verification, one conversation routed, switched by
`@name`, redelivered by mid, the page's echo following the person's route without switching, a
mixed batch split and re-signed, an Instagram DM. Real upstream agents on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import json

from tests.proxy.harness import Proxy, sha, upstream_set, write_channels
from tests.proxy.platforms import META_SECRET, meta_body, meta_headers, meta_message

META = f'default_agent = "general"\napp_secret = "{META_SECRET}"\nverify_token = "VT-1"\n'
CHANNELS = {"messenger": 'type = "messenger"\n' + META, "instagram": 'type = "instagram"\n' + META}


def independent(body: bytes) -> bytes:
    return ("sha256=" + hmac.new(META_SECRET.encode(), body, hashlib.sha256).hexdigest()).encode()


async def test_get_verification_answered_by_the_proxy(tmp_path):
    with upstream_set("general") as ups:
        async with Proxy(write_channels(tmp_path, ups, CHANNELS)) as proxy:
            good = await proxy.get("/webhooks/instagram?hub.mode=subscribe&hub.verify_token=VT-1&hub.challenge=77")
            bad = await proxy.get("/webhooks/messenger?hub.mode=subscribe&hub.verify_token=no&hub.challenge=77")
        assert (good.status_code, good.text, bad.status_code) == (200, "77", 403)
        assert ups["general"].requests == []


async def test_a_conversation_switched_redelivered_echoed_and_split(tmp_path):
    with upstream_set("general", "billing") as ups:
        async with Proxy(write_channels(tmp_path, ups, CHANNELS)) as proxy:
            async def post(body: bytes, path: str = "/webhooks/messenger"):
                return await proxy.post(path, body, meta_headers(body))

            first = meta_body(meta_message("m1", "PSID1", "do you deliver on sundays?"))
            switch = meta_body(meta_message("m2", "PSID1", "@billing I was charged twice"))
            echo = meta_body(meta_message("m3", "PSID1", "@general connecting you", echo=True))
            later = meta_body(meta_message("m4", "PSID1", "it was on the 3rd of March"))
            unsigned = await proxy.post("/webhooks/messenger", first, {"X-Hub-Signature-256": "sha256=00"})
            for body in (first, switch, echo, later):
                assert (await post(body)).status_code == 200
            again = await post(switch)
            mixed = meta_body(meta_message("m5", "PSID1", "and the receipt?"), meta_message("m6", "PSID2", "hi all"))
            split = await post(mixed)
            instagram = meta_body(meta_message("ig1", "IGSID1", "is the red one in stock?"), obj="instagram")
            await post(instagram, "/webhooks/instagram")
        assert unsigned.status_code == 401
        assert again.headers["x-stickyroute-reason"] == "redelivery"
        assert split.status_code == 200
        general, billing = ups["general"].requests, ups["billing"].requests
        assert [sha(r.body) for r in general[:1]] == [sha(first)]
        assert [sha(r.body) for r in billing[:3]] == [sha(switch), sha(echo), sha(later)]
        assert [r.header_values(b"x-stickyroute-reason")[0] for r in billing[:3]] == [
            b"explicit", b"user_event", b"explicit_pin"]
        parts = {"billing": billing[3], "general": general[1]}
        for agent, mid in (("billing", "m5"), ("general", "m6")):
            request = parts[agent]
            doc = json.loads(request.body)
            assert [m["message"]["mid"] for e in doc["entry"] for m in e["messaging"]] == [mid]
            assert request.header_values(b"x-hub-signature-256") == [independent(request.body)]
        assert sha(general[2].body) == sha(instagram)
        assert len(general) == 3 and len(billing) == 4
