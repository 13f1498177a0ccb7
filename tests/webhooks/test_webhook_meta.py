"""`stickyroute webhook set|info|delete` for WhatsApp against a fake Graph API on 127.0.0.1 that,
like Meta, verifies the callback URL with a GET while it handles the subscription: the running
proxy answers it with the channel's verify token. Secrets are never printed."""

from __future__ import annotations

from pathlib import Path

import pytest

from stickyroute.cli.main import main
from stickyroute.config import load_config
from stickyroute.server.service import Service
from stickyroute.webhooks import registrar
from tests.upstreams import serve_app
from tests.webhooks.fakes import fake_graph

APP_ID = "1234567890"
APP_SECRET = "meta-app-secret-0123"
VERIFY = "verify-me-0123"
SECRETS = (APP_SECRET, VERIFY, f"{APP_ID}|{APP_SECRET}")


def write(tmp_path: Path, channel: str = "") -> Path:
    path = tmp_path / "stickyroute.toml"
    path.write_text('[agents.coder]\nurl = "http://127.0.0.1:9"\nkeywords = ["python"]\n'
                    '[channels.whatsapp]\ndefault_agent = "coder"\n'
                    f'app_secret = "{APP_SECRET}"\napp_id = "${{META_APP_ID}}"\n{channel}', encoding="utf-8")
    return path


def run(capsys, *args: str) -> tuple[int, list[str], list[str]]:
    code = main(["webhook", *args])
    out, err = capsys.readouterr()
    assert not [secret for secret in SECRETS if secret in out + err]
    return code, out.splitlines(), err.splitlines()


@pytest.fixture
def app_env(monkeypatch):
    monkeypatch.setenv("META_APP_ID", APP_ID)


def test_set_subscribes_the_app_after_meta_verified_the_running_proxy(tmp_path, capsys, app_env):
    config = write(tmp_path, f'verify_token = "{VERIFY}"\n')
    service = Service(load_config(config, env={}), env={})
    with serve_app(service.public_app()) as proxy, fake_graph(APP_ID, f"{APP_ID}|{APP_SECRET}") as graph:
        callback = f"{proxy}/whatsapp"
        code, out, err = run(capsys, "set", "whatsapp", "--config", str(config), "--url", callback,
                             "--api-base", graph.url)
        info = run(capsys, "info", "whatsapp", "--config", str(config), "--api-base", graph.url)
        deleted = run(capsys, "delete", "whatsapp", "--config", str(config), "--api-base", graph.url)
        after = run(capsys, "info", "whatsapp", "--config", str(config), "--api-base", graph.url)
    assert (code, err) == (0, [])
    assert graph.calls[0] == ("POST", {"object": "whatsapp_business_account", "callback_url": callback,
                                       "verify_token": VERIFY, "fields": "messages", "include_values": "true",
                                       "access_token": f"{APP_ID}|{APP_SECRET}"})
    assert graph.verifications[0][0] == 200  # the proxy answered Meta's GET with the challenge
    assert out == [f"channel whatsapp: Meta app subscribed to whatsapp_business_account with callback {callback}",
                   "  fields: messages",
                   "  verify_token: channels.whatsapp.verify_token (Meta verified the callback with it)",
                   "next: subscribe the app to your WhatsApp Business Account (WhatsApp Manager, or POST "
                   "/<WABA_ID>/subscribed_apps) so its numbers' messages reach this callback"]
    assert info[1] == [f"channel whatsapp: Meta whatsapp_business_account subscription, callback {callback}",
                       "  active: yes", "  fields: messages"]
    assert deleted[1] == ["channel whatsapp: Meta app's whatsapp_business_account subscription removed (Meta stops "
                          "sending its webhooks)"]
    assert after[1] == ["channel whatsapp: the Meta app has no whatsapp_business_account subscription"]
    assert [(method, call.get("object")) for method, call in graph.calls[1:]] == [
        ("GET", None), ("DELETE", "whatsapp_business_account"), ("GET", None)]


def test_meta_refuses_when_the_proxy_does_not_answer_its_verification(tmp_path, capsys, monkeypatch, app_env):
    config = write(tmp_path, f'verify_token = "{VERIFY}"\naccess_token = "${{META_APP_TOKEN}}"\n')
    (tmp_path / "running").mkdir()
    running = write(tmp_path / "running", 'verify_token = "another-token"\n')  # the proxy expects another token
    service = Service(load_config(running, env={}), env={})
    with serve_app(service.public_app()) as proxy, fake_graph(APP_ID, "app-token-0123") as graph:
        capsys.readouterr()
        unset = run(capsys, "set", "whatsapp", "--config", str(config), "--url", f"{proxy}/whatsapp",
                    "--api-base", graph.url)
        monkeypatch.setenv("META_APP_TOKEN", "app-token-0123")
        code, out, err = run(capsys, "set", "whatsapp", "--config", str(config), "--url", f"{proxy}/whatsapp",
                             "--api-base", graph.url)
    assert unset == (2, [], [f"{config}: channels.whatsapp.access_token: environment variable META_APP_TOKEN is not "
                             "set"])
    assert (code, out) == (1, [])
    assert err == ["stickyroute webhook set: Meta refused the whatsapp_business_account subscription: (#2200) Callback "
                   "verification failed with the following errors: HTTP Status Code = 403 (code 2200)"]
    assert [status for status, _body in graph.verifications] == [403] and graph.subscriptions == {}


def test_a_missing_verify_token_or_app_id_names_the_key(tmp_path, capsys, monkeypatch):
    config = write(tmp_path)
    monkeypatch.setenv("META_APP_ID", APP_ID)
    no_verify = run(capsys, "set", "whatsapp", "--config", str(config), "--url", "https://h.example/whatsapp")
    monkeypatch.delenv("META_APP_ID")
    no_app = run(capsys, "info", "whatsapp", "--config", str(config))
    assert no_verify == (2, [], [f"{config}: channels.whatsapp.verify_token: is required: Meta sends it back in the "
                                 "verification request, and stickyroute answers that only with it"])
    assert no_app == (2, [], [f"{config}: channels.whatsapp.app_id: environment variable META_APP_ID is not set"])


def test_a_refused_access_token_gets_a_hint(tmp_path, capsys, app_env):
    config = write(tmp_path)
    with fake_graph(APP_ID, "the-real-token") as graph:
        code, out, err = run(capsys, "info", "whatsapp", "--config", str(config), "--api-base", graph.url)
    assert (code, out, err) == (1, [], ["stickyroute webhook info: Meta refused the subscriptions: Invalid OAuth access "
                                        "token - Cannot parse access token (code 190) (check "
                                        "channels.whatsapp.access_token, or app_id and app_secret)"])


def test_messenger_subscribes_the_page_object(tmp_path, capsys, app_env):
    config = tmp_path / "messenger.toml"
    config.write_text('[agents.coder]\nurl = "http://127.0.0.1:9"\nkeywords = ["python"]\n[channels.messenger]\n'
                      f'default_agent = "coder"\napp_secret = "{APP_SECRET}"\nverify_token = "{VERIFY}"\n'
                      'app_id = "${META_APP_ID}"\n', encoding="utf-8")
    service = Service(load_config(config, env={}), env={})
    with serve_app(service.public_app()) as proxy, fake_graph(APP_ID, f"{APP_ID}|{APP_SECRET}") as graph:
        code, out, err = run(capsys, "set", "messenger", "--config", str(config), "--url", f"{proxy}/messenger",
                             "--api-base", graph.url)
    assert (code, err) == (0, [])
    assert (graph.calls[0][1]["object"], graph.calls[0][1]["fields"]) == ("page", "messages,messaging_postbacks")
    assert out[0] == f"channel messenger: Meta app subscribed to page with callback {proxy}/messenger"


def test_a_platform_without_an_api_gets_the_values_to_paste(tmp_path, capsys, monkeypatch):
    config = tmp_path / "slack.toml"
    config.write_text('[agents.coder]\nurl = "http://127.0.0.1:9"\nkeywords = ["python"]\n[channels.slack]\n'
                      'default_agent = "coder"\nsigning_secret = "${SLACK_SIGNING_SECRET}"\n', encoding="utf-8")
    monkeypatch.setenv("SLACK_SIGNING_SECRET", "slack-secret-0123")
    code, out, err = run(capsys, "set", "slack", "--config", str(config), "--url", "https://bots.example.com/slack")
    info = run(capsys, "info", "slack", "--config", str(config))
    assert (code, err) == (0, [])
    assert out == ["channel slack: slack has no webhook API stickyroute calls; in the Slack app's settings "
                   "(api.slack.com/apps): Event Subscriptions, and Interactivity & Shortcuts and Slash Commands if "
                   "your agents use them:", "  Request URL: https://bots.example.com/slack",
                   f"  Signing Secret (Basic Information): the same value as channels.slack.signing_secret in {config}"]
    assert info[1] == ["channel slack: see the Slack app's settings (api.slack.com/apps): Event Subscriptions, and "
                       "Interactivity & Shortcuts and Slash Commands if your agents use them (Request URL); "
                       "stickyroute serves it on /slack"]
    assert "slack-secret-0123" not in " ".join(out + info[1])
    assert registrar("nosuchplatform").delete.__self__.console == "the nosuchplatform developer console"
