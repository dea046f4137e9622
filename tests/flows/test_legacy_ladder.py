"""The ladder for a 2025-11-25 client (official SDK, legacy handshake) over a real stdio pipe."""

import asyncio

import mcp_types as types
import pytest

from .flow import AtDialog, Chromium, Flow, assert_page_closed, secrets_of, structured


@pytest.mark.browser
async def test_accepted_url_elicitation_writes_what_the_person_typed(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """Legacy + accept: the elicited URL, filled in Chromium, is written; the emoji match."""
    person = AtDialog(chromium, {"API_KEY": canary})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (shown,) = await person.fingerprints()
        await assert_page_closed(person.urls[0], "written", canary)
    (params,) = seen.elicitations
    assert params.mode == "url"
    assert params.message == "offprompt is collecting API_KEY. Open the page to type them."
    assert params.elicitation_id == structured(result)["request_id"]
    assert not flow.browser_opened()
    assert "url" not in structured(result)
    flow.assert_fingerprint(result, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.browser
async def test_accepted_elicitation_is_completed_after_the_write(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """Legacy + accept: notifications/elicitation/complete names the request once it is written."""
    person = AtDialog(chromium, {"API_KEY": canary})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        await person.fingerprints()
    completes = [
        n.root if hasattr(n, "root") else n
        for n in seen.notifications
        if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
    ]
    assert [c.params.elicitation_id for c in completes] == [structured(result)["request_id"]]
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.parametrize("action", ["decline", "cancel"])
async def test_refused_dialog_opens_the_browser(flow: Flow, canary: str, action: str) -> None:
    """Legacy + decline/cancel (what codex exec and claude -p answer): $BROWSER opens the page."""
    env = flow.person("http", {"API_KEY": canary})
    async with flow.connect("legacy", action=action, env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    (params,) = seen.elicitations
    assert params.url == note["url"]
    assert "url" not in structured(result)
    completes = [
        n
        for n in seen.notifications
        if isinstance(getattr(n, "root", n), types.ElicitCompleteNotification)
    ]
    assert completes == []  # the dialog is gone; there is nothing to complete
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


@pytest.mark.browser
async def test_client_without_elicitation_gets_the_browser(
    flow: Flow, chromium_path: str, canary: str
) -> None:
    """A host that declares nothing: $BROWSER opens the page, typed in Chromium, written."""
    env = flow.person("chromium", {"API_KEY": canary})
    async with flow.connect("legacy", env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
        await assert_page_closed(note["url"], "written", canary)
    assert seen.elicitations == []
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))


async def test_accept_after_the_window_does_not_count(flow: Flow, canary: str) -> None:
    """Legacy: an accept slower than OFFPROMPT_ELICIT_WAIT_MS is ignored; $BROWSER opens."""

    async def slow(url: str) -> None:
        await asyncio.sleep(0.6)

    env = {**flow.person("http", {"API_KEY": canary}), "OFFPROMPT_ELICIT_WAIT_MS": "200"}
    async with flow.connect("legacy", action="accept", on_url=slow, env=env) as (client, seen):
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        (note,) = await flow.person_notes()
    assert seen.elicitations[0].url == note["url"]
    flow.assert_fingerprint(result, note["fingerprint"])
    flow.assert_contained(canary, stderr=seen.stderr, results=(result,))
