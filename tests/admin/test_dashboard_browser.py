"""The dashboard in a real browser (issue #11 "Dashboard"): headless Debian Chromium driven by
Playwright's Python package, against `stickyroute serve` in its own process with real agents on
127.0.0.1. Sign in, see the chart, the live conversations and the decisions stream follow posted
webhooks, pin a conversation from the form and see the next decision follow the pin, pause and
resume a demo agent.

The system browser (/usr/bin/chromium) is used, never a downloaded one (`playwright install` is
not needed). Without it the tests skip, except under CI=1 (.ci/run installs it), where they fail.
Set STICKYROUTE_SCREENSHOT=docs/dashboard.png to keep the README's screenshot of the page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from tests.proxy.harness import telegram_text, upstream_set
from tests.proxy.processes import ProxyProcess
from tests.redis_server import free_port

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-background-networking", "--disable-component-update",
        "--no-first-run", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions"]
TOKEN = "browser-admin-token-0123456789"
WAIT_MS = 20_000
"""Hang guard of every wait on the page (it refreshes every 2 s; the stream is immediate)."""
TG = "/webhooks/telegram"
KEYWORDS = {"coder": ["python", "refactor", "stack trace"], "billing": ["invoice", "refund"]}


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        if os.environ.get("CI") == "1":
            pytest.fail(f"{CHROMIUM} is missing (apt-get install -y chromium; .ci/run does it)")
        pytest.skip(f"{CHROMIUM} is missing (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS, timeout=60_000)
        yield chromium
        chromium.close()


def write_config(path: Path, urls: dict[str, str]) -> Path:
    """Agents at `urls` (general is the default; coder and billing have keywords; `humans` is a
    human desk), one Telegram channel with sticky_heuristic and the keyword classifier, the admin
    token."""
    lines = ["[admin]", f"token = {json.dumps(TOKEN)}", "[classifier]", 'provider = "keywords"',
             "[upstream]", "timeout_s = 5.0", "connect_timeout_s = 2.0"]
    for name, url in urls.items():
        lines += [f"[agents.{name}]", f"url = {json.dumps(url)}", f'description = "the {name} agent"',
                  f"keywords = {json.dumps(KEYWORDS.get(name, []))}"]
        if name == "humans":
            lines += ["human = true", "hold_minutes = 600"]
    lines += ["[channels.telegram]", f"path = {json.dumps(TG)}", 'default_agent = "general"',
              "[channels.telegram.overrides]", 'auto_route = "sticky_heuristic"', "auto_route_first_message_margin = 0"]
    path.write_text("\n".join(lines) + "\n")
    return path


def post(proxy: ProxyProcess, update_id: int, text: str, user: int) -> int:
    return httpx.post(proxy.url + TG, content=telegram_text(update_id, text, user=user),
                      headers={"content-type": "application/json"}, timeout=10.0).status_code


def newest(page, attribute: str) -> str:
    return page.get_attribute("#stream-body tr:first-child", attribute)


def test_sign_in_watch_traffic_and_pin_a_conversation(browser, tmp_path) -> None:
    with upstream_set("general", "coder", "billing") as ups, \
            ProxyProcess(write_config(tmp_path / "proxy.toml", {n: u.url for n, u in ups.items()})) as proxy:
        context = browser.new_context(viewport={"width": 1360, "height": 1000})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.goto(proxy.admin + "/")
        page.wait_for_selector("#login:not([hidden])", timeout=WAIT_MS)
        page.fill("#token", "not-the-token")
        page.click("#sign-in")
        expect(page.locator("#login-error")).to_have_text("wrong token", timeout=WAIT_MS)
        errors.clear()  # the browser logs the refused sign-in's 401 itself
        page.fill("#token", TOKEN)
        page.click("#sign-in")
        page.wait_for_selector("#board:not([hidden])", timeout=WAIT_MS)
        page.wait_for_selector("#stream[data-live=true]", timeout=WAIT_MS)
        assert page.get_attribute("#chart-decisions", "data-total") == "0"
        assert page.inner_text("#readiness") == "ready"

        assert [post(proxy, 1, "python stack trace in my refactor", 111), post(proxy, 2, "my invoice is wrong", 222),
                post(proxy, 3, "hello there", 333)] == [200, 200, 200]
        expect(page.locator("#stream-body tr")).to_have_count(3, timeout=WAIT_MS)
        assert [(r.get_attribute("data-agent"), r.get_attribute("data-reason"), r.get_attribute("data-status"))
                for r in page.query_selector_all("#stream-body tr")] == [
            ("general", "short", "200"), ("billing", "keywords", "200"), ("coder", "keywords", "200")]
        page.wait_for_selector("#chart-decisions[data-total='3']", timeout=WAIT_MS)
        page.wait_for_selector("#chart-requests[data-total='3']", timeout=WAIT_MS)
        assert page.get_attribute("#chart-decisions", "data-keys") == "keywords,short"
        assert page.get_attribute("#chart-requests", "data-keys") == "2xx"
        # one bar segment per (minute bucket, reason): 2, or more when the posts straddle a minute
        assert {r.get_attribute("data-key") for r in page.query_selector_all("#chart-decisions svg rect")} == {
            "keywords", "short"}
        page.wait_for_selector("#agents-body tr[data-agent=coder][data-live='1']", timeout=WAIT_MS)
        assert page.get_attribute("#agents-body tr[data-agent=billing]", "data-live") == "1"
        assert page.inner_text("#classifier-provider") == "keywords"
        first_of_111 = page.get_attribute("#stream-body tr:last-child", "data-conversation")

        page.select_option("#conv-channel", "telegram")
        page.fill("#conv-chat", "111")
        page.fill("#conv-sender", "111")
        page.click("#conv-lookup")
        expect(page.locator("#conv-status")).to_have_text(f"live route {first_of_111}: coder (keywords)",
                                                          timeout=WAIT_MS)
        page.select_option("#conv-agent", "billing")
        page.click("#conv-pin")
        expect(page.locator("#conv-status")).to_have_text(f"pinned {first_of_111}: billing (admin, explicit)",
                                                          timeout=WAIT_MS)
        page.wait_for_selector("#stream-body tr[data-id='4']", timeout=WAIT_MS)
        assert (newest(page, "data-reason"), newest(page, "data-agent")) == ("admin", "billing")

        assert post(proxy, 4, "another python stack trace to refactor", 111) == 200
        page.wait_for_selector("#stream-body tr[data-id='5']", timeout=WAIT_MS)
        assert (newest(page, "data-conversation"), newest(page, "data-agent"), newest(page, "data-status")) == (
            first_of_111, "billing", "200")
        assert [r.target for r in ups["billing"].requests] == [TG.encode(), TG.encode()]
        assert len(ups["coder"].requests) == 1
        page.wait_for_selector("#chart-decisions[data-total='5']", timeout=WAIT_MS)
        page.wait_for_selector("#agents-body tr[data-agent=billing][data-live='2']", timeout=WAIT_MS)

        texts = ["refund my last invoice", "python refactor help", "good morning to the team", "stack trace again"]
        assert {post(proxy, 10 + i, texts[i % 4], 400 + i % 6) for i in range(12)} == {200}  # some traffic to see
        page.wait_for_selector("#chart-requests[data-total='16']", timeout=WAIT_MS)
        page.wait_for_selector("#stream-body tr[data-id='17']", timeout=WAIT_MS)

        forged = page.evaluate("""fetch('/v1/conversations/telegram/111/111/route', {method: 'DELETE'})
                                  .then((r) => r.status)""")
        assert forged == 403  # the cookie alone does not let a script change anything
        errors.clear()  # the browser logs that 403 itself
        keep = os.environ.get("STICKYROUTE_SCREENSHOT")
        shot = Path(keep) if keep else tmp_path / "dashboard.png"
        page.screenshot(path=str(shot), full_page=True)
        assert shot.stat().st_size > 10_000
        assert errors == []  # no script error, no failed request while signed in

        page.click("#sign-out")
        page.wait_for_selector("#login:not([hidden])", timeout=WAIT_MS)
        assert page.evaluate("fetch('/v1/status').then((r) => r.status)") == 401
        context.close()


def test_conversations_held_by_a_human_desk_are_listed(browser, tmp_path) -> None:
    with upstream_set("general", "coder", "humans") as ups, \
            ProxyProcess(write_config(tmp_path / "proxy.toml", {n: u.url for n, u in ups.items()})) as proxy:
        page = browser.new_page()
        page.goto(proxy.admin + f"/#token={TOKEN}")
        page.wait_for_selector("#board:not([hidden])", timeout=WAIT_MS)
        assert page.inner_text("#held-count") == "0"
        assert [post(proxy, 1, "/agent humans", 111), post(proxy, 2, "python refactor please", 222),
                post(proxy, 3, "python stack trace in my refactor", 111)] == [200, 200, 200]
        page.wait_for_selector("#held-body tr[data-agent=humans]", timeout=WAIT_MS)
        conversation = page.get_attribute("#held-body tr", "data-conversation")
        listed = httpx.get(proxy.admin + "/v1/conversations?held=true",
                           headers={"authorization": f"Bearer {TOKEN}"}, timeout=10.0).json()
        assert (page.inner_text("#held-count"), len(page.query_selector_all("#held-body tr")),
                [c["conversation"] for c in listed["conversations"]],
                [r.header_values(b"x-stickyroute-reason")[0] for r in ups["humans"].requests]) == (
            "1", 1, [conversation], [b"explicit", b"held"])
        page.close()


def test_a_token_in_the_fragment_signs_in_and_leaves_the_address_bar(browser, tmp_path) -> None:
    with upstream_set("general") as ups, \
            ProxyProcess(write_config(tmp_path / "proxy.toml", {"general": ups["general"].url})) as proxy:
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{proxy.admin}/#token={TOKEN}")
        page.wait_for_selector("#board:not([hidden])", timeout=WAIT_MS)
        assert page.evaluate("location.hash") == ""
        assert post(proxy, 1, "hello", 111) == 200
        page.wait_for_selector("#stream-body tr[data-agent=general]", timeout=WAIT_MS)
        page.reload()  # the cookie keeps the page signed in
        page.wait_for_selector("#board:not([hidden])", timeout=WAIT_MS)
        context.close()


def test_a_demo_agent_is_paused_and_resumed_from_the_page(browser, tmp_path) -> None:
    urls = {name: f"http://127.0.0.1:{free_port()}" for name in ("general", "coder", "billing")}
    with ProxyProcess(write_config(tmp_path / "proxy.toml", urls), args=["--demo-agents"]) as proxy:
        context = browser.new_context()
        page = context.new_page()
        page.goto(f"{proxy.admin}/#token={TOKEN}")
        page.wait_for_selector("#demo:not([hidden]) #demo-body tr[data-agent=billing][data-paused=false]",
                               timeout=WAIT_MS)
        assert post(proxy, 1, "my invoice is wrong", 222) == 200
        page.click("#demo-body tr[data-agent=billing] button[data-action=pause]")
        page.wait_for_selector("#demo-body tr[data-agent=billing][data-paused=true]", timeout=WAIT_MS)
        assert page.inner_text("#agents-body tr[data-agent=billing] td:last-child") == "paused"
        assert post(proxy, 2, "a refund please", 222) == 502  # the platform would retry
        page.wait_for_selector("#stream-body tr[data-id='2'][data-status='502']", timeout=WAIT_MS)
        page.click("#demo-body tr[data-agent=billing] button[data-action=resume]")
        page.wait_for_selector("#demo-body tr[data-agent=billing][data-paused=false]", timeout=WAIT_MS)
        assert post(proxy, 3, "a refund please", 222) == 200
        page.wait_for_selector("#stream-body tr[data-id='3'][data-agent=billing][data-status='200']",
                               timeout=WAIT_MS)
        page.wait_for_selector("#chart-requests[data-keys='2xx,5xx']", timeout=WAIT_MS)
        context.close()


def test_a_fragment_token_with_a_bare_percent_sign_still_signs_in(browser, tmp_path) -> None:
    """`#token=...` with a `%` that is not an escape (a token typed as is): the page signs in with
    it as written instead of stopping on decodeURIComponent's URIError (a blank page)."""
    token = "browser-admin-token-100%-sure"
    with upstream_set("general") as ups:
        config = write_config(tmp_path / "proxy.toml", {"general": ups["general"].url})
        config.write_text(config.read_text().replace(json.dumps(TOKEN), json.dumps(token)))
        with ProxyProcess(config) as proxy:
            context = browser.new_context()
            page = context.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(f"{proxy.admin}/#token={token}")
            page.wait_for_selector("#board:not([hidden])", timeout=WAIT_MS)
            assert page.evaluate("location.hash") == ""
            assert errors == []
            context.close()


CHART = """([keys, fixed]) => {
  const buckets = [...Array(15).keys()].map((slot) => ({start: 1000 + 60 * slot, requests: {}, decisions:
    Object.fromEntries(keys.map((key, i) => [key, keys.length - i]).filter((_, i) => i % 15 === slot))}));
  drawChart("decisions", {start: 1000, end: 1900, bucket_s: 60, buckets}, (b) => b.decisions, fixed ? STATUS_COLOURS : null);
  const fills = [...document.querySelectorAll("#chart-decisions svg rect")].map((r) => [r.dataset.key, r.getAttribute("fill")]);
  const legend = [...document.querySelectorAll("#legend-decisions li")].map((li) => [li.textContent, li.title,
    li.querySelector(".swatch").style.background]);
  return {fills, legend, keys: document.querySelector("#chart-decisions").dataset.keys};
}"""


@pytest.mark.parametrize("count", [3, 12, 13, 40])
def test_chart_colours_stay_distinct_for_any_number_of_reasons(browser, tmp_path, count) -> None:
    """Regression: the 12-colour palette repeated past 12 reasons. Up to 12 reasons each has its own
    colour; past that the 11 largest keep theirs and the rarer ones are stacked as one grey series."""
    from stickyroute.config import load_config
    from stickyroute.server.service import Service
    from tests.upstreams import serve_app

    reasons = [f"reason_{i:02d}" for i in range(count)]  # reason_00 is the largest, then in order
    with upstream_set("general") as ups:
        config = load_config(write_config(tmp_path / "proxy.toml", {"general": ups["general"].url}), env={})
        service = Service(config, env={})
        with serve_app(service.admin_app(), lifespan="off") as admin:
            page = browser.new_page()
            page.goto(admin + "/")
            drawn = page.evaluate(CHART, [reasons, False])
            page.close()
    colour_of = dict(drawn["fills"])
    legend_colours = [swatch for _text, _title, swatch in drawn["legend"]]
    assert len(set(colour_of.values())) == len(colour_of) == len(drawn["legend"]) == min(count, 12)
    assert len(set(legend_colours)) == len(legend_colours)
    if count <= 12:
        assert drawn["keys"] == ",".join(reasons)
        assert [text for text, _title, _swatch in drawn["legend"]] == reasons
    else:
        assert drawn["keys"] == ",".join([*reasons[:11], "(rarer)"])
        assert drawn["legend"][-1][:2] == [f"{count - 11} rarer",
                                           ", ".join(f"{r} {count - i}" for i, r in enumerate(reasons) if i >= 11)]
        assert colour_of["(rarer)"] == "#98a2b3"
