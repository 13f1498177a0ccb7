"""Labels from recorded traffic: a real proxy records, `learn` reads the right decisions."""

from __future__ import annotations

import json

import httpx
import pytest
import respx

from stickyroute.cli.main import main
from stickyroute.clock import FakeClock
from stickyroute.config import load_config
from stickyroute.forwarding.recording import Recorder
from stickyroute.learn.labels import Evidence
from stickyroute.learn.recorded import NoDecisions, labels_from_recording
from stickyroute.replay.recorded import load_recording
from tests.proxy.harness import Proxy, telegram_text, upstream_set, write_config

CHAT_URL = "https://api.groq.com/openai/v1/chat/completions"
AGENTS = {
    "coder": 'keywords = ["python", "refactor"]',
    "ops": 'keywords = ["kubernetes", "pods", "deploy"]',
    "billing": 'keywords = ["invoice"]',
}
OVERRIDES = '[channels.telegram.overrides]\nauto_route = "sticky_heuristic"\nauto_route_divergence_count = 1\n'
C, B, X = Evidence.CREDIT, Evidence.BACKGROUND, Evidence.CONTEXT


def answer(content: str) -> httpx.Response:
    return httpx.Response(200, json={
        "id": "c", "object": "chat.completion", "created": 1, "model": "llama-3.1-8b-instant",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 90, "completion_tokens": 2, "total_tokens": 92},
    })


@pytest.fixture
async def recording(tmp_path):
    """A recording made by the running proxy (Groq mocked), and its config."""
    out = tmp_path / "traffic.jsonl"
    clock = FakeClock(1000.0)
    steps = [  # (update id, user, text)
        (1, 111, "please refactor this python function"),   # classified (Groq: coder)
        (2, 111, "can you also add a docstring to it"),     # neutral
        (3, 111, "the kubernetes pods crash after each deploy"),  # divergent -> llm_confirmed (ops)
        (4, 111, "and what about the python version there"),     # divergent -> llm_rejected (ops)
        (5, 111, "/agent billing"),                           # explicit, nothing else said
        (6, 111, "why was I charged twice this month"),       # explicit_pin: the example of billing
        (7, 111, "@coder the flaky test in the parser again"),  # explicit with words
        (3, 111, "the kubernetes pods crash after each deploy"),  # Telegram redelivers update 3
        (8, 222, "what is the weather like today"),           # classified_default (Groq: none)
    ]
    with respx.mock(assert_all_called=True, assert_all_mocked=True) as groq:
        groq.post(CHAT_URL).mock(side_effect=[answer(a) for a in ("coder", "ops", "ops", "none")])
        with upstream_set("general", "coder", "ops", "billing") as ups:
            config = write_config(tmp_path, ups, telegram=OVERRIDES, agents=AGENTS)
            recorder = Recorder(str(out), config)
            async with httpx.AsyncClient() as client:
                async with Proxy(config, env={"GROQ_API_KEY": "gsk-test"}, groq_http_client=client, clock=clock,
                                 recorder=recorder) as proxy:
                    for update, user, text in steps:
                        clock.advance(30)
                        assert (await proxy.post("/webhooks/telegram", telegram_text(update, text, user=user))).status_code == 200
            recorder.close()
    return out, tmp_path / "proxy.toml"


async def test_labels_come_from_the_classifier_and_the_people(recording) -> None:
    path, config_path = recording
    loaded = load_recording(str(path))
    assert [r["decisions"][0]["reason"] for r in loaded.records] == [
        "classified", "neutral", "llm_confirmed", "llm_rejected", "explicit", "explicit_pin", "explicit",
        "llm_confirmed", "classified_default"]
    conversations = labels_from_recording(loaded.records, load_config(config_path, env={}), loaded.version)
    assert [(c.id, [(m.text, m.agent, m.evidence) for m in c.messages]) for c in conversations] == [
        ("telegram chat=111 sender=111", [
            ("please refactor this python function", "coder", C),
            ("can you also add a docstring to it", "coder", X),
            ("the kubernetes pods crash after each deploy", "ops", C),
            ("and what about the python version there", "ops", B),   # the classifier kept ops
            ("/agent billing", "billing", X),
            ("why was I charged twice this month", "billing", C),    # what the explicit switch was for
            ("the flaky test in the parser again", "coder", C),      # the mention cut out
        ]),
        ("telegram chat=222 sender=222", [("what is the weather like today", "general", B)]),
    ]


async def test_learn_writes_packs_from_a_recording(recording, tmp_path, capsys) -> None:
    path, _config = recording
    assert main(["learn", str(path), "--out", str(tmp_path / "learned")]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"learned from {path}: 2 conversations, 8 messages (4 labelled, 2 background, 2 context)\n")
    assert sorted(p.name for p in (tmp_path / "learned").iterdir()) == ["billing.toml", "coder.toml", "general.toml",
                                                                         "ops.toml"]


async def test_learn_hint_names_the_packs_relative_to_the_config(recording, tmp_path, capsys, monkeypatch) -> None:
    path, config_file = recording
    monkeypatch.chdir(tmp_path.parent)
    out = f"{tmp_path.name}/learned/"  # relative to the working folder, with a trailing slash
    assert main(["learn", str(path), "--out", out]) == 0
    hint = capsys.readouterr().out.splitlines()[-1]
    assert hint == (f'next: add rules = "learned/<agent>.toml" to each [agents.<agent>] of a copy of {config_file} in '
                    "the same folder (rules paths are relative to the config file), then stickyroute replay "
                    f"{path} --config COPY (what-if), and reload")
    copy = tmp_path / "copy.toml"
    copy.write_text(config_file.read_text().replace('[agents."coder"]', '[agents."coder"]\nrules = '
                                                                          '"learned/coder.toml"'))
    assert load_config(copy, env={}).agents["coder"].keywords  # the hint's path loads from a copy beside the config


def test_a_version_1_recording_has_no_decisions(tmp_path, capsys) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"recording": "stickyroute", "version": 1, "config": "proxy.toml"}) + "\n"
                    + json.dumps({"time": 1.0, "channel": "telegram", "method": "POST", "path": "/t", "body": "{}"}) + "\n")
    with pytest.raises(NoDecisions):
        labels_from_recording(load_recording(str(path)).records, None, 1)  # type: ignore[arg-type]
    (tmp_path / "proxy.toml").write_text('[agents.a]\nurl = "http://127.0.0.1:9"\n[channels.telegram]\ndefault_agent = "a"\n')
    assert main(["learn", str(path), "--out", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"learn: {path}: this recording (format version 1) has no routing decisions to learn from: "
        "record again with `stickyroute serve --record` from this version\n")
