"""Page-server fixtures: a real store, submitter and sinks behind pytest-aiohttp's client."""

import re
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from aiohttp.web import Application

from offprompt.page import PageSettings
from offprompt.page.server import create_app
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

AiohttpClient = Callable[[Application], Awaitable[TestClient]]


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> RequestStore:
    return RequestStore(clock=clock)


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    return Journal(tmp_path / "state" / "journal.jsonl")


@pytest.fixture
def settings() -> PageSettings:
    return PageSettings()


@pytest.fixture
async def client(
    aiohttp_client: AiohttpClient, store: RequestStore, journal: Journal, settings: PageSettings
) -> TestClient:
    return await aiohttp_client(create_app(store, Submitter(store, journal), settings=settings))


@pytest.fixture
def make_request(store: RequestStore, project: Path) -> Callable[..., RequestRecord]:
    def make(
        *secrets: SecretSpec, sink: SinkSpec | None = None, reason: str = "Needed"
    ) -> RequestRecord:
        return store.create(
            secrets or (SecretSpec("API_KEY"),),
            sink or SinkSpec(),
            project,
            reason,
            ttl=300,
            client="Test Agent",
        )

    return make


def path_of(request: RequestRecord) -> str:
    return f"/r/{request.token}"


def csp_nonce(csp: str) -> str:
    match = re.search(r"script-src 'nonce-([^']+)'", csp)
    assert match is not None
    return match.group(1)


async def claim(client: TestClient, req: RequestRecord) -> None:
    """Open the page in `client` as the person's browser does before it posts, so it holds the
    request (DESIGN §17): a local page by its GET, a remote one by its script's claim."""
    if req.delivery.browser is not None or req.status != "awaiting":
        return
    if req.remote:
        reply = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
        assert reply.status == 204, await reply.text()
    else:
        reply = await client.get(path_of(req))
        assert reply.status == 200, await reply.text()
    assert req.delivery.browser is not None
