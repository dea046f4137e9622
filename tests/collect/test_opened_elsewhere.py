"""DESIGN §17 through the real tools: a second browser that opens the page is refused and the
agent's results say `opened_elsewhere`, so the person hears it in the agent too; the person's
own browser still writes."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
from dotenv import dotenv_values

from .harness import FakeOpener, Session, structured, submit, visit


async def opened(opener: FakeOpener) -> str:
    for _ in range(500):
        if opener.opened:
            return opener.opened[0]
        await asyncio.sleep(0.01)
    raise AssertionError("no page was opened")


async def test_a_second_browser_is_said_in_the_result_and_the_person_still_writes(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """collect_secret opens the person's tab; a stranger's GET gets "another browser" and its
    POST 403; await_secret says `opened_elsewhere: true`; the person's submit then writes, and
    the written result says it too."""
    await session.initialize({})
    call = asyncio.ensure_future(
        session.call("collect_secret", {"secrets": [{"name": "API_KEY"}], "reason": "Needed."})
    )
    url = await opened(opener)
    nonce = await visit(url)  # the person's tab (the opener's own visit holds it already)
    async with aiohttp.ClientSession() as stranger:
        async with stranger.get(url) as reply:
            assert "another browser" in await reply.text()
        theirs = {"nonce": nonce, "API_KEY": canary + "-theirs"}
        async with stranger.post(url, data=theirs) as reply:
            assert reply.status == 403
    assert not (project / ".env").exists()
    assert await submit(url, {"API_KEY": canary}) == 200
    out = structured(await call)
    assert (out["status"], out.get("opened_elsewhere")) == ("written", True)
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert canary not in str(out)


async def test_no_second_browser_no_opened_elsewhere(
    session: Session, opener: FakeOpener, project: Path, canary: str
) -> None:
    """The field is there only after a second browser came: a plain write has none."""
    await session.initialize({})
    call = asyncio.ensure_future(
        session.call("collect_secret", {"secrets": [{"name": "API_KEY"}], "reason": "Needed."})
    )
    url = await opened(opener)
    assert await submit(url, {"API_KEY": canary}) == 200
    out = structured(await call)
    assert out["status"] == "written"
    assert "opened_elsewhere" not in out
