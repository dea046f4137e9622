"""DESIGN §17 in Chromium, local: the first browser to open the page holds the request; a second
browser (another context: another cookie jar) sees the names and "another browser", no field and
no button, and its post is refused; the person then writes at once, with no code."""

from __future__ import annotations

from dotenv import dotenv_values
from playwright.sync_api import Browser, BrowserContext

from .conftest import LiveServer


def test_a_second_browser_cannot_fill_a_local_page_the_person_opened(
    live: LiveServer, browser: Browser, context: BrowserContext, canary: str
) -> None:
    """The person's context opens the page first; a second context gets "another browser" with
    no textarea or submit button, and a post with the person's nonce from it is 403; the
    person's submit writes their value and says Written, never asking for a code."""
    request = live.create()
    url = live.url(request)
    mine = context.new_page()
    mine.goto(url)
    nonce = mine.locator('input[name="nonce"]').get_attribute("value")
    assert nonce
    other = browser.new_context()
    try:
        theirs = other.new_page()
        theirs.goto(url)
        assert "another browser" in theirs.locator("main").inner_text()
        assert theirs.locator("textarea").count() == 0
        assert theirs.locator("#submit").count() == 0
        posted = other.request.post(
            url, form={"nonce": nonce, "API_KEY": "not-the-persons-value"}, max_redirects=0
        )
        assert posted.status == 403
    finally:
        other.close()
    assert (request.status, (live.project / ".env").exists()) == ("awaiting", False)
    mine.locator('textarea[name="API_KEY"]').fill(canary)
    mine.locator("#submit").click()
    mine.locator("#written").wait_for(timeout=15_000)
    assert mine.locator("#confirm-code").count() == 0
    assert request.status == "written"
    assert dotenv_values(live.project / ".env") == {"API_KEY": canary}
