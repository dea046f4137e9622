"""The confirmation code through the MCP tools (DESIGN §17): a remote submit is held; the agent
is told to ask the person for the code their page shows and to pass it to await_secret; the
right code writes, each wrong one costs a try, the fifth cancels and drops the values. The code
itself is in no result, no log line and no journal.

The page's held submit is made here through the store (`Submitter.prepare` + `store.hold`), as
the page does it, so these tests hold whatever the page's own tests do."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dotenv import dotenv_values

from offprompt.crypto.confirm import shown
from offprompt.store import RequestRecord
from offprompt.tools.service import Service

from .harness import FakeOpener, Session, connect, refusal, settings, structured

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


@pytest.fixture
async def remote(
    project: Path, state: Path, opener: FakeOpener
) -> AsyncIterator[tuple[Session, Service]]:
    """A server whose requests are remote (no tunnel: the loopback link), legacy client with
    no elicitation."""
    made = settings(
        state, OFFPROMPT_SANDBOX="1", OFFPROMPT_TUNNEL="off", OFFPROMPT_AWAIT_SECONDS="3"
    )
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client, service
    finally:
        await client.close()
        await service.close()


async def collect(session: Session, service: Service) -> RequestRecord:
    first = structured(await session.call("collect_secret", ARGS))
    assert first["status"] == "awaiting"
    request = service.store.get(first["request_id"])
    assert request is not None
    assert request.remote
    return request


async def hold(service: Service, request: RequestRecord, value: str) -> str:
    """The person's page submit, held for its code: the code their page would show."""
    prepared = await service.core.parts.submitter.prepare(request, {"API_KEY": value})
    return service.store.hold(request, prepared)


def wrong(code: str) -> str:
    return ("2" if code[0] != "2" else "3") + code[1:]


def no_code_in(code: str, *texts: str) -> None:
    for text in texts:
        assert code not in text
        assert shown(code) not in text


async def test_a_held_submit_asks_for_the_code_and_the_right_one_writes(
    remote: tuple[Session, Service], project: Path, state: Path, canary: str, caplog: Any
) -> None:
    """await_secret says `confirm` (tries left, no code); the right code writes the value, and
    the result has the fingerprint. The code and the value are in no result, log or journal."""
    caplog.set_level(logging.DEBUG, logger="offprompt")
    session, service = remote
    request = await collect(session, service)
    code = await hold(service, request, canary)
    asked = await session.call("await_secret", {"request_id": request.id})
    said = structured(asked)
    assert (said["status"], said["tries_left"], said["names"]) == ("confirm", 5, ["API_KEY"])
    assert said["expires_in"] > 0
    assert "url" not in said
    assert "confirm" in said["note"]
    assert "never guess" in said["note"].lower()
    done = await session.call("await_secret", {"request_id": request.id, "confirm": shown(code)})
    written = structured(done)
    assert written["status"] == "written"
    assert written["fingerprint"] == request.outcome.fingerprint  # type: ignore[union-attr]
    assert written["tell_user"].startswith("Fingerprint ")
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    journal = (state / "journal.jsonl").read_text()
    texts = [json.dumps(asked), json.dumps(done), journal, caplog.text]
    no_code_in(code, *texts)
    for text in texts:
        assert canary not in text


async def test_a_lowercase_code_without_its_hyphen_is_the_code(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """Case, blanks and the hyphen are ignored, as the person may type them."""
    session, service = remote
    request = await collect(session, service)
    code = await hold(service, request, canary)
    typed = " ".join(code.lower())
    done = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": typed})
    )
    assert done["status"] == "written"


async def test_each_wrong_code_says_how_many_tries_are_left(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """A wrong code: still `confirm`, one try fewer, a note that it was wrong; nothing written."""
    session, service = remote
    request = await collect(session, service)
    code = await hold(service, request, canary)
    for left in (4, 3, 2, 1):
        said = structured(
            await session.call("await_secret", {"request_id": request.id, "confirm": wrong(code)})
        )
        assert (said["status"], said["tries_left"]) == ("confirm", left)
        assert "wrong" in said["note"]
        assert f"{left} {'try' if left == 1 else 'tries'} left" in said["note"]
    assert not (project / ".env").exists()
    right = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": code})
    )
    assert right["status"] == "written"


async def test_the_fifth_wrong_code_cancels_and_drops_the_values(
    remote: tuple[Session, Service], project: Path, state: Path, canary: str
) -> None:
    """Five wrong codes: `cancelled` with the reason in the note; the values are dropped, and
    the right code afterwards writes nothing."""
    session, service = remote
    request = await collect(session, service)
    code = await hold(service, request, canary)
    for _ in range(4):
        await session.call("await_secret", {"request_id": request.id, "confirm": wrong(code)})
    last = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": wrong(code)})
    )
    assert last["status"] == "cancelled"
    assert "wrong confirmation codes" in last["note"]
    assert "tries_left" not in last
    assert (request.delivery.pending, request.delivery.code) == (None, None)
    late = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": code})
    )
    assert late["status"] == "cancelled"
    assert not (project / ".env").exists()
    assert not (state / "journal.jsonl").exists()


async def test_await_wakes_when_the_submit_is_held(
    remote: tuple[Session, Service], canary: str
) -> None:
    """An await_secret already waiting answers `confirm` as soon as the page's submit is held."""
    session, service = remote
    request = await collect(session, service)
    waiting = asyncio.ensure_future(session.call("await_secret", {"request_id": request.id}))
    await asyncio.sleep(0.2)
    assert not waiting.done()
    await hold(service, request, canary)
    said = structured(await asyncio.wait_for(waiting, 5))
    assert said["status"] == "confirm"


async def test_a_code_before_any_submit_spends_no_try(remote: tuple[Session, Service]) -> None:
    """Nothing held: the result says so and asks to wait; no try is spent."""
    session, service = remote
    request = await collect(session, service)
    said = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": "ABCD-EFG"})
    )
    assert said["status"] == "awaiting"
    assert "not submitted" in said["note"]
    assert request.delivery.tries_left == 5


async def test_a_failed_write_after_the_right_code_leaves_the_request_open(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """The right code, then the write fails (a folder where the file should be): a refusal
    naming the problem, no value in it, the request still open, the held values dropped."""
    session, service = remote
    request = await collect(session, service)
    code = await hold(service, request, canary)
    (project / ".env").mkdir()
    said = refusal(await session.call("await_secret", {"request_id": request.id, "confirm": code}))
    assert "write failed" in said
    assert "submit the page again" in said
    assert canary not in said
    no_code_in(code, said)
    assert request.status == "awaiting"
    assert request.delivery.pending is None
    again = structured(
        await session.call("await_secret", {"request_id": request.id, "confirm": code})
    )
    assert again["status"] == "awaiting"


async def test_opened_elsewhere_is_in_every_result(
    remote: tuple[Session, Service], canary: str
) -> None:
    """Once a second browser opened the page: `opened_elsewhere: true` and a line telling the
    model to tell the person, in await, cancel and a repeated collect alike."""
    session, service = remote
    request = await collect(session, service)
    before = structured(await session.call("await_secret", {"request_id": request.id}))
    assert "opened_elsewhere" not in before
    request.delivery.opened_elsewhere = True  # what the page sets for a second browser
    results = [
        structured(await session.call("collect_secret", ARGS)),
        structured(await session.call("await_secret", {"request_id": request.id})),
        structured(await session.call("cancel_secret", {"request_id": request.id})),
    ]
    for said in results:
        assert said["opened_elsewhere"] is True
        assert "opened in another browser" in said["note"]
