"""A sealed POST carries the ticked `also` indices inside its plaintext (DESIGN §5, §13); from the
browser that claimed the request, held for its confirmation code, and the ticked destinations
run only when the code comes back (DESIGN §17)."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from fake_programs import FakePrograms, link_all
from pytest_aiohttp import AiohttpClient

from offprompt.crypto.seal import SealKey, plaintext, seal
from offprompt.page.server import create_app
from offprompt.sinks import destinations
from offprompt.sinks.destinations.fly import FlySpec
from offprompt.sinks.destinations.github import GithubSpec
from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

Client = TestClient[aiohttp.web.Request, aiohttp.web.Application]
JSON = {"Accept": "application/json"}
SPECS = (GithubSpec(), FlySpec())


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
def submitter(store: RequestStore, fakes: FakePrograms, tmp_path: Path) -> Submitter:
    return Submitter(store, Journal(tmp_path / "state" / "j.jsonl"), env=fakes.env())


@pytest.fixture
async def client(
    aiohttp_client: AiohttpClient, store: RequestStore, submitter: Submitter
) -> Client:
    return await aiohttp_client(create_app(store, submitter))


def remote(store: RequestStore, project: Path, fakes: FakePrograms) -> RequestRecord:
    link_all(project)
    planned = destinations.plan(project, SPECS, ["API_KEY"], env=fakes.env())
    req = store.create(
        [SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=1800, remote=True, also=planned
    )
    req.delivery.seal_key = SealKey()
    return req


async def claim(client: Client, req: RequestRecord) -> None:
    """What the remote page's script does once loaded: claim the request for this browser."""
    reply = await client.post(f"/r/{req.token}/claim", data={"nonce": req.nonce})
    assert reply.status == 204, await reply.text()


async def post_sealed(
    client: Client, store: RequestStore, submitter: Submitter, req: RequestRecord, clear: bytes
) -> WriteOutcome:
    """Claim, post `clear` sealed (held: nothing run yet), then the code back: the write."""
    key = req.delivery.seal_key
    assert key is not None
    await claim(client, req)
    box = seal(key.public_point, clear, token=req.token, nonce=req.nonce)
    reply = await client.post(
        f"/r/{req.token}", data={"nonce": req.nonce, "sealed": box}, headers=JSON
    )
    assert reply.status == 200, await reply.text()
    data = await reply.json()
    assert data["status"] == "confirm"
    assert not (req.project / ".env").exists()
    assert store.try_code(req, data["confirm_code"]) == "right"
    prepared = store.take_pending(req)
    assert prepared is not None
    return await submitter.commit(req, prepared)


async def test_sealed_also_runs_only_the_ticked_indices(
    client: Client,
    store: RequestStore,
    submitter: Submitter,
    project: Path,
    fakes: FakePrograms,
    canary: str,
) -> None:
    """`"also": [1]` inside the seal: nothing runs while held; once confirmed fly runs, github
    is skipped as unticked."""
    req = remote(store, project, fakes)
    clear = plaintext({"API_KEY": canary}, also=[1])
    outcome = await post_sealed(client, store, submitter, req, clear)
    assert [d.status for d in outcome.destinations] == ["skipped", "sent"]
    assert [(c.name, c.stdin) for c in fakes.calls()] == [("fly", f"API_KEY={canary}\n")]
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"


async def test_a_seal_without_also_sends_only_to_the_file(
    client: Client,
    store: RequestStore,
    submitter: Submitter,
    project: Path,
    fakes: FakePrograms,
    canary: str,
) -> None:
    """No `also` in the seal: the confirmed write goes to the file and runs no program."""
    req = remote(store, project, fakes)
    outcome = await post_sealed(client, store, submitter, req, plaintext({"API_KEY": canary}))
    assert [d.status for d in outcome.destinations] == ["skipped", "skipped"]
    assert fakes.calls() == []
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"


async def test_also_boxes_beside_a_seal_are_refused(
    client: Client, store: RequestStore, project: Path, fakes: FakePrograms, canary: str
) -> None:
    """Ticks must travel inside the seal too: a plain `also.0` beside it, from the browser
    that claimed the request, is a 400; nothing held."""
    req = remote(store, project, fakes)
    key = req.delivery.seal_key
    assert key is not None
    await claim(client, req)
    box = seal(key.public_point, plaintext({"API_KEY": canary}), token=req.token, nonce=req.nonce)
    reply = await client.post(
        f"/r/{req.token}",
        data={"nonce": req.nonce, "sealed": box, "also.0": "1"},
        headers=JSON,
    )
    assert (reply.status, req.delivery.pending) == (400, None)
    assert fakes.calls() == []


@pytest.mark.parametrize("also", [["0"], [True], [-1], [64], "0", [0.0]])
async def test_a_malformed_also_in_the_seal_does_not_open(
    client: Client, store: RequestStore, project: Path, fakes: FakePrograms, also: object
) -> None:
    """Anything but a list of small indices is refused like any seal that does not open, from
    the browser that claimed the request."""
    import json

    req = remote(store, project, fakes)
    key = req.delivery.seal_key
    assert key is not None
    clear = json.dumps({"values": {"API_KEY": "x"}, "allow_tracked": False, "also": also})
    await claim(client, req)
    box = seal(key.public_point, clear.encode(), token=req.token, nonce=req.nonce)
    reply = await client.post(
        f"/r/{req.token}", data={"nonce": req.nonce, "sealed": box}, headers=JSON
    )
    assert reply.status == 403
    assert fakes.calls() == []
