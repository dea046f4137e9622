"""The ladder (DESIGN §4) through the real server and collect core, in-process: each case is
one tools/call (or two) over the transport seam, a fake opener, the real page server."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from .harness import URL_CAPS, FakeOpener, Session, structured, submit

ARGS = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


async def until(condition: Any, seconds: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def person_on_opened_page(opener: FakeOpener, value: str) -> None:
    await until(lambda: opener.opened)
    assert await submit(opener.opened[0], {"API_KEY": value}) == 200


def answering(action: str | None, then: Any = None) -> Any:
    """An answerer for elicitation/create: `action`, or never (None); `then(url)` runs first."""

    started: list[asyncio.Task[None]] = []

    async def answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
        assert method == "elicitation/create"
        if then is not None:
            started.append(asyncio.ensure_future(then(params["url"])))
        return None if action is None else {"action": action}

    return answer


async def written(session: Session, project: Path, canary: str, call: Any) -> dict[str, Any]:
    out = structured(await call)
    assert (out["status"], dotenv_values(project / ".env")) == ("written", {"API_KEY": canary})
    return out


# -- 2025-11-25 -------------------------------------------------------------------------------


async def test_legacy_accept_lets_the_host_open_the_page(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """accept: the host opens the page, offprompt opens no tab, and the dialog hears of the
    write (notifications/elicitation/complete)."""
    await session.initialize(URL_CAPS)

    async def person(url: str) -> None:
        await asyncio.sleep(0.05)
        assert await submit(url, {"API_KEY": canary}) == 200

    session.answerer = answering("accept", person)
    out = await written(session, project, canary, session.call("collect_secret", ARGS))
    assert opener.opened == []
    assert ("notifications/elicitation/complete", {"elicitationId": out["request_id"]}) in (
        session.notes
    )


async def test_legacy_timeout_opens_one_tab_and_completes_the_dialog(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """No answer within OFFPROMPT_ELICIT_WAIT_MS: our browser, once; the dialog that may still
    be showing hears of the write."""
    await session.initialize(URL_CAPS)
    session.answerer = answering(None)
    call = asyncio.ensure_future(session.call("collect_secret", ARGS))
    await person_on_opened_page(opener, canary)
    out = await written(session, project, canary, call)
    assert len(opener.opened) == 1
    assert ("notifications/elicitation/complete", {"elicitationId": out["request_id"]}) in (
        session.notes
    )


async def test_legacy_decline_opens_no_tab_and_hands_out_the_link(
    session: Session, opener: FakeOpener
) -> None:
    """decline (DESIGN §4.1): awaiting with the url and a note to ask the person; no tab."""
    await session.initialize(URL_CAPS)
    session.answerer = answering("decline")
    out = structured(await session.call("collect_secret", ARGS))
    assert (out["status"], out["url"].startswith("http://127.0.0.1:")) == ("awaiting", True)
    assert "declined" in out["note"]
    assert opener.opened == []


async def test_legacy_cancel_opens_the_browser_once(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """cancel (the dialog was dismissed): step 2, one tab."""
    await session.initialize(URL_CAPS)
    session.answerer = answering("cancel")
    call = asyncio.ensure_future(session.call("collect_secret", ARGS))
    await person_on_opened_page(opener, canary)
    await written(session, project, canary, call)
    assert len(opener.opened) == 1


async def test_codex_gets_no_dialog_for_a_local_page_and_one_tab(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """Codex declines http links unseen: no elicitation/create, straight to one tab."""
    await session.initialize(URL_CAPS, name="codex-mcp-client")
    call = asyncio.ensure_future(session.call("collect_secret", ARGS))
    await person_on_opened_page(opener, canary)
    await written(session, project, canary, call)
    assert (session.asked, len(opener.opened)) == ([], 1)


async def test_failing_browser_hands_out_the_link(project: Path, state: Path) -> None:
    """Step 3: the opener fails, so the result carries the link."""
    from .harness import connect, settings

    opener = FakeOpener(opens=False)
    session, service = await connect(project, settings(state), opener)
    try:
        await session.initialize({})
        out = structured(await session.call("collect_secret", ARGS))
    finally:
        await session.close()
        await service.close()
    assert (out["status"], out["url"] == opener.opened[0]) == ("awaiting", True)


# -- 2026-07-28 -------------------------------------------------------------------------------


async def ask(session: Session) -> str:
    first = await session.call("collect_secret", ARGS, modern=URL_CAPS)
    assert first["resultType"] == "input_required"
    request = first["inputRequests"]["offprompt_page"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["url"].startswith("http://127.0.0.1:")
    state = first["requestState"]
    assert isinstance(state, str)
    return state


def retry(session: Session, state: str, action: str) -> Any:
    return session.call(
        "collect_secret",
        ARGS,
        modern=URL_CAPS,
        requestState=state,
        inputResponses={"offprompt_page": {"action": action}},
    )


async def test_modern_accept_before_a_visit_opens_one_tab(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """input_required first (no tab while the dialog may be up); the accepting retry opens one
    tab and blocks until written."""
    state = await ask(session)
    assert opener.opened == []
    call = asyncio.ensure_future(retry(session, state, "accept"))
    await person_on_opened_page(opener, canary)
    await written(session, project, canary, call)
    assert len(opener.opened) == 1


async def test_modern_cancel_opens_the_browser_once(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """cancel (Esc; `claude -p`): step 2, one tab."""
    state = await ask(session)
    call = asyncio.ensure_future(retry(session, state, "cancel"))
    await person_on_opened_page(opener, canary)
    await written(session, project, canary, call)
    assert len(opener.opened) == 1


async def test_modern_decline_opens_no_tab(session: Session, opener: FakeOpener) -> None:
    """decline: awaiting with the url; no tab, then or after the dialog wait."""
    state = await ask(session)
    out = structured(await retry(session, state, "decline"))
    assert (out["status"], "url" in out, "declined" in out["note"]) == ("awaiting", True, True)
    await asyncio.sleep(0.5)  # past OFFPROMPT_DIALOG_WAIT_MS
    assert opener.opened == []


async def test_modern_no_retry_opens_one_tab_and_a_late_accept_opens_none(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """No retry and no visit within OFFPROMPT_DIALOG_WAIT_MS: one tab; the late retry finds
    the page open and only waits."""
    state = await ask(session)
    await until(lambda: opener.opened)
    call = asyncio.ensure_future(retry(session, state, "accept"))
    assert await submit(opener.opened[0], {"API_KEY": canary}) == 200
    await written(session, project, canary, call)
    assert len(opener.opened) == 1


# -- what every write leaves ------------------------------------------------------------------


async def test_the_journal_is_the_one_the_settings_name(
    session: Session, opener: FakeOpener, project: Path, state: Path, canary: str
) -> None:
    """The entry goes where the injected settings say, not where the process environment says:
    no test needs to set the process environment."""
    await session.initialize({})
    call = asyncio.ensure_future(session.call("collect_secret", ARGS))
    await person_on_opened_page(opener, canary)
    out = await written(session, project, canary, call)
    (line,) = (state / "journal.jsonl").read_text().splitlines()
    entry = json.loads(line)
    assert (entry["request_id"], entry["names"], entry["client"]) == (
        out["request_id"],
        ["API_KEY"],
        "ladder-test",
    )
    assert canary not in line
    assert not (Path(os.environ["OFFPROMPT_STATE_DIR"]) / "journal.jsonl").exists()
