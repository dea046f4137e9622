"""The page in real headless Chromium: with and without JavaScript, errors, and where it talks."""

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from dotenv import dotenv_values
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, Response
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Request as BrowserRequest

from offprompt.crypto.fingerprint import EMOJI
from offprompt.spec import GenerateSpec, SecretSpec

from .conftest import LiveServer

pytestmark = pytest.mark.browser

NAMES = dict(EMOJI)


@dataclass
class Traffic:
    """Everything one page asked for and got back, and what its console said."""

    requests: list[str] = field(default_factory=list)
    bodies: list[bytes] = field(default_factory=list)
    console: list[str] = field(default_factory=list)


def watch(page: Page) -> Traffic:
    traffic = Traffic()

    def on_request(request: BrowserRequest) -> None:
        traffic.requests.append(request.url)

    def on_response(response: Response) -> None:
        try:
            traffic.bodies.append(response.body())
        except PlaywrightError:  # a redirect or an aborted load has no body to keep
            traffic.bodies.append(b"")

    def on_console(message: ConsoleMessage) -> None:
        traffic.console.append(f"{message.type}: {message.text}")

    page.on("request", on_request)
    page.on("response", on_response)
    page.on("console", on_console)
    return traffic


def server_fingerprint(page: Page) -> str:
    return page.locator("#fp-server").inner_text().strip()


def assert_only_in_destination(
    canary: str, live: LiveServer, traffic: Traffic, caplog: pytest.LogCaptureFixture
) -> None:
    assert canary in (live.project / ".env").read_text()
    assert [canary.encode() in body for body in traffic.bodies] == [False] * len(traffic.bodies)
    assert canary not in caplog.text
    assert canary not in live.journal.path.read_text()


def test_js_page_writes_and_its_fingerprint_matches_the_server(
    live: LiveServer, context: BrowserContext, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Typing a value and submitting shows Written with the page's four emoji = the server's."""
    req = live.create()
    page = context.new_page()
    traffic = watch(page)
    with caplog.at_level(logging.DEBUG):
        page.goto(live.url(req))
        page.fill("textarea[name=API_KEY]", canary)
        page.click("#submit")
        page.wait_for_selector("#written")
    assert req.outcome is not None
    check = page.locator("#fp-check")
    assert (server_fingerprint(page), check.get_attribute("data-page-fingerprint")) == (
        req.outcome.fingerprint,
        req.outcome.fingerprint,
    )
    assert "match" in (check.get_attribute("class") or "").split()
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}
    assert_only_in_destination(canary, live, traffic, caplog)


def test_page_without_javascript_posts_the_form_and_shows_the_server_emoji(
    live: LiveServer, browser: Browser, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """With JavaScript off the plain form post writes and the Written page shows the emoji."""
    req = live.create(SecretSpec("API_KEY"), SecretSpec("SESSION_SECRET", generate=GenerateSpec()))
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        traffic = watch(page)
        with caplog.at_level(logging.DEBUG):
            page.goto(live.url(req))
            page.fill("textarea[name=API_KEY]", canary)
            page.click("#submit")
            page.wait_for_selector("#written")
        assert req.outcome is not None
        assert req.outcome.fingerprint is not None
        names = " · ".join(NAMES[e] for e in req.outcome.fingerprint.split(" "))
        assert (server_fingerprint(page), page.locator(".fp-names").inner_text()) == (
            req.outcome.fingerprint,
            names,
        )
        assert req.outcome.generated == ("SESSION_SECRET",)
        assert_only_in_destination(canary, live, traffic, caplog)
    finally:
        context.close()


def test_unprocessable_submit_keeps_what_was_typed(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A 422 shows the reason under the field and leaves every typed value in place."""
    req = live.create(SecretSpec("GOOD_KEY"), SecretSpec("BAD_KEY"))
    page = context.new_page()
    page.goto(live.url(req))
    page.fill("textarea[name=GOOD_KEY]", canary)
    page.fill("textarea[name=BAD_KEY]", canary + "${HOME}")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.click("#submit")
    assert answer.value.status == 422
    errors = page.locator("#e-BAD_KEY")
    errors.wait_for(state="visible")
    assert "${...}" in errors.inner_text()
    assert (
        page.input_value("textarea[name=GOOD_KEY]"),
        page.input_value("textarea[name=BAD_KEY]"),
    ) == (canary, canary + "${HOME}")
    assert not (live.project / ".env").exists()


def test_page_talks_only_to_its_own_loopback_origin(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Every request the page makes, through load, submit and Written, goes to 127.0.0.1:port."""
    req = live.create(SecretSpec("API_KEY"), SecretSpec("GEN", generate=GenerateSpec()))
    page = context.new_page()
    traffic = watch(page)
    page.goto(live.url(req))
    page.fill("textarea[name=API_KEY]", canary)
    page.click("#submit")
    page.wait_for_selector("#written")
    page.wait_for_timeout(300)
    assert traffic.requests
    assert [u for u in traffic.requests if not u.startswith(live.origin + "/r/")] == []
    assert [c for c in traffic.console if "Content Security Policy" in c] == []


def test_script_fills_generated_values_in_the_browser(
    live: LiveServer, context: BrowserContext
) -> None:
    """A generated field is pre-filled by the page with `bytes` random bytes, and written so."""
    req = live.create(SecretSpec("HEX_SECRET", generate=GenerateSpec(16, "hex")))
    page = context.new_page()
    page.goto(live.url(req))
    value = page.input_value("textarea[name=HEX_SECRET]")
    page.click("#submit")
    page.wait_for_selector("#written")
    assert re.fullmatch(r"[0-9a-f]{32}", value)
    assert dotenv_values(live.project / ".env") == {"HEX_SECRET": value}
    assert req.outcome is not None
    assert req.outcome.fingerprint == server_fingerprint(page)


def test_show_button_unmasks_a_secret_field(live: LiveServer, context: BrowserContext) -> None:
    """The Show toggle removes the masking and says so with aria-pressed."""
    req = live.create()
    page = context.new_page()
    page.goto(live.url(req))
    area = page.locator("textarea[name=API_KEY]")
    masked = area.evaluate("e => getComputedStyle(e).webkitTextSecurity")
    page.click("button.reveal")
    shown = area.evaluate("e => getComputedStyle(e).webkitTextSecurity")
    assert (masked, shown) == ("disc", "none")
    assert page.get_attribute("button.reveal", "aria-pressed") == "true"


def test_page_fits_a_320px_screen(live: LiveServer, browser: Browser) -> None:
    """At 320 CSS pixels wide nothing scrolls sideways."""
    req = live.create(SecretSpec("A_VERY_LONG_KEY_NAME_FOR_A_NARROW_SCREEN_TEST"))
    context = browser.new_context(viewport={"width": 320, "height": 640})
    try:
        page = context.new_page()
        page.goto(live.url(req))
        width = page.evaluate("document.documentElement.scrollWidth")
    finally:
        context.close()
    assert width <= 320


def test_enter_in_a_single_line_field_submits(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Enter submits from a one-line field instead of adding a newline."""
    req = live.create()
    page = context.new_page()
    page.goto(live.url(req))
    page.fill("textarea[name=API_KEY]", canary)
    page.press("textarea[name=API_KEY]", "Enter")
    page.wait_for_selector("#written")
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}


def test_screenshots_for_review(live: LiveServer, browser: Browser, tmp_path: Path) -> None:
    """Light and dark renderings load without console errors (images kept in tmp for review)."""
    req = live.create(
        SecretSpec("STRIPE_SECRET_KEY", caption="Dashboard → Developers → API keys"),
        SecretSpec("SESSION_SECRET", generate=GenerateSpec()),
    )
    errors: list[str] = []
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme, viewport={"width": 800, "height": 900})
        try:
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(live.url(req))
            page.screenshot(path=str(tmp_path / f"page-{scheme}.png"), full_page=True)
        finally:
            context.close()
    assert errors == []
