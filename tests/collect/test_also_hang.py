"""A deploy program that hangs (DESIGN §13): the destination as a whole is stopped at its limit,
the ones after it still run, and the page and the MCP tools answer while it hangs (the send
runs off the event loop)."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from fake_programs import FakePrograms, link_all

from offprompt.sinks.destinations import runner

from .harness import FakeOpener, Session, connect, settings, structured
from .test_also import page_of, post

LIMIT = 3.0


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


@pytest.fixture
async def session(
    project: Path, tmp_path: Path, fakes: FakePrograms
) -> AsyncIterator[tuple[Session, FakeOpener]]:
    opener = FakeOpener(visits=False)
    made = settings(tmp_path / "our-state", PATH=str(fakes.bin), HOME=os.environ["HOME"])
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client, opener
    finally:
        await client.close()
        await service.close()


async def _timed_get(url: str) -> float:
    start = time.monotonic()
    async with aiohttp.ClientSession() as s, s.get(url) as reply:
        await reply.read()
    return time.monotonic() - start


async def test_a_hanging_program_holds_neither_the_page_nor_the_tools(
    session: tuple[Session, FakeOpener],
    project: Path,
    fakes: FakePrograms,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    client, opener = session
    monkeypatch.setattr(runner, "TIMEOUT_SECONDS", LIMIT)
    link_all(project)
    fakes.fail("vercel", 0, "never printed", sleep=30)
    args: dict[str, Any] = {
        "secrets": [{"name": "STRIPE_KEY"}],
        "reason": "deploys",
        "also": [{"kind": "vercel", "environments": ["production", "preview"]}, {"kind": "fly"}],
    }
    call = asyncio.ensure_future(client.call("collect_secret", args))
    url, _ = await page_of(opener)
    start = time.monotonic()
    submit = asyncio.ensure_future(post(url, {"STRIPE_KEY": canary, "also.0": "1", "also.1": "1"}))
    for _ in range(500):  # until vercel is running (it records its call, then hangs)
        if fakes.calls():
            break
        await asyncio.sleep(0.01)
    assert [c.name for c in fakes.calls()] == ["vercel"]

    listed = time.monotonic()
    tools = await client.request("tools/list", {})
    assert time.monotonic() - listed < 1
    assert "result" in tools
    assert await _timed_get(url) < 1
    assert not submit.done()

    status, written = await submit
    elapsed = time.monotonic() - start
    result = structured(await call)
    assert status == 200
    assert elapsed < LIMIT + 2 + 2  # the kill's grace and fly's own run
    vercel, fly = result["destinations"]
    assert vercel["status"] == "failed"
    assert "stopped after 3 s" in vercel["detail"]
    assert "limit was used up" in vercel["detail"]
    assert fly["status"] == "sent"
    assert [c.name for c in fakes.calls()] == ["vercel", "fly"]
    assert canary not in written + str(result)
