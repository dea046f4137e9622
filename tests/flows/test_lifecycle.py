"""A request's life on the real server: cancel_secret, expiry, two at once, progress."""

import asyncio
import json
import time
from typing import Any

import pytest
from wire import Wire

from .flow import (
    AtDialog,
    Chromium,
    Flow,
    aget,
    assert_page_closed,
    load,
    post,
    secrets_of,
    structured,
    submit,
)
from .person import PageRefused, http_submit


async def first_elicitation(seen: Any, timeout: float = 10) -> Any:
    """The first URL elicitation the client was sent, once it arrives."""
    deadline = time.monotonic() + timeout
    while not seen.elicitations:
        assert time.monotonic() < deadline, "no elicitation arrived"
        await asyncio.sleep(0.02)
    return seen.elicitations[0]


async def ignore(url: str) -> None:
    """A person who sees the dialog, accepts, and never types anything."""


async def test_cancel_closes_an_awaiting_request(flow: Flow, canary: str) -> None:
    """cancel_secret → cancelled; the page and its status then say so, and nothing is written."""
    async with flow.connect("legacy") as (client, _):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        request_id = structured(first)["request_id"]
        url = structured(first)["url"]
        cancelled = await client.call_tool("cancel_secret", {"request_id": request_id})
        out = structured(cancelled)
        assert out["status"] == "cancelled"
        assert out["request_id"] == request_id
        assert "url" not in out
        assert "nothing was written" in out["note"]
        code, body = await aget(url)
        assert code == 410
        assert "cancelled" in body
        await assert_page_closed(url, "cancelled")
        after = await client.call_tool("await_secret", {"request_id": request_id})
        assert structured(after)["status"] == "cancelled"
    assert not (flow.project / ".env").exists()
    assert flow.journal() == []
    assert canary.encode() not in flow.traffic()
    assert flow.tool_calls()


async def test_late_submit_after_cancel_is_refused(flow: Flow, canary: str) -> None:
    """A person who submits after cancel_secret gets 410 and the value is written nowhere."""
    async with flow.connect("legacy") as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        form = await load(structured(first)["url"])  # loaded before the agent cancels
        await client.call_tool("cancel_secret", {"request_id": structured(first)["request_id"]})
        with pytest.raises(PageRefused) as err:
            await post(form, {"API_KEY": canary})
    assert err.value.status == 410
    assert canary not in err.value.body
    assert not (flow.project / ".env").exists()
    assert canary.encode() not in flow.traffic()
    assert canary not in seen.stderr


async def test_cancel_ends_a_blocked_collect(flow: Flow, canary: str) -> None:
    """A collect blocked on an accepted dialog returns cancelled when cancel_secret arrives."""
    async with flow.connect("legacy", action="accept", on_url=ignore) as (client, seen):
        blocked = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        request_id = (await first_elicitation(seen)).elicitation_id
        await asyncio.sleep(0.1)
        assert not blocked.done()
        cancelled = await client.call_tool("cancel_secret", {"request_id": request_id})
        result = await asyncio.wait_for(blocked, 10)
    assert structured(cancelled)["status"] == "cancelled"
    out = structured(result)
    assert out["status"] == "cancelled"
    assert out["request_id"] == request_id
    assert "fingerprint" not in out
    assert not (flow.project / ".env").exists()
    assert canary.encode() not in flow.traffic()
    assert flow.tool_calls()


async def test_cancel_after_the_write_keeps_it(flow: Flow, canary: str) -> None:
    """cancel_secret on a written request changes nothing and reports written."""
    async with flow.connect("legacy") as (client, seen):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        fingerprint = await submit(structured(first)["url"], {"API_KEY": canary})
        late = await client.call_tool(
            "cancel_secret", {"request_id": structured(first)["request_id"]}
        )
    flow.assert_fingerprint(late, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(first, late))


async def test_blocked_collect_expires_with_the_ttl(flow: Flow, canary: str) -> None:
    """OFFPROMPT_TTL=2: a collect waiting on an open page returns expired; the page says 410."""
    env = {**flow.person("record"), "OFFPROMPT_TTL": "2"}
    async with flow.connect("legacy", env=env) as (client, _):
        started = time.monotonic()
        result = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        waited = time.monotonic() - started
        (note,) = await flow.person_notes()
        out = structured(result)
        assert out["status"] == "expired"
        assert "expired" in out["note"]
        assert "url" not in out
        assert "expires_in" not in out
        code, body = await aget(note["url"])
        assert code == 410
        assert "expired" in body
        await assert_page_closed(note["url"], "expired")
        again = await client.call_tool("await_secret", {"request_id": out["request_id"]})
        assert structured(again)["status"] == "expired"
    assert 1.5 < waited < 5
    assert not (flow.project / ".env").exists()
    assert canary.encode() not in flow.traffic()


async def test_awaiting_link_expires_with_the_ttl(flow: Flow) -> None:
    """OFFPROMPT_TTL=2: a handed-out link's await_secret ends expired, not awaiting."""
    env = {"OFFPROMPT_TTL": "2", "OFFPROMPT_AWAIT_SECONDS": "10"}
    async with flow.connect("legacy", env=env) as (client, _):
        first = await client.call_tool("collect_secret", secrets_of("API_KEY"))
        assert structured(first)["expires_in"] <= 2
        done = await client.call_tool(
            "await_secret", {"request_id": structured(first)["request_id"]}
        )
    assert structured(done)["status"] == "expired"
    assert not (flow.project / ".env").exists()


@pytest.mark.browser
async def test_two_collects_in_flight_are_both_written(
    flow: Flow, chromium: Chromium, canary: str
) -> None:
    """Two collect calls at once on one server: two requests, two pages, both keys in .env."""
    other = canary + "-b"
    person = AtDialog(chromium, {"A_KEY": canary, "B_KEY": other})
    async with flow.connect("legacy", action="accept", on_url=person) as (client, seen):
        a, b = await asyncio.gather(
            client.call_tool("collect_secret", secrets_of("A_KEY")),
            client.call_tool("collect_secret", secrets_of("B_KEY")),
        )
        shown = dict(zip(person.urls, await person.fingerprints(), strict=True))
    by_id = {e.elicitation_id: shown[e.url] for e in seen.elicitations}
    ids = {structured(a)["request_id"], structured(b)["request_id"]}
    assert len(ids) == 2
    assert set(by_id) == ids
    for result in (a, b):
        flow.assert_fingerprint(result, by_id[structured(result)["request_id"]])
    # Whichever write came second saw the first one's key in the file.
    assert ["A_KEY", "B_KEY"] in (
        sorted(structured(a)["file_keys"]),
        sorted(structured(b)["file_keys"]),
    )
    flow.assert_contained(canary, stderr=seen.stderr, results=(a, b), name="A_KEY")
    flow.assert_contained(other, stderr=seen.stderr, results=(a, b), name="B_KEY")


def test_progress_is_sent_at_once_while_a_call_blocks(flow: Flow, canary: str) -> None:
    """A blocking collect with a progressToken gets progress at once, then its result."""
    env = {**flow.env, **flow.person("record")}
    wire = Wire(flow.command(), env=env, cwd=str(flow.project))
    try:
        wire.initialize()
        started = time.monotonic()
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {
                    "name": "collect_secret",
                    "arguments": secrets_of("API_KEY"),
                    "_meta": {"progressToken": "p-1"},
                },
            }
        )
        first = wire.expect(lambda m: m.get("method") == "notifications/progress", timeout=10)
        assert time.monotonic() - started < 1.5
        assert first["params"]["progressToken"] == "p-1"
        assert "API_KEY" in first["params"]["message"]
        url = json.loads(flow.notes.read_text().splitlines()[0])["url"]
        fingerprint = http_submit(url, {"API_KEY": canary})
        answer = wire.response(7, timeout=10)
        wire.close()
    finally:
        wire.kill()
    messages = [json.loads(line) for line in wire.lines]
    notes = [m for m in messages if m.get("method") == "notifications/progress"]
    progress = [m["params"]["progress"] for m in notes]
    assert progress == sorted(set(progress))
    assert messages.index(notes[0]) < messages.index(answer)
    assert answer["result"]["structuredContent"]["fingerprint"] == fingerprint
    traffic = b"".join(wire.sent + wire.lines)
    assert canary.encode() not in traffic
    assert canary not in wire.wait_stderr()
    assert canary not in (flow.state / "journal.jsonl").read_text()
    assert flow.tool_calls()


async def test_host_giving_up_leaves_the_request_open(flow: Flow, canary: str) -> None:
    """A collect the host cancels stays open: a later submit is written, await_secret says so."""
    async with flow.connect("legacy", action="accept", on_url=ignore) as (client, seen):
        blocked = asyncio.ensure_future(client.call_tool("collect_secret", secrets_of("API_KEY")))
        asked = await first_elicitation(seen)
        await asyncio.sleep(0.1)
        blocked.cancel()  # the SDK tells the server with notifications/cancelled
        with pytest.raises(asyncio.CancelledError):
            await blocked
        fingerprint = await submit(asked.url, {"API_KEY": canary})
        done = await client.call_tool("await_secret", {"request_id": asked.elicitation_id})
    sent = flow.traffic().split(b"\n")
    cancel = next(i for i, m in enumerate(sent) if b'"notifications/cancelled"' in m)
    later = next(i for i, m in enumerate(sent) if b'"await_secret"' in m)
    assert cancel < later
    # The cancelled call is never answered; only await_secret is.
    assert [r["params"]["name"] for r, _ in flow.tool_calls()] == ["await_secret"]
    flow.assert_fingerprint(done, fingerprint)
    flow.assert_contained(canary, stderr=seen.stderr, results=(done,))
