"""A second collect_secret for keys a request of this session is still collecting (a host moved
the first call to the background, and the model called again): no second request, page or tab.
"""

import asyncio
import json

import pytest

from .flow import REFUSED, Flow, secrets_of, structured, submit, texts

MODES = ["legacy", "2026-07-28"]


async def _opened_url(flow: Flow) -> str:
    (note,) = await flow.person_notes(1)
    url: str = note["url"]
    return url


@pytest.mark.parametrize("mode", MODES)
async def test_the_same_keys_again_get_the_open_request_not_a_second_page(
    flow: Flow, canary: str, mode: str
) -> None:
    """While the first call waits, the same call again answers at once with the open request
    (awaiting, its id, a note not to call again, no link); one tab opened; the first call gets
    the write with the page's fingerprint; the value is only in `.env`."""
    env = flow.person("record")
    async with flow.connect(mode, env=env) as (client, seen):
        first = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        url = await _opened_url(flow)
        again = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        shown = await submit(url, {"API_KEY": canary})
        written = await asyncio.wait_for(first, 30)
    repeated = structured(again)
    assert repeated["status"] == "awaiting"
    assert repeated["request_id"] == structured(written)["request_id"]
    assert repeated["names"] == ["API_KEY"]
    assert "url" not in repeated
    assert "no second page was opened" in repeated["note"]
    assert "Do not call collect_secret again" in repeated["note"]
    assert [n["url"] for n in flow.wait_person_notes(1)] == [url]  # one tab, and only one
    assert len(flow.journal()) == 1
    flow.assert_fingerprint(written, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(written, again))


async def test_overlapping_keys_are_refused_while_the_first_request_is_open(
    flow: Flow, canary: str
) -> None:
    """A call asking for an open request's key among others is refused, naming the open
    request and how to go on; no second tab; the open request still writes."""
    async with flow.connect("legacy", env=flow.person("record")) as (client, seen):
        first = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        url = await _opened_url(flow)
        wider = await client.call_tool("collect_secret", secrets_of("API_KEY", "OTHER_KEY"))
        shown = await submit(url, {"API_KEY": canary})
        written = await asyncio.wait_for(first, 30)
    (text,) = texts(wider)
    request_id = structured(written)["request_id"]
    assert wider.is_error is True
    assert wider.structured_content is None
    assert text.startswith(REFUSED + "API_KEY is already being collected by request " + request_id)
    assert "cancel_secret" in text
    assert len(flow.wait_person_notes(1)) == 1
    flow.assert_fingerprint(written, shown)
    flow.assert_contained(canary, stderr=seen.stderr, results=(written, wider))


async def test_the_same_key_for_another_file_is_a_request_of_its_own(flow: Flow) -> None:
    """Only the same destination counts: API_KEY for `other.env` opens its own page."""
    async with flow.connect("legacy", env={**flow.person("record"), "OFFPROMPT_TTL": "5"}) as (
        client,
        _seen,
    ):
        first = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        await _opened_url(flow)
        other = asyncio.ensure_future(
            client.call_tool(
                "collect_secret", secrets_of("API_KEY", sink={"kind": "dotenv", "path": "o.env"})
            )
        )
        notes = await flow.person_notes(2)
        for call in (first, other):
            call.cancel()
    assert len({n["url"] for n in notes}) == 2


async def test_a_closed_request_does_not_count(flow: Flow, canary: str) -> None:
    """Once the first request is written, the same call again is a new request with its page
    (the person may mean to replace the value)."""
    async with flow.connect("legacy", env=flow.person("http", {"API_KEY": canary})) as (
        client,
        _seen,
    ):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        second = await client.call_tool("collect_secret", secrets_of("API_KEY"))
    ids = [structured(r)["request_id"] for r in (first, second)]
    assert [structured(r)["status"] for r in (first, second)] == ["written", "written"]
    assert ids[0] != ids[1]
    assert len({json.dumps(n) for n in flow.wait_person_notes(2)}) == 2


async def test_a_remote_request_asked_again_hands_out_the_same_link(flow: Flow) -> None:
    """Remote (the link is the agent's to show): the same call again answers with the open
    request's own link, to show again, and no second request."""
    env = {"OFFPROMPT_SANDBOX": "1", "OFFPROMPT_TUNNEL": "off"}
    async with flow.connect("legacy", env=env) as (client, _seen):
        first = structured(await client.call_tool("collect_secret", secrets_of("API_KEY")))
        again = structured(await client.call_tool("collect_secret", secrets_of("API_KEY")))
    assert (again["status"], again["request_id"]) == ("awaiting", first["request_id"])
    assert again["url"] == first["url"]
    assert "show the person the url below on its own line" in again["note"]
    assert not flow.browser_opened()
