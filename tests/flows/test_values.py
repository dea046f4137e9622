"""Values that are hard to carry: shell and Unicode characters, and one no .env form can hold."""

import asyncio
import functools
from typing import Any

import pytest
from dotenv import dotenv_values

from .flow import AtDialog, Chromium, Flow, assert_page_closed, secrets_of

pytestmark = pytest.mark.browser


async def test_shell_and_unicode_characters_round_trip(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """A value with $, quotes, #, a tab and emoji is written exactly; page and agent agree."""
    value = f'{canary} $HOME "q" #x\tü 🍋'
    person = AtDialog(chromium, {"API_KEY": value})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (shown,) = await person.fingerprints()
        await assert_page_closed(person.urls[0], "written", value, canary)
    flow.assert_fingerprint(result, shown)
    flow.assert_contained(value, stderr=seen.stderr, results=(result,))
    assert canary.encode() not in flow.traffic()


def refused_then_fixed(browser: Any, url: str, bad: str, good: str) -> dict[str, Any]:
    """Type `bad`, submit, read the reason beside the field; then type `good` and submit."""
    context = browser.new_context()
    bodies: list[bytes] = []
    try:
        page = context.new_page()
        page.on("response", lambda r: bodies.append(r.body() if r.status != 204 else b""))
        page.goto(url)
        field = page.locator('textarea[name="API_KEY"]')
        field.fill(bad)
        page.locator("#submit").click()
        reasons = page.locator("#e-API_KEY")
        reasons.wait_for(state="visible")
        reason = reasons.inner_text()
        field.fill(good)
        page.locator("#submit").click()
        page.locator("#written").wait_for()
        return {
            "reason": reason,
            "shown": page.locator("#fp-server").inner_text().strip(),
            "computed": page.locator("#fp-check").get_attribute("data-page-fingerprint"),
            "echoed": any(bad.encode() in b or good.encode() in b for b in bodies),
        }
    finally:
        context.close()


async def test_value_no_dotenv_form_holds_is_refused_then_fixed(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """A value with ' and $ is refused beside its field, never written; the next one is."""
    bad = f"it's {canary}-bad $5"
    good = canary
    urls: list[str] = []
    asked = asyncio.Event()

    async def dialog(url: str) -> None:
        urls.append(url)
        asked.set()

    async with flow.connect("legacy", action="accept", on_url=dialog) as (client, seen):
        call = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        await asyncio.wait_for(asked.wait(), 10)
        person = functools.partial(refused_then_fixed, url=urls[0], bad=bad, good=good)
        page = await chromium.run(person)
        result = await call
    assert "file sink" in page["reason"]
    assert page["echoed"] is False
    assert page["shown"] == page["computed"]
    flow.assert_fingerprint(result, page["shown"])
    assert dotenv_values(flow.project / ".env") == {"API_KEY": good}
    flow.assert_contained(good, stderr=seen.stderr, results=(result,))
    assert bad.encode() not in flow.traffic()
    assert bad not in seen.stderr
