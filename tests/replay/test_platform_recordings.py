"""Recording, replay, learn and explain on the Slack, Discord, LINE, Messenger and Instagram
channels: traffic recorded through the running proxy replays to the decisions it got, a new config
changes what it should, `learn` reads its texts, `explain` works on each channel."""

from __future__ import annotations

import pytest

from stickyroute.clock import FakeClock
from stickyroute.config import load_config
from stickyroute.forwarding.recording import Recorder
from stickyroute.learn.labels import Evidence
from stickyroute.learn.recorded import labels_from_recording
from stickyroute.replay.explain import explain
from stickyroute.replay.recorded import compare, load_recording, route_recording
from tests.proxy.harness import Proxy, upstream_set, write_channels
from tests.proxy.platforms import (
    DISCORD_PUBLIC,
    LINE_SECRET,
    META_SECRET,
    SLACK_SECRET,
    discord_command,
    discord_headers,
    line_body,
    line_event,
    line_headers,
    meta_body,
    meta_headers,
    meta_message,
    slack_command,
    slack_headers,
    slack_message,
)

NOW = 1767600000.0
AUTO = '[channels.{0}.overrides]\nauto_route = "sticky_heuristic"\n'
CHANNELS = {
    "slack": f'type = "slack"\ndefault_agent = "general"\nsigning_secret = "{SLACK_SECRET}"\n' + AUTO.format("slack"),
    "discord": f'type = "discord"\ndefault_agent = "general"\npublic_key = "{DISCORD_PUBLIC}"\n' + AUTO.format("discord"),
    "line": f'type = "line"\ndefault_agent = "general"\nchannel_secret = "{LINE_SECRET}"\n' + AUTO.format("line"),
    "messenger": f'type = "messenger"\ndefault_agent = "general"\napp_secret = "{META_SECRET}"\n'
                 + AUTO.format("messenger"),
    "instagram": f'type = "instagram"\ndefault_agent = "general"\napp_secret = "{META_SECRET}"\n'
                 + AUTO.format("instagram"),
}
AGENTS = {"billing": 'keywords = ["invoice", "refund"]', "ops": 'keywords = ["kubernetes", "outage"]'}


async def record(tmp_path, ups):
    config = write_channels(tmp_path, ups, CHANNELS, agents=AGENTS)
    out = tmp_path / "traffic.jsonl"
    recorder = Recorder(str(out), config)
    clock = FakeClock(NOW)
    slack = [slack_message("my invoice shows a wrong refund", ts="1767600001.000001", event_id="Ev1"),
             slack_message("the kubernetes outage again", ts="1767600002.000001", event_id="Ev2", user="U2"),
             slack_message("my invoice shows a wrong refund", ts="1767600001.000001", event_id="Ev1-copy"),
             slack_command("ops", trigger="t1")]
    line = line_body(line_event("E1", "Uana", "a refund for my invoice please"),
                     line_event("E2", "Uben", "the kubernetes outage is back"))
    meta = meta_body(meta_message("m1", "PSID1", "is my refund on its way?"))
    insta = meta_body(meta_message("ig1", "IGSID1", "the kubernetes outage broke checkout"), obj="instagram")
    discord = discord_command("d1", "ask", question="why did the refund fail on my invoice?")
    async with Proxy(config, clock=clock, recorder=recorder) as proxy:
        for body in slack:
            assert (await proxy.post("/webhooks/slack", body, slack_headers(body, NOW))).status_code == 200
            clock.advance(10)
        assert (await proxy.post("/webhooks/line", line, line_headers(line))).status_code == 200
        assert (await proxy.post("/webhooks/messenger", meta, meta_headers(meta))).status_code == 200
        assert (await proxy.post("/webhooks/instagram", insta, meta_headers(insta))).status_code == 200
        assert (await proxy.post("/webhooks/discord", discord, discord_headers(discord))).status_code == 200
    recorder.close()
    return config, out


async def test_recorded_traffic_of_every_new_channel_replays_to_its_decisions(tmp_path):
    with upstream_set("general", "billing", "ops") as ups:
        config, out = await record(tmp_path, ups)
    recording = load_recording(str(out))
    recorded = [(r["channel"], d["agent"], d["reason"]) for r in recording.records for d in r["decisions"]]
    assert recorded == [
        ("slack", "billing", "classified"), ("slack", "ops", "classified"), ("slack", "billing", "classified"),
        ("slack", "ops", "explicit"), ("line", "billing", "classified"), ("line", "ops", "classified"),
        ("messenger", "billing", "classified"), ("instagram", "ops", "classified"),
        ("discord", "billing", "classified")]
    replayed = await route_recording(recording.records, config)
    assert [(r.conversation.split()[0], r.agent, r.reason) for r in replayed] == recorded
    assert replayed[0].conversation == "slack chat=D0TEST sender=U0TEST"


async def test_a_new_binding_changes_the_replayed_decisions(tmp_path):
    with upstream_set("general", "billing", "ops") as ups:
        config, out = await record(tmp_path, ups)
    text = (tmp_path / "proxy.toml").read_text() + '\n[[channels.line.bindings]]\nuser = "Uben"\nagent = "general"\n'
    (tmp_path / "new.toml").write_text(text)
    changes = await compare(load_recording(str(out)).records, config, load_config(tmp_path / "new.toml", env={}))
    assert {c: [(x.old.agent, x.new.agent, x.new.reason) for x in v] for c, v in changes.items()} == {
        "line chat=Uben sender=Uben": [("ops", "general", "binding")]}


async def test_learn_reads_the_texts_of_every_new_channel(tmp_path):
    with upstream_set("general", "billing", "ops") as ups:
        config, out = await record(tmp_path, ups)
    recording = load_recording(str(out))
    conversations = labels_from_recording(recording.records, config, recording.version)
    credited = sorted((m.agent, m.text) for c in conversations for m in c.messages if m.evidence is Evidence.CREDIT)
    assert credited == [
        ("billing", "a refund for my invoice please"), ("billing", "is my refund on its way?"),
        ("billing", "my invoice shows a wrong refund"), ("billing", "why did the refund fail on my invoice?"),
        ("ops", "the kubernetes outage again"), ("ops", "the kubernetes outage broke checkout"),
        ("ops", "the kubernetes outage is back")]


@pytest.mark.parametrize("channel", sorted(CHANNELS))
def test_explain_works_on_every_new_channel(tmp_path, channel):
    with upstream_set("general", "billing", "ops") as ups:
        config = write_channels(tmp_path, ups, CHANNELS, agents=AGENTS)
    lines = explain(config, channel, "@billing the refund please").splitlines()
    assert lines[0] == f"channel {channel}: strategy sticky_heuristic, threshold 6, sticky bonus 4, divergence count 2"
    assert lines[-2:] == ["decision: billing (explicit) while the sender has explicit switches left "
                          "(explicit_switches_per_minute 10),", "  else stay on general (explicit_limited)"]
