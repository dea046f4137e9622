"""The confirmation code asked for in the host's own form dialog (DESIGN §17), where the client
declared form elicitation: legacy `elicitation/create` answered in the call, 2026-07-28
`input_required` answered on the retry. Declined, dismissed or unanswered, the result asks
through the agent instead. Held submits are made through the store, as the page makes them."""

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
from offprompt.tools.service import CODE_KEY, Service

from .harness import FakeOpener, Session, connect, settings, structured

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}
FORM: dict[str, Any] = {"elicitation": {"form": {}}}


@pytest.fixture
async def remote(
    project: Path, state: Path, opener: FakeOpener
) -> AsyncIterator[tuple[Session, Service]]:
    made = settings(
        state, OFFPROMPT_SANDBOX="1", OFFPROMPT_TUNNEL="off", OFFPROMPT_AWAIT_SECONDS="2"
    )
    client, service = await connect(project, made, opener)
    try:
        yield client, service
    finally:
        await client.close()
        await service.close()


async def held(session: Session, service: Service, value: str, **modern: Any) -> tuple[str, str]:
    """A remote request whose submit of `value` is held: its id and the page's code."""
    first = structured(await session.call("collect_secret", ARGS, **modern))
    request = service.store.get(first["request_id"])
    assert request is not None
    prepared = await service.core.parts.submitter.prepare(request, {"API_KEY": value})
    return request.id, service.store.hold(request, prepared)


def request_of(service: Service, request_id: str) -> RequestRecord:
    request = service.store.get(request_id)
    assert request is not None
    return request


def forms(session: Session) -> list[dict[str, Any]]:
    return [p for m, p in session.asked if m == "elicitation/create" and p.get("mode") == "form"]


def answering(*codes: str | None) -> Any:
    """An answerer: each form gets the next of `codes` (None: decline); URL dialogs accept."""
    queue = list(codes)

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        if params.get("mode") != "form":
            return {"action": "accept"}
        code = queue.pop(0)
        if code is None:
            return {"action": "decline"}
        return {"action": "accept", "content": {"code": code}}

    return answer


def wrong(code: str) -> str:
    return ("2" if code[0] != "2" else "3") + code[1:]


@pytest.mark.parametrize(
    "caps", [FORM, {"elicitation": {}}, {"elicitation": {"form": {}, "url": {}}}]
)
async def test_legacy_form_dialog_takes_the_code_and_writes(
    remote: tuple[Session, Service], project: Path, canary: str, caps: dict[str, Any], caplog: Any
) -> None:
    """A legacy client declaring form (or form-only `{}`) gets the form dialog; the code typed
    there writes the value. The form asks for one short `code` string."""
    caplog.set_level(logging.DEBUG, logger="offprompt")
    session, service = remote
    await session.initialize(caps)
    request_id, code = await held(session, service, canary)
    session.answerer = answering(shown(code).lower())
    done = structured(await session.call("await_secret", {"request_id": request_id}))
    assert done["status"] == "written"
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    (form,) = forms(session)
    assert form["message"] == "Type the code the offprompt page shows"
    schema = form["requestedSchema"]
    assert schema["required"] == ["code"]
    assert schema["properties"]["code"]["type"] == "string"
    for text in (json.dumps(done), json.dumps(session.notes), caplog.text):
        assert code not in text
        assert canary not in text


async def test_legacy_wrong_code_in_the_form_asks_again_with_tries_left(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """A wrong code in the dialog: the dialog again, saying it was wrong and how many tries are
    left; the right one then writes."""
    session, service = remote
    await session.initialize(FORM)
    request_id, code = await held(session, service, canary)
    session.answerer = answering(wrong(code), wrong(code), code)
    done = structured(await session.call("await_secret", {"request_id": request_id}))
    assert done["status"] == "written"
    messages = [f["message"] for f in forms(session)]
    assert messages[0] == "Type the code the offprompt page shows"
    assert messages[1].startswith("That code was wrong (4 tries left).")
    assert messages[2].startswith("That code was wrong (3 tries left).")


async def test_legacy_declined_form_asks_through_the_agent(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """Declined: the result is `confirm`, asking the agent to ask the person; no try spent.
    The agent's `confirm` then writes."""
    session, service = remote
    await session.initialize(FORM)
    request_id, code = await held(session, service, canary)
    session.answerer = answering(None)
    said = structured(await session.call("await_secret", {"request_id": request_id}))
    assert (said["status"], said["tries_left"]) == ("confirm", 5)
    assert "confirm" in said["note"]
    done = structured(
        await session.call("await_secret", {"request_id": request_id, "confirm": code})
    )
    assert done["status"] == "written"
    assert dotenv_values(project / ".env") == {"API_KEY": canary}


async def test_legacy_unanswered_form_asks_through_the_agent(
    remote: tuple[Session, Service], canary: str
) -> None:
    """A host that never answers the dialog: after the await window, `confirm`."""
    session, service = remote
    await session.initialize(FORM)
    request_id, _ = await held(session, service, canary)
    session.answerer = None
    said = structured(await session.call("await_secret", {"request_id": request_id}))
    assert said["status"] == "confirm"
    assert len(forms(session)) == 1


async def test_legacy_await_waiting_asks_the_form_when_the_submit_is_held(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """An await_secret already waiting wakes on the hold and asks the dialog at once."""
    session, service = remote
    await session.initialize(FORM)
    first = structured(await session.call("collect_secret", ARGS))
    request = request_of(service, first["request_id"])
    waiting = asyncio.ensure_future(session.call("await_secret", {"request_id": request.id}))
    await asyncio.sleep(0.1)
    prepared = await service.core.parts.submitter.prepare(request, {"API_KEY": canary})
    code = service.store.hold(request, prepared)
    session.answerer = answering(code)
    done = structured(await asyncio.wait_for(waiting, 5))
    assert done["status"] == "written"


async def test_a_repeated_collect_of_a_held_request_asks_the_form(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """collect_secret again for the keys of a held request: the code is asked for there too."""
    session, service = remote
    await session.initialize(FORM)
    _, code = await held(session, service, canary)
    session.answerer = answering(code)
    done = structured(await session.call("collect_secret", ARGS))
    assert done["status"] == "written"
    assert dotenv_values(project / ".env") == {"API_KEY": canary}


async def test_a_client_without_form_gets_no_dialog(
    remote: tuple[Session, Service], canary: str
) -> None:
    """URL-only elicitation: no form is sent; the result asks through the agent."""
    session, service = remote
    await session.initialize({"elicitation": {"url": {}}})
    request_id, _ = await held(session, service, canary)
    session.answerer = answering()
    said = structured(await session.call("await_secret", {"request_id": request_id}))
    assert said["status"] == "confirm"
    assert forms(session) == []


def form_request(result: dict[str, Any]) -> dict[str, Any]:
    assert result["resultType"] == "input_required"
    ask = result["inputRequests"][CODE_KEY]
    assert ask["method"] == "elicitation/create"
    params = ask["params"]
    assert params["mode"] == "form"
    assert isinstance(result["requestState"], str)
    return params  # type: ignore[no-any-return]


async def test_modern_form_in_input_required_writes_on_the_retry(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """2026-07-28 with form: await_secret answers input_required with the code form; the retry
    carrying the code writes the value."""
    session, service = remote
    request_id, code = await held(session, service, canary, modern=FORM)
    args = {"request_id": request_id}
    first = await session.call("await_secret", args, modern=FORM)
    params = form_request(first)
    assert params["message"] == "Type the code the offprompt page shows"
    assert code not in json.dumps(first)
    answer = {CODE_KEY: {"action": "accept", "content": {"code": shown(code)}}}
    done = await session.call(
        "await_secret",
        args,
        modern=FORM,
        inputResponses=answer,
        requestState=first["requestState"],
    )
    said = structured(done)
    assert said["status"] == "written"
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert code not in json.dumps(done)


async def test_modern_wrong_code_asks_again_and_decline_asks_the_agent(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """A wrong code on the retry: the form again, saying 4 tries are left; a decline then:
    `confirm` through the agent. Nothing written."""
    session, service = remote
    request_id, code = await held(session, service, canary, modern=FORM)
    args = {"request_id": request_id}
    first = await session.call("await_secret", args, modern=FORM)
    second = await session.call(
        "await_secret",
        args,
        modern=FORM,
        inputResponses={CODE_KEY: {"action": "accept", "content": {"code": wrong(code)}}},
        requestState=first["requestState"],
    )
    assert form_request(second)["message"].startswith("That code was wrong (4 tries left).")
    third = await session.call(
        "await_secret",
        args,
        modern=FORM,
        inputResponses={CODE_KEY: {"action": "decline"}},
        requestState=second["requestState"],
    )
    said = structured(third)
    assert (said["status"], said["tries_left"]) == ("confirm", 4)
    assert not (project / ".env").exists()


async def test_modern_answer_after_the_write_changes_nothing(
    remote: tuple[Session, Service], project: Path, canary: str
) -> None:
    """A one-use code: once the agent's confirm wrote the value, the form's late answer
    (wrong or right) finds the request written and changes nothing."""
    session, service = remote
    request_id, code = await held(session, service, canary, modern=FORM)
    args = {"request_id": request_id}
    first = await session.call("await_secret", args, modern=FORM)
    structured(await session.call("await_secret", {**args, "confirm": code}, modern=FORM))
    late = await session.call(
        "await_secret",
        args,
        modern=FORM,
        inputResponses={CODE_KEY: {"action": "accept", "content": {"code": wrong(code)}}},
        requestState=first["requestState"],
    )
    said = structured(late)
    assert said["status"] == "written"
    assert request_of(service, request_id).delivery.tries_left == 5


async def test_modern_without_form_gets_confirm(
    remote: tuple[Session, Service], canary: str
) -> None:
    """2026-07-28 declaring URL only: no input_required; `confirm` through the agent."""
    session, service = remote
    caps = {"elicitation": {"url": {}}}
    request_id, _ = await held(session, service, canary, modern=caps)
    said = structured(await session.call("await_secret", {"request_id": request_id}, modern=caps))
    assert said["status"] == "confirm"
    assert said["request_id"] == request_id
