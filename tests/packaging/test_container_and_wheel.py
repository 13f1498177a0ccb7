"""The container and the wheel, without a Docker engine: hadolint passes; the Dockerfile's install
steps, replayed in fresh virtualenvs outside the clone, build the wheel from the source tree and
install it (every COPY source exists); the image's command starts `serve` on 0.0.0.0 with its
config and answers its HEALTHCHECK; the compose file's config passes `stickyroute check`. Then, with
only that installed wheel: `stickyroute init`, `check`, `serve` (offline, demo agents) and `webhook`
against a fake Telegram Bot API."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path

import httpx
import pytest
import yaml

import stickyroute
from tests.packaging.dockerfile_replay import Image, replay
from tests.proxy.harness import telegram_text
from tests.redis_server import free_port
from tests.webhooks.fakes import fake_telegram

ROOT = Path(__file__).resolve().parents[2]
GUARD_S = 30.0
ENV_EXAMPLE = ROOT / "deploy" / ".env.example"


def _env_example() -> dict[str, str]:
    lines = [line for line in ENV_EXAMPLE.read_text().splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def _clean_env(*layers: Mapping[str, str]) -> dict[str, str]:
    """The test's environment without anything that would point Python at the clone, then `layers`
    in order (a later one wins)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "GROQ_API_KEY")}
    for layer in layers:
        env.update(layer)
    return env


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> Image:
    return replay(ROOT / "Dockerfile", ROOT, tmp_path_factory.mktemp("image"))


class Serving:
    """A `stickyroute serve` process (its own session), stopped by SIGTERM; `.output()` after."""

    def __init__(self, argv: list[str], cwd: Path, env: Mapping[str, str], admin_port: int) -> None:
        self.admin = f"http://127.0.0.1:{admin_port}"
        self.process = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self.text = ""
        deadline = time.monotonic() + GUARD_S
        while True:
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"serve did not come up:\n{self.text}")
            try:
                if httpx.get(self.admin + "/healthz", timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.05)

    def stop(self) -> str:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        self.text += self.process.communicate(timeout=GUARD_S)[0].decode(errors="replace")
        return self.text


@pytest.fixture
def serving() -> Iterator[list[Serving]]:
    started: list[Serving] = []
    yield started
    for one in started:
        one.stop()


def test_hadolint_passes_on_the_dockerfile():
    hadolint = Path(sys.executable).parent / "hadolint"
    done = subprocess.run([str(hadolint), str(ROOT / "Dockerfile")], capture_output=True, text=True, check=False,
                          timeout=GUARD_S)
    assert (done.returncode, done.stdout + done.stderr) == (0, "")


def test_the_image_is_slim_python_run_by_a_non_root_user_with_a_healthcheck(image: Image):
    assert image.bases == ["python:3.11-slim", "python:3.11-slim"]
    uid, gid = image.user.split(":")
    assert int(uid) > 0 and int(gid) > 0
    assert ["useradd", "--system", "--uid", uid, "--gid", gid] == image.accounts[1][:6]
    assert "http://127.0.0.1:9090/healthz" in " ".join(image.healthcheck)
    assert image.cmd[:2] == ["stickyroute", "serve"] and image.cmd[image.cmd.index("--host") + 1] == "0.0.0.0"
    assert image.expose == ["8080", "9090"]
    assert [source for origin, source in image.copies if origin is None] == [
        "pyproject.toml", "README.md", "LICENSE", "NOTICE", "stickyroute", "deploy/stickyroute.toml"]
    assert [(origin, source) for origin, source in image.copies if origin] == [("build", "/wheels")]
    assert not image.path("/wheels").exists()  # removed after the install


def test_the_wheel_carries_what_a_running_proxy_needs(image: Image):
    (wheel,) = image.stages["build"].path("/wheels").glob("stickyroute-*.whl")
    assert wheel.name == f"stickyroute-{stickyroute.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    packs = {n for n in names if n.startswith("stickyroute/rules/")}
    assert packs == {f"stickyroute/rules/{p.name}" for p in (ROOT / "stickyroute" / "rules").glob("*.toml")}
    assert {"stickyroute/admin/static/dashboard.js", "stickyroute/admin/static/dashboard.html",
            "stickyroute/starter/templates/stickyroute.toml", "stickyroute/py.typed"} <= names
    dist_info = f"stickyroute-{stickyroute.__version__}.dist-info"
    assert {f"{dist_info}/licenses/LICENSE", f"{dist_info}/licenses/NOTICE"} <= names
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata
    assert {re.sub(r"[ ;].*", "", line.split(": ", 1)[1]) for line in metadata.splitlines()
            if line.startswith("Provides-Extra: ")} == {"test", "eval", "dev"}
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist: ") and "extra ==" not in line]
    assert not [r for r in requires if re.search(r"pytest|mypy|ruff|playwright|matplotlib|hypothesis|mkdocs", r)]
    assert not [n for n in names if n.startswith(("tests/", "bench/", "eval/"))]


def test_the_images_command_serves_on_all_interfaces_and_answers_its_healthcheck(image: Image, serving):
    port, admin = free_port(), free_port()
    env = _clean_env(_env_example(), image.stage.env, {"REDIS_URL": f"redis://127.0.0.1:{free_port()}/0"})
    argv = [str(image.command(image.cmd[0])), *image.cmd[1:], "--port", str(port), "--admin-port", str(admin)]
    serving.append(Serving(argv, image.path(image.stage.workdir), env, admin))
    health = [str(image.command(image.healthcheck[0])), *[arg.replace(":9090/", f":{admin}/") for arg in
                                                          image.healthcheck[1:]]]
    checked = subprocess.run(health, env=env, check=False, timeout=GUARD_S, capture_output=True)
    output = serving[0].stop()
    lines = [json.loads(line) for line in output.splitlines() if line.strip()]
    started = next(line for line in lines if line["message"] == "started")
    assert checked.returncode == 0
    assert (started["webhooks"], started["config"], started["state"]["backend"]) == (
        f"0.0.0.0:{port}", "stickyroute.toml", "redis")
    assert lines[-1]["message"] == "stopped"


def test_the_compose_deployment_runs_two_replicas_redis_and_a_balancer_and_its_config_checks(image: Image):
    compose = yaml.safe_load((ROOT / "deploy" / "docker-compose.yml").read_text())
    service = compose["services"]["stickyroute"]
    assert service["deploy"]["replicas"] == 2 and {"redis", "nginx"} <= set(compose["services"])
    assert service["build"] == {"context": "..", "dockerfile": "Dockerfile"}
    mounted = dict(volume.split(":")[:2] for volume in service["volumes"])
    assert mounted == {"./stickyroute.toml": "/etc/stickyroute/stickyroute.toml"}
    assert "server stickyroute:8080;" in (ROOT / "deploy" / "nginx.conf").read_text()
    config = ROOT / "deploy" / "stickyroute.toml"  # the mounted file (compose paths are relative to deploy/)
    assert 'url = "${REDIS_URL}"' in config.read_text()
    env = _clean_env(_env_example(), service["environment"])
    done = subprocess.run([str(image.command("stickyroute")), "check", str(config)], env=env, capture_output=True,
                          text=True, check=False, timeout=GUARD_S, cwd=image.stage.root)
    assert (done.returncode, done.stdout.splitlines()[-1]) == (0, "ok: 2 agents, 2 channels")
    assert [line for line in done.stdout.splitlines()[:-1] if "state.url" not in line] == []  # only "cannot reach"


def test_the_installed_wheel_runs_init_check_serve_and_webhook_outside_any_clone(image: Image, tmp_path, serving):
    command = str(image.command("stickyroute"))
    secrets = {"STICKYROUTE_ADMIN_TOKEN": "wheel-admin-token-0123456789", "TELEGRAM_SECRET_TOKEN": "wheel-secret",
               "TELEGRAM_BOT_TOKEN": "42:wheel-bot-token", "WHATSAPP_APP_SECRET": "s", "WHATSAPP_VERIFY_TOKEN": "v",
               "META_APP_ID": "7"}
    env = _clean_env(secrets)

    def run(*args: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([command, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False,
                              timeout=GUARD_S)

    version = run("--version")
    init = run("init", "bot", "--channel", "telegram", "--channel", "whatsapp")
    bot = tmp_path / "bot"
    checked = run("check", cwd=bot)
    config = bot / "stickyroute.toml"
    for placeholder in ("9101", "9102"):
        config.write_text(config.read_text().replace(f"127.0.0.1:{placeholder}", f"127.0.0.1:{free_port()}"))
    port, admin = free_port(), free_port()
    serving.append(Serving([command, "serve", "--demo-agents", "--port", str(port), "--admin-port", str(admin)], bot,
                           env, admin))
    reply = httpx.post(f"http://127.0.0.1:{port}/telegram", content=telegram_text(5, "refactor my python code"),
                       headers={"content-type": "application/json",
                                "x-telegram-bot-api-secret-token": secrets["TELEGRAM_SECRET_TOKEN"]}, timeout=GUARD_S)
    with fake_telegram(secrets["TELEGRAM_BOT_TOKEN"]) as telegram:
        registered = run("webhook", "set", "telegram", "--url", "https://bots.example.com/telegram", "--api-base",
                         telegram.url, cwd=bot)
        info = run("webhook", "info", "telegram", "--api-base", telegram.url, cwd=bot)
    assert (version.returncode, version.stdout) == (0, f"stickyroute {stickyroute.__version__}\n")
    assert init.returncode == 0 and init.stdout.startswith(f"wrote {Path('bot') / 'stickyroute.toml'}\n")
    assert (checked.returncode, checked.stdout) == (0, "ok: 2 agents, 2 channels\n")
    assert (reply.status_code, reply.json()) == (200, {"ok": True, "agent": "coder"})
    assert (registered.returncode, registered.stderr) == (0, "")
    assert telegram.calls[0][1]["secret_token"] == secrets["TELEGRAM_SECRET_TOKEN"]
    assert info.stdout.splitlines()[0] == "channel telegram: Telegram webhook https://bots.example.com/telegram"
    assert secrets["TELEGRAM_BOT_TOKEN"] not in registered.stdout + info.stdout
