"""Config of agent signals (issue #12): per-channel hint mode and handoffs, per-agent API tokens,
`[hints]` secret and rate, and the warnings about an unset secret."""

from __future__ import annotations

from pathlib import Path

from stickyroute.config import AgentHints, HintSettings, check_config

BASE = """
[agents.support]
url = "http://127.0.0.1:9102"
keywords = ["password reset"]

[agents.coder]
url = "http://127.0.0.1:9101"
keywords = ["python"]
{coder}

[channels.telegram]
default_agent = "support"
secret_token = "s3cret-s3cret-s3cret"
{channel}
{extra}
"""


def check(tmp_path: Path, coder: str = "", channel: str = "", extra: str = "",
          env: dict[str, str] | None = None) -> tuple[object, list[str], list[str]]:
    path = tmp_path / "proxy.toml"
    path.write_text(BASE.format(coder=coder, channel=channel, extra=extra), encoding="utf-8")
    config, problems = check_config(path, env=env or {})
    return (config, [f"{p.key}: {p.message}" for p in problems if not p.warning],
            [f"{p.key}: {p.message}" for p in problems if p.warning])


def test_defaults_are_confirm_handoffs_on_no_tokens_random_secret_10_per_s(tmp_path: Path) -> None:
    config, errors, _warnings = check(tmp_path)
    assert config is not None and errors == []
    routing = config.channels["telegram"].routing  # type: ignore[attr-defined]
    assert (routing.agent_hints, routing.agent_handoffs, config.agents["coder"].token,  # type: ignore[attr-defined]
            config.hints) == (AgentHints.CONFIRM, True, None, HintSettings(None, 10.0))  # type: ignore[attr-defined]


def test_channel_overrides_token_from_env_and_hints_section(tmp_path: Path) -> None:
    config, errors, warnings = check(
        tmp_path, coder='token = "${CODER_TOKEN}"',
        channel='overrides = { auto_route_agent_hints = "divergence", auto_route_agent_handoffs = false }',
        extra='[hints]\nsecret = "${HINT_SECRET}"\nrate_per_s = 2.5',
        env={"CODER_TOKEN": "c" * 24, "HINT_SECRET": "h" * 32})
    routing = config.channels["telegram"].routing  # type: ignore[attr-defined]
    assert (errors, warnings, routing.agent_hints, routing.agent_handoffs, config.agents["coder"].token,  # type: ignore[attr-defined]
            config.hints.secret, config.hints.rate_per_s) == (  # type: ignore[attr-defined]
        [], [], AgentHints.DIVERGENCE, False, "c" * 24, "h" * 32, 2.5)


def test_secrets_are_masked_in_repr(tmp_path: Path) -> None:
    config, _errors, _warnings = check(tmp_path, coder='token = "' + "c" * 24 + '"',
                                       extra='[hints]\nsecret = "' + "h" * 32 + '"')
    assert ("c" * 24 in repr(config.agents["coder"]), "h" * 32 in repr(config.hints)) == (False, False)  # type: ignore[attr-defined]


def test_bad_values_name_the_key(tmp_path: Path) -> None:
    _config, errors, _warnings = check(
        tmp_path, channel='overrides = { auto_route_agent_hints = "always" }',
        extra='[hints]\nrate_per_s = 0\ncolour = "red"')
    assert errors == [
        "hints.colour: unknown key",
        "hints.rate_per_s: must be > 0, got 0",
        'channels.telegram.overrides.auto_route_agent_hints: expected one of off, divergence, confirm; got "always"',
    ]


def test_a_token_without_a_secret_warns_and_names_replicas_on_redis(tmp_path: Path) -> None:
    _c, _e, memory = check(tmp_path, coder='token = "' + "c" * 24 + '"')
    _c, _e, redis = check(tmp_path, coder='token = "' + "c" * 24 + '"', extra='[state]\nbackend = "redis"')
    unsigned = [w for w in memory if w.startswith("hints.secret")]
    shared = [w for w in redis if w.startswith("hints.secret")]
    assert unsigned == ["hints.secret: not set while agents.coder.token is: conversation tokens are signed with "
                        "a random per-process secret, so they die with a restart"]
    assert shared == [unsigned[0] + " and the other replicas reject them (set it to the same value on every replica)"]


def test_short_token_and_secret_warn(tmp_path: Path) -> None:
    _c, _e, warnings = check(tmp_path, coder='token = "short"', extra='[hints]\nsecret = "tiny"')
    assert warnings == ["hints.secret: shorter than 16 characters: easy to guess",
                        "agents.coder.token: shorter than 16 characters: easy to guess"]
