"""The page's quality bar in Chromium: Written holds no value, only loopback traffic, small
screens, 200% zoom, dark mode, and no console errors."""

import pytest
from playwright.sync_api import Browser, BrowserContext, Page

from offprompt.spec import GenerateSpec, SecretSpec

from .conftest import LiveServer
from .kit import NAMES, dom, paste, record

pytestmark = pytest.mark.browser

MANY = (
    SecretSpec("STRIPE_SECRET_KEY", caption="Dashboard → Developers → API keys → Secret key"),
    SecretSpec("RESEND_API_KEY", provider="resend"),
    SecretSpec("A_VERY_LONG_KEY_NAME_THAT_HAS_NO_BREAKS_AT_ALL_IN_IT_ANYWHERE_XYZ"),
    SecretSpec("APPLE_PRIVATE_KEY"),
    SecretSpec("SESSION_SECRET", generate=GenerateSpec()),
)

GOOD = {
    "RESEND_API_KEY": "re_abcdefghijklmnop",
    "APPLE_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nMIGT\n-----END PRIVATE KEY-----",
}


def test_written_view_holds_no_value_anywhere_in_the_dom(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """After a write, no typed, pasted or page-generated value is in the document or a field."""
    req = live.create(
        SecretSpec("A_KEY"), SecretSpec("B_KEY"), SecretSpec("GEN", generate=GenerateSpec())
    )
    page = clip.new_page()
    page.goto(live.url(req))
    generated = page.input_value("textarea[name=GEN]")
    page.fill("textarea[name=A_KEY]", canary + "-typed")
    paste(page, "textarea[name=B_KEY]", f"B_KEY={canary}-pasted\n")
    page.click("#submit")
    page.locator("#written").wait_for()
    after = dom(page)
    assert [v in after for v in (canary, generated)] == [False, False]


def test_written_view_shows_emoji_names_and_a_receipt_per_key(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Written shows the server's four emoji with names, equal to the page's, and each key."""
    (live.project / ".env").write_text("OLD_KEY=1\n")
    req = live.create(
        SecretSpec("NEW_KEY"), SecretSpec("OLD_KEY"), SecretSpec("GEN", generate=GenerateSpec())
    )
    page = context.new_page()
    page.goto(live.url(req))
    page.fill("textarea[name=NEW_KEY]", canary)
    page.fill("textarea[name=OLD_KEY]", canary)
    page.click("#submit")
    page.locator("#written").wait_for()
    assert req.outcome is not None
    assert req.outcome.fingerprint is not None
    emoji = req.outcome.fingerprint.split(" ")
    rows = page.locator("#receipt li").evaluate_all(
        "els => els.map(e => [e.dataset.name,"
        " Array.from(e.querySelectorAll('.tag')).map(t => t.textContent)])"
    )
    assert page.inner_text("#fp-server").strip() == req.outcome.fingerprint
    assert page.get_attribute("#fp-check", "data-page-fingerprint") == req.outcome.fingerprint
    assert page.inner_text(".fp-names") == " · ".join(NAMES[e] for e in emoji)
    assert rows == [
        ["NEW_KEY", ["added"]],
        ["OLD_KEY", ["replaced"]],
        ["GEN", ["generated", "added"]],
    ]


def test_no_request_leaves_loopback_through_every_path(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Load, paste, choose a file, write and Written: every request goes to 127.0.0.1:port."""
    page = clip.new_page()
    sent = record(page)
    page.goto(live.url(live.create(*MANY)))
    paste(page, "textarea[name=RESEND_API_KEY]", "RESEND_API_KEY=re_abcdefghijklmnop\n")
    page.set_input_files(
        "#env-file",
        files=[{"name": ".env", "mimeType": "text/plain", "buffer": b"STRIPE_SECRET_KEY=x\n"}],
    )
    page.fill("textarea[name=STRIPE_SECRET_KEY]", canary)
    page.fill(
        "textarea[name=A_VERY_LONG_KEY_NAME_THAT_HAS_NO_BREAKS_AT_ALL_IN_IT_ANYWHERE_XYZ]", canary
    )
    page.fill(
        "textarea[name=APPLE_PRIVATE_KEY]",
        "-----BEGIN PRIVATE KEY-----\nMIGT\n-----END PRIVATE KEY-----",
    )
    page.click("#submit")
    page.locator("#written").wait_for()
    page.wait_for_timeout(300)
    assert [u for u in sent.urls() if not u.startswith(live.origin + "/r/")] == []
    assert [c for c in sent.console if c.startswith(("error", "warning"))] == []


def horizontal_overflow(page: Page) -> int:
    extra: int = page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    return extra


@pytest.mark.parametrize(
    ("width", "scale"), [(320, 1), (640, 2)], ids=["320px", "200% zoom of 1280px"]
)
def test_no_horizontal_scroll_on_small_screens_or_at_200_percent(
    live: LiveServer, browser: Browser, width: int, scale: int, canary: str
) -> None:
    """At 320 px, and at 200% zoom of a 1280 px window, nothing scrolls sideways, Written too."""
    ctx = browser.new_context(
        viewport={"width": width, "height": 700},
        device_scale_factor=scale,
        permissions=["clipboard-read", "clipboard-write"],
    )
    try:
        page = ctx.new_page()
        page.goto(live.url(live.create(*MANY)))
        paste(page, "textarea[name=STRIPE_SECRET_KEY]", "STRIPE_SECRET_KEY=pk_live_x\nOTHER=1\n")
        page.locator("#banner").wait_for()
        page.wait_for_timeout(800)
        form = horizontal_overflow(page)
        for secret in MANY[:4]:
            page.fill(f"textarea[name={secret.name}]", GOOD.get(secret.name, canary))
        page.click("#submit")
        page.locator("#written").wait_for()
        assert (form, horizontal_overflow(page)) == (0, 0)
    finally:
        ctx.close()


def test_dark_mode_renders_dark_without_errors(live: LiveServer, browser: Browser) -> None:
    """With a dark colour scheme the page uses its dark palette and logs no error."""
    ctx = browser.new_context(color_scheme="dark")
    try:
        page = ctx.new_page()
        sent = record(page)
        page.goto(live.url(live.create(*MANY)))
        colours = page.evaluate(
            "[getComputedStyle(document.body).backgroundColor,"
            " getComputedStyle(document.body).color]"
        )
    finally:
        ctx.close()
    assert colours == ["rgb(18, 18, 17)", "rgb(236, 235, 230)"]
    assert [c for c in sent.console if c.startswith("error")] == []


def test_light_mode_renders_light(live: LiveServer, context: BrowserContext) -> None:
    """With the default light scheme the page uses its light palette."""
    page = context.new_page()
    page.goto(live.url(live.create()))
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(243, 243, 239)"
