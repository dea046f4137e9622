"""In Chromium, the reason's heading says who wrote it, as the server rendered it (no script
rewrites it): the agent, the person at the terminal, or offprompt."""

import pytest
from playwright.sync_api import BrowserContext

from offprompt.spec import ReasonAuthor

from .conftest import LiveServer

pytestmark = pytest.mark.browser


@pytest.mark.parametrize(
    ("by", "heading"),
    [
        ("agent", "Why, in the agent's words"),
        ("person", "Why, as given at the terminal"),
        ("offprompt", "Why"),
    ],
)
def test_the_reason_heading_names_its_author(
    live: LiveServer, context: BrowserContext, by: ReasonAuthor, heading: str
) -> None:
    """What the person reads above the reason, once the page's script has run."""
    page = context.new_page()
    page.goto(live.url(live.create(reason_by=by)))
    page.locator("#expiry", has_text="Connected").wait_for()

    assert heading == page.locator("#reason-h").text_content()  # the CSS upper-cases it
    said = page.locator("section.reason").text_content() or ""
    assert (by == "agent") == ("The agent wrote this" in said)
