"""collect_secret asked again while a request for the same keys is open, with `also`: the same
destinations get the open request back; other destinations for those keys are refused, since
both pages would write the keys to the same file (DESIGN §13)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from fake_programs import FakePrograms, link_all

from .harness import FakeOpener, Session, connect, refusal, settings, structured


@pytest.fixture
async def session(project: Path, tmp_path: Path) -> AsyncIterator[tuple[Session, FakeOpener]]:
    fakes = FakePrograms(tmp_path / "fakes")
    link_all(project)
    opener = FakeOpener(visits=False)
    made = settings(tmp_path / "our-state", PATH=str(fakes.bin), HOME=os.environ["HOME"])
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client, opener
    finally:
        await client.close()
        await service.close()


def ask(*also: dict[str, Any]) -> dict[str, Any]:
    return {"secrets": [{"name": "STRIPE_KEY"}], "reason": "deploys", "also": list(also)}


async def test_the_same_destinations_again_get_the_open_request(
    session: tuple[Session, FakeOpener],
) -> None:
    """The same keys and `also` (in another order) again: the open request, no second page."""
    client, opener = session
    github, fly = {"kind": "github"}, {"kind": "fly"}
    first = asyncio.ensure_future(client.call("collect_secret", ask(github, fly)))
    for _ in range(200):
        if opener.opened:
            break
        await asyncio.sleep(0.02)
    again = structured(await client.call("collect_secret", ask(fly, github)))
    other = refusal(await client.call("collect_secret", ask(github)))
    first.cancel()
    assert again["status"] == "awaiting"
    assert "no second page was opened" in again["note"]
    assert other.startswith(
        f"STRIPE_KEY is already being collected by request {again['request_id']}"
    )
    assert len(opener.opened) == 1
