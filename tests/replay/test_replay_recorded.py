"""Record real Telegram webhook bodies, then replay them: same decisions; what-if diffs."""

from __future__ import annotations

import argparse
import base64
import json
from pathlib import Path

from stickyroute import channels
from stickyroute.config.model import Agent, Channel, ChannelType, Config, RoutingSettings, Strategy
from stickyroute.forwarding.inbound import Inbound
from stickyroute.forwarding.recording import Recorder, body_of
from stickyroute.replay import cli as replay_cli
from stickyroute.replay.offline import offline_router
from stickyroute.replay.recorded import (
    compare,
    format_changes,
    is_recording,
    keyword_classifier_for,
    read_recording,
    route_recording,
)
from stickyroute.routing.engine import Decision

DATA = Path(__file__).parent / "data"
URL = "http://127.0.0.1:9/unused"
# (sample file, time in seconds); the last one is Telegram redelivering the first update.
TRAFFIC = [("text_private.json", 100.0), ("group_mention.json", 160.0), ("group_command.json", 220.0),
           ("callback_query.json", 280.0), ("edited_message.json", 340.0), ("text_private.json", 400.0)]


def config(strategy: Strategy, path: str = "old.toml") -> Config:
    agents = {
        "support": Agent("support", URL, description="Anything else."),
        "billing": Agent("billing", URL, description="Invoices.", keywords=("invoice", "billing", "refund")),
        "ops": Agent("ops", URL, description="Operations.", keywords=("incidents", "sla", "outage")),
    }
    channel = Channel("telegram", ChannelType.TELEGRAM, ("/tg",), "support",
                      routing=RoutingSettings(strategy=strategy), bot_username="acme_helper_bot")
    return Config(path=path, agents=agents, channels={"telegram": channel})


def inbound(body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> Inbound:
    return Inbound("POST", "/tg", b"/tg", b"", headers or [(b"content-type", b"application/json")], body,
                   "127.0.0.1", "https", "proxy.example")


async def live_run(cfg: Config, recorder: Recorder) -> list[tuple[str, str]]:
    """What the server decides: record, parse, route (a redelivery reuses its first decision)."""
    router = offline_router(cfg, keyword_classifier_for(cfg))
    first: dict[str, tuple[str, str]] = {}
    out = []
    for name, now in TRAFFIC:
        body = (DATA / name).read_bytes()
        (envelope,) = channels.parse("telegram", body, "telegram")
        if envelope.delivery_id not in first:
            decision = await router.decide("telegram", envelope, now)
            first[envelope.delivery_id] = (decision.agent, decision.reason)
        recorder(inbound(body), now, [Decision(*first[envelope.delivery_id])])
        out.append(first[envelope.delivery_id])
    return out


async def test_replaying_a_recording_gives_the_live_decisions(tmp_path) -> None:
    cfg = config(Strategy.STICKY_HEURISTIC)
    path = tmp_path / "traffic.jsonl"
    recorder = Recorder(str(path), cfg)
    live = await live_run(cfg, recorder)
    recorder.close()
    # Lena's invoice: billing by keyword (first message); the group mention of incidents and
    # Tomas's SLA question: ops; the button and the edit follow Lena's private route.
    assert live == [("billing", "classified"), ("ops", "classified"), ("ops", "classified"),
                    ("billing", "non_text"), ("billing", "non_text"), ("billing", "classified")]
    named, records = read_recording(path.read_text().splitlines())
    assert named == str(Path("old.toml").resolve())  # written absolute: replays from any directory
    assert [r["decisions"] for r in records][:2] == [[{"agent": "billing", "reason": "classified"}],
                                                      [{"agent": "ops", "reason": "classified"}]]
    replayed = await route_recording(records, cfg)
    assert [(r.agent, r.reason) for r in replayed] == live
    assert [r.conversation for r in replayed][:3] == [
        "telegram chat=5123456789 sender=5123456789", "telegram chat=-1003456789012 sender=5123456789",
        "telegram chat=-1003456789012 sender=5234567890"]


async def test_what_if_lists_the_changed_decisions_per_conversation(tmp_path) -> None:
    path = tmp_path / "traffic.jsonl"
    recorder = Recorder(str(path), config(Strategy.STICKY_HEURISTIC))
    await live_run(config(Strategy.STICKY_HEURISTIC), recorder)
    recorder.close()
    _named, records = read_recording(path.read_text().splitlines())
    changes = await compare(records, config(Strategy.STICKY_HEURISTIC), config(Strategy.OFF, "new.toml"))
    assert format_changes(changes, 6) == "\n".join([
        "6 of 6 routed message(s) change, in 3 conversation(s)",
        "telegram chat=5123456789 sender=5123456789",
        "  #0 t=100 'Hi, my invoice for March looks wrong': billing (classified) -> support (default)",
        "  #3 t=280 'plan:pro': billing (non_text) -> support (non_text)",
        "  #4 t=340 'Hi, my invoice for April looks wrong': billing (non_text) -> support (non_text)",
        "  #5 t=400 'Hi, my invoice for March looks wrong': billing (classified) -> support (default)",
        "telegram chat=-1003456789012 sender=5123456789",
        "  #1 t=160 \"@acme_helper_bot summarise today's inci…\": ops (classified) -> support (default)",
        "telegram chat=-1003456789012 sender=5234567890",
        "  #2 t=220 '/ask@acme_helper_bot what is our SLA?': ops (classified) -> support (default)",
    ])
    assert await compare(records, config(Strategy.OFF), config(Strategy.OFF)) == {}


def test_recorder_drops_secret_headers_and_keeps_binary_bodies(tmp_path) -> None:
    path = tmp_path / "r.jsonl"
    recorder = Recorder(str(path), config(Strategy.OFF))
    headers = [(b"Content-Type", b"application/json"), (b"X-Telegram-Bot-Api-Secret-Token", b"s3cret"),
               (b"Authorization", b"Bearer x"), (b"Cookie", b"a=b"), (b"X-Hub-Signature-256", b"sha256=00"),
               (b"X-Hub-Signature", b"sha1=00"), (b"User-Agent", b"tg")]
    recorder(inbound(b"\xff\xfe", headers), 12.5)
    recorder.close()
    again = Recorder(str(path), config(Strategy.OFF))  # appending: no second header line
    again(inbound(b'{"update_id": 1}'), 13.0)
    again.close()
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0] == {"recording": "stickyroute", "version": 2, "config": str(Path("old.toml").resolve())}
    assert lines[1] == {"time": 12.5, "channel": "telegram", "method": "POST", "path": "/tg", "query": "",
                        "headers": [["Content-Type", "application/json"], ["User-Agent", "tg"]],
                        "body_b64": base64.b64encode(b"\xff\xfe").decode()}
    assert body_of(lines[1]) == b"\xff\xfe"
    assert lines[2]["body"] == '{"update_id": 1}' and len(lines) == 3
    assert is_recording(path.read_text().splitlines()[0])
    assert not is_recording((DATA / "hand.jsonl").read_text().splitlines()[0])


async def test_cli_replays_a_recording_under_a_new_config(tmp_path, capsys, monkeypatch) -> None:
    path = tmp_path / "traffic.jsonl"
    recorder = Recorder(str(path), config(Strategy.STICKY_HEURISTIC))
    await live_run(config(Strategy.STICKY_HEURISTIC), recorder)
    recorder.close()
    configs = {str(Path("old.toml").resolve()): config(Strategy.STICKY_HEURISTIC),
               "new.toml": config(Strategy.EXPLICIT_ONLY, "new.toml")}
    monkeypatch.setattr(replay_cli, "_load_config", configs.__getitem__)
    parser = argparse.ArgumentParser()
    replay_cli.add_arguments(parser)
    code = await _run_in_thread(replay_cli.run, parser.parse_args([str(path), "--config", "new.toml"]))
    assert code == 0
    # explicit_only also classifies first messages: the button and the edit keep their route.
    assert capsys.readouterr().out == "no decision changes in 6 routed message(s)\n"


async def _run_in_thread(fn, *args):
    import asyncio

    return await asyncio.to_thread(fn, *args)


MINIMAL_CONFIG = """
[agents.support]
url = "http://127.0.0.1:9/unused"
[agents.billing]
url = "http://127.0.0.1:9/unused"
keywords = ["invoice"]
[channels.telegram]
path = "/tg"
default_agent = "support"
[channels.telegram.overrides]
auto_route = "sticky_heuristic"
"""


def test_a_version_1_config_path_is_read_relative_to_the_recording(tmp_path, monkeypatch, capsys) -> None:
    site = tmp_path / "site"
    (site / "config").mkdir(parents=True)
    (site / "config" / "proxy.toml").write_text(MINIMAL_CONFIG)
    recording = site / "traffic.jsonl"
    body = (DATA / "text_private.json").read_text()
    recording.write_text("\n".join([
        json.dumps({"recording": "stickyroute", "version": 1, "config": "config/proxy.toml"}),
        json.dumps({"time": 100.0, "channel": "telegram", "method": "POST", "path": "/tg", "query": "",
                    "headers": [], "body": body}),
    ]) + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    parser = argparse.ArgumentParser()
    replay_cli.add_arguments(parser)
    code = replay_cli.run(parser.parse_args([str(recording), "--config", str(site / "config" / "proxy.toml")]))
    assert (code, capsys.readouterr()) == (0, ("no decision changes in 1 routed message(s)\n", ""))


def test_records_are_read_in_time_order_whatever_their_line_order() -> None:
    lines = [json.dumps({"recording": "stickyroute", "version": 2, "config": "/c.toml"}),
             json.dumps({"time": 20.0, "body": "b"}), json.dumps({"time": 10.0, "body": "a"}),
             json.dumps({"time": 20.0, "body": "c"})]
    named, records = read_recording(lines)
    assert (named, [r["body"] for r in records]) == ("/c.toml", ["a", "b", "c"])


def test_rules_folders_are_for_corpora(tmp_path, capsys) -> None:
    path = tmp_path / "traffic.jsonl"
    path.write_text(json.dumps({"recording": "stickyroute", "version": 2, "config": "/c.toml"}) + "\n")
    parser = argparse.ArgumentParser()
    replay_cli.add_arguments(parser)
    assert replay_cli.run(parser.parse_args([str(path), "--config", "new.toml", "--rules", str(tmp_path)])) == 2
    assert capsys.readouterr().err.startswith("replay: --rules applies to a corpus; for a recording, name the packs")
