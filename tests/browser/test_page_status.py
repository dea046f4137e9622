"""The page follows its request every 10 s: time left, expiry, cancel, a write from another tab."""

import subprocess
import time

import pytest
from dotenv import dotenv_values
from playwright.sync_api import BrowserContext, Page

from offprompt.spec import SecretSpec

from .conftest import LiveServer
from .kit import record

pytestmark = pytest.mark.browser


def open_with_clock(context: BrowserContext, url: str) -> Page:
    """A page whose timers run only when the test says, so a 10 s poll takes no 10 s."""
    page = context.new_page()
    page.clock.install()
    page.goto(url)
    return page


def next_poll(page: Page, ms: int = 10_000) -> None:
    with page.expect_response(lambda r: r.url.endswith("/status")):
        page.clock.run_for(ms)


def test_status_is_polled_every_10_seconds(live: LiveServer, context: BrowserContext) -> None:
    """One poll on load, then one every 10 s and none in between."""
    page = context.new_page()
    sent = record(page)
    page.clock.install()
    with page.expect_response(lambda r: r.url.endswith("/status")):
        page.goto(live.url(live.create()))
    page.clock.run_for(9_000)
    page.wait_for_timeout(300)
    before = sent.status_polls()
    next_poll(page, 1_000)
    assert (before, sent.status_polls()) == (1, 2)


def test_connected_line_says_how_long_is_left(live: LiveServer, context: BrowserContext) -> None:
    """While the request is open the page says it is connected and when it expires."""
    page = context.new_page()
    with page.expect_response(lambda r: r.url.endswith("/status")):
        page.goto(live.url(live.create()))
    page.locator("#expiry", has_text="Connected").wait_for()
    assert page.inner_text("#expiry") == "Connected to offprompt · this page expires in 5 minutes."


def test_expired_request_shows_the_expired_view(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """After the TTL the next poll replaces the form with Expired, and drops what was typed."""
    # Long enough for the page to load on a busy machine before it expires; then wait it out.
    ends = time.monotonic() + 5
    page = open_with_clock(context, live.url(live.create(ttl=5)))
    page.fill("textarea[name=API_KEY]", canary)
    time.sleep(max(0.0, ends - time.monotonic()) + 0.1)
    next_poll(page)
    page.locator("#closed").wait_for()
    assert page.inner_text("#closed h1") == "Expired"
    assert "Nothing you typed here was sent" in page.inner_text("#closed")
    assert page.locator("#collect").count() == 0


def test_write_from_another_tab_shows_answered_elsewhere(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """When another tab writes, this one says so at its next poll; nothing from it was sent."""
    url = live.url(live.create())
    first = open_with_clock(context, url)
    second = context.new_page()
    second.goto(url)
    second.fill("textarea[name=API_KEY]", canary)
    second.click("#submit")
    second.locator("#written").wait_for()
    next_poll(first)
    first.locator("#closed").wait_for()
    assert first.inner_text("#closed h1") == "Already written"
    assert "from another tab or window" in first.inner_text("#closed")


def test_cancel_by_the_agent_shows_cancelled(live: LiveServer, context: BrowserContext) -> None:
    """When the agent cancels, the next poll replaces the form with Cancelled."""
    req = live.create()
    page = open_with_clock(context, live.url(req))
    assert live.cancel(req)
    next_poll(page)
    page.locator("#closed").wait_for()
    assert page.inner_text("#closed h1") == "Cancelled"


def test_lost_connection_says_reconnecting_and_keeps_values(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A poll that cannot reach offprompt says so; what was typed stays, and it recovers."""
    page = open_with_clock(context, live.url(live.create()))
    page.fill("textarea[name=API_KEY]", canary)
    page.route("**/status", lambda route: route.abort())
    page.clock.run_for(10_000)
    page.locator("#expiry.warn").wait_for()
    lost = page.inner_text("#expiry")
    page.unroute("**/status")
    next_poll(page)
    page.locator("#expiry:not(.warn)").wait_for()
    assert lost.startswith("offprompt stopped or cannot be reached")
    assert page.input_value("textarea[name=API_KEY]") == canary


def test_a_page_left_open_after_offprompt_stopped_says_so(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """offprompt ends (Ctrl-C of `offprompt collect`, the agent quitting) with its page open:
    the next poll finds no server, and the page stops saying it is connected."""
    page = open_with_clock(context, live.url(live.create()))
    page.fill("textarea[name=API_KEY]", canary)
    page.locator("#expiry", has_text="Connected").wait_for()
    live.call(live.server.close())
    page.clock.run_for(10_000)
    page.locator("#expiry.warn").wait_for()
    page.clock.run_for(2_000)  # the every-second line does not put "Connected" back
    said = page.inner_text("#expiry")
    assert "Connected" not in said
    assert "offprompt stopped" in said
    assert page.input_value("textarea[name=API_KEY]") == canary


def test_an_answer_that_is_not_offprompts_is_not_connected(
    live: LiveServer, context: BrowserContext
) -> None:
    """Behind a tunnel whose offprompt stopped, Cloudflare answers the poll itself (an HTML error
    page, 530): that is no offprompt either, and the page says so instead of "Connected"."""
    page = open_with_clock(context, live.url(live.create()))
    page.locator("#expiry", has_text="Connected").wait_for()
    page.route(
        "**/status",
        lambda route: route.fulfill(status=530, content_type="text/html", body="error 1033"),
    )
    next_poll(page)
    page.locator("#expiry.warn").wait_for()
    assert "offprompt stopped" in page.inner_text("#expiry")


def test_failed_submit_keeps_every_value_and_a_retry_writes(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A submit that never arrives keeps the values in place; the retry writes them."""
    page = context.new_page()
    page.goto(live.url(live.create(SecretSpec("A_KEY"), SecretSpec("B_KEY"))))
    page.fill("textarea[name=A_KEY]", canary)
    page.fill("textarea[name=B_KEY]", canary + "b")
    page.route(
        "**/r/*",
        lambda route: route.abort() if route.request.method == "POST" else route.fallback(),
    )
    page.click("#submit")
    page.locator("#form-error").wait_for()
    kept = [page.input_value("textarea[name=A_KEY]"), page.input_value("textarea[name=B_KEY]")]
    said = page.inner_text("#form-error")
    page.unroute("**/r/*")
    page.click("#submit")
    page.locator("#written").wait_for()
    assert kept == [canary, canary + "b"]
    assert "What you typed is still here" in said
    assert dotenv_values(live.project / ".env") == {"A_KEY": canary, "B_KEY": canary + "b"}


def test_tracked_file_needs_the_override_then_writes(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Writing to a tracked .env is refused beside the button until the box is ticked."""
    (live.project / ".env").write_text("")
    subprocess.run(["git", "init", "-q"], cwd=live.project, check=True)
    subprocess.run(["git", "add", ".env"], cwd=live.project, check=True)
    page = context.new_page()
    page.goto(live.url(live.create()))
    page.fill("textarea[name=API_KEY]", canary)
    page.click("#submit")
    page.locator("#form-error", has_text="tracked by git").wait_for()
    refused = ((live.project / ".env").read_text(), page.evaluate("document.activeElement.id"))
    page.check("#allow-tracked")
    page.click("#submit")
    page.locator("#written").wait_for()
    assert refused == ("", "allow-tracked")
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}
