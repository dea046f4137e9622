"""`also: [{kind: "keyring"}]` through collect_secret, against a real Secret Service (DESIGN
§13.2): saved under offprompt / NAME replacing every earlier item, shown on the page before the
write, reported by name and store, refused before any page when no real keyring can be used,
and the value nowhere else."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from keyring_service import SecretService

from offprompt import oskeyring

from .harness import (
    FakeOpener,
    Session,
    as_person,
    connect,
    load,
    refusal,
    settings,
    structured,
    visit,
)

TARGET = "Secret Service keyring"


@pytest.fixture
def opener() -> FakeOpener:
    return FakeOpener(visits=False)


@pytest.fixture
async def session(
    project: Path, tmp_path: Path, opener: FakeOpener, keyring_env: SecretService
) -> AsyncIterator[Session]:
    made = settings(tmp_path / "our-state", DBUS_SESSION_BUS_ADDRESS=keyring_env.address)
    client, service = await connect(project, made, opener)
    await client.initialize({})
    try:
        yield client
    finally:
        await client.close()
        await service.close()


def ask(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "secrets": [{"name": name}],
        "reason": "one key for many projects",
        "also": [{"kind": "keyring"}],
        **extra,
    }


async def page_of(opener: FakeOpener) -> tuple[str, str]:
    # Up to 20 s: the keyring is checked before the page opens, on a machine the suite loads.
    for _ in range(1000):
        if opener.opened:
            url = opener.opened[-1]
            return url, await load(url)
        await asyncio.sleep(0.02)
    raise AssertionError("no page was opened")


async def post(url: str, fields: dict[str, str]) -> tuple[int, str]:
    nonce = await visit(url)
    async with (
        aiohttp.ClientSession(headers=as_person(url)) as s,
        s.post(url, data={"nonce": nonce, **fields}) as reply,
    ):
        return reply.status, await reply.text()


def _files_but_env(tmp_path: Path, project: Path) -> list[str]:
    """Every file the test's folders hold (state, journal, names list, logs) but the .env."""
    return [
        p.read_text(errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and p != project / ".env"
    ]


async def test_saved_in_the_keyring_replacing_every_earlier_item(
    session: Session,
    opener: FakeOpener,
    project: Path,
    tmp_path: Path,
    keyring_env: SecretService,
    canary: str,
) -> None:
    """The value lands in .env and once in the keyring under offprompt / NAME (two earlier items,
    one saved by another program, are gone); the page named the store and the exact target
    before Write; the result says where; the value is nowhere else."""
    keyring_env.store("KR_SAVE", "earlier-one")
    keyring_env.store("KR_SAVE", "earlier-two", application="another-program")
    call = asyncio.ensure_future(session.call("collect_secret", ask("KR_SAVE")))
    url, form = await page_of(opener)
    status, written = await post(url, {"KR_SAVE": canary, "also.0": "1"})
    assert status == 200, written
    result = structured(await call)
    assert (project / ".env").read_text() == f"KR_SAVE={canary}\n"
    assert keyring_env.lookup("KR_SAVE") == canary
    assert keyring_env.count("KR_SAVE") == 1
    assert "Save in your keyring as" in form
    assert "offprompt / KR_SAVE" in form
    assert TARGET in form
    assert result["destinations"] == [
        {
            "kind": "keyring",
            "target": TARGET,
            "status": "sent",
            "detail": "saved offprompt / KR_SAVE",
        }
    ]
    assert result["fingerprint"]
    assert oskeyring.saved_names() == ("KR_SAVE",)
    everything_else = [json.dumps(result), form, written, *_files_but_env(tmp_path, project)]
    assert not [text for text in everything_else if canary in text]


async def test_unticked_the_keyring_is_left_alone(
    session: Session, opener: FakeOpener, project: Path, keyring_env: SecretService, canary: str
) -> None:
    """A post without `also.0` writes the file and leaves the keyring as it was."""
    call = asyncio.ensure_future(session.call("collect_secret", ask("KR_LEFT_ALONE")))
    url, _ = await page_of(opener)
    status, written = await post(url, {"KR_LEFT_ALONE": canary})
    assert status == 200, written
    result = structured(await call)
    assert keyring_env.lookup("KR_LEFT_ALONE") is None
    assert result["destinations"][0]["status"] == "skipped"


async def test_no_usable_keyring_is_refused_before_any_page(
    opener: FakeOpener, project: Path, tmp_path: Path
) -> None:
    """No Secret Service on the bus offprompt would use (the environment the request is made
    from names a bus nobody runs): refused, saying which, no page opened, nothing written."""
    made = settings(
        tmp_path / "our-state", DBUS_SESSION_BUS_ADDRESS=f"unix:path={project}/no-such-bus"
    )
    client, service = await connect(project, made, opener)
    try:
        await client.initialize({})
        why = refusal(await client.call("collect_secret", ask("KR_REFUSED")))
    finally:
        await client.close()
        await service.close()
    assert "keyring" in why
    assert "session bus" in why
    assert opener.opened == []
    assert not (project / ".env").exists()
