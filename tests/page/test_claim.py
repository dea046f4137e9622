"""DESIGN §17, the claim: the first browser to open a request's page holds it by a cookie bound
to that request, and every POST must carry that cookie; a second browser gets a page without a
form, posts nothing, and the request says it was opened elsewhere."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from dotenv import dotenv_values

from offprompt.crypto.seal import SealKey, plaintext, seal
from offprompt.page import PageSettings
from offprompt.page.claim import COOKIE
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore

from .conftest import claim, path_of

MakeRequest = Callable[..., RequestRecord]
JSON = {"Accept": "application/json"}
TUNNEL = "quiet-otter-fern.trycloudflare.com"


@pytest.fixture
async def stranger(client: TestClient) -> AsyncIterator[aiohttp.ClientSession]:
    """A second browser: the same server, its own cookie jar (a browser's, which keeps
    loopback cookies)."""
    async with aiohttp.ClientSession(
        base_url=str(client.make_url("/")), cookie_jar=aiohttp.CookieJar(unsafe=True)
    ) as session:
        yield session


def remote_request(store: RequestStore, project: Path) -> tuple[RequestRecord, SealKey]:
    req = store.create(
        [SecretSpec("API_KEY")], SinkSpec(), project, "Needed", ttl=1800, remote=True
    )
    req.delivery.seal_key = key = SealKey()
    return req, key


def has_field(html: str, name: str) -> bool:
    return re.search(rf'<(textarea|input)[^>]*name="{name}"', html) is not None


async def test_a_local_page_is_claimed_by_its_first_get_with_a_bound_cookie(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The cookie: 128 random bits, this request's path only, HttpOnly, SameSite=Strict, and not
    Secure on plain-http loopback."""
    req = make_request()
    reply = await client.get(path_of(req))
    assert reply.status == 200
    header = reply.headers.getall("Set-Cookie")
    assert len(header) == 1
    parts = [p.strip() for p in header[0].split(";")]
    name, _, value = parts[0].partition("=")
    assert (name, value) == (COOKIE, req.delivery.browser)
    assert len(value) >= 22  # 16 bytes of base64url
    assert set(parts[1:]) == {f"Path=/r/{req.token}", "HttpOnly", "SameSite=Strict"}
    again = await client.get(path_of(req))
    assert (again.status, "Set-Cookie" in again.headers) == (200, False)
    assert has_field(await again.text(), "API_KEY")


async def test_a_second_browser_sees_the_names_and_no_form(
    client: TestClient, stranger: aiohttp.ClientSession, make_request: MakeRequest
) -> None:
    """The page a second browser gets: the key names, "another browser", no input for any key,
    no nonce; the request records that it was opened elsewhere."""
    req = make_request(SecretSpec("API_KEY"), SecretSpec("DB_URL"))
    await claim(client, req)
    async with stranger.get(path_of(req)) as reply:
        html = await reply.text()
        assert reply.status == 200
        assert "Set-Cookie" not in reply.headers
    assert "another browser" in html
    assert not has_field(html, "API_KEY")
    assert not has_field(html, "DB_URL")
    assert 'name="nonce"' not in html
    assert req.nonce not in html
    assert '<li class="key">API_KEY</li>' in html
    assert '<li class="key">DB_URL</li>' in html
    assert req.delivery.opened_elsewhere


async def test_a_second_browser_cannot_submit_and_the_person_still_can(
    client: TestClient,
    stranger: aiohttp.ClientSession,
    make_request: MakeRequest,
    project: Path,
    canary: str,
) -> None:
    """403 for the stranger's post, even with the right nonce; nothing written, the request
    open, and the person's own post afterwards writes their value."""
    req = make_request()
    await claim(client, req)
    theirs = canary + "-stranger"
    async with stranger.post(
        path_of(req), data={"nonce": req.nonce, "API_KEY": theirs}, headers=JSON
    ) as reply:
        assert reply.status == 403
        assert "another browser" in (await reply.json())["error"]
    assert (req.status, (project / ".env").exists()) == ("awaiting", False)
    assert req.delivery.opened_elsewhere
    mine = await client.post(path_of(req), data={"nonce": req.nonce, "API_KEY": canary})
    assert mine.status == 200
    assert dotenv_values(project / ".env") == {"API_KEY": canary}


async def test_a_post_before_any_browser_claimed_it_is_refused(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """Every POST needs the claim: a post to a request nobody opened (the nonce taken from
    elsewhere) is 403 and writes nothing."""
    req = make_request()
    reply = await client.post(path_of(req), data={"nonce": req.nonce, "API_KEY": canary})
    assert reply.status == 403
    assert (req.status, (project / ".env").exists(), req.delivery.browser) == (
        "awaiting",
        False,
        None,
    )


async def test_a_head_request_claims_nothing(client: TestClient, make_request: MakeRequest) -> None:
    """Only a GET means a browser has the page: a HEAD gets no cookie."""
    req = make_request()
    reply = await client.head(path_of(req))
    assert (reply.status, "Set-Cookie" in reply.headers, req.delivery.browser) == (
        200,
        False,
        None,
    )


async def test_a_remote_page_is_not_claimed_by_a_get_so_a_previewer_claims_nothing(
    client: TestClient,
    stranger: aiohttp.ClientSession,
    store: RequestStore,
    project: Path,
    canary: str,
) -> None:
    """A link previewer fetches the page without running script: no cookie, the form each
    time. The person's page script then claims it (204 with the cookie), and the previewer's
    next fetch is the second browser's page."""
    req, key = remote_request(store, project)
    for _ in range(2):
        async with stranger.get(path_of(req)) as reply:
            assert (reply.status, "Set-Cookie" in reply.headers) == (200, False)
            assert has_field(await reply.text(), "API_KEY")
    assert req.delivery.browser is None
    claimed = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
    assert claimed.status == 204
    assert f"Path=/r/{req.token}" in claimed.headers["Set-Cookie"]
    async with stranger.get(path_of(req)) as reply:
        assert "another browser" in await reply.text()
    box = seal(key.public_point, plaintext({"API_KEY": canary}), token=req.token, nonce=req.nonce)
    async with stranger.post(
        path_of(req), data={"nonce": req.nonce, "sealed": box}, headers=JSON
    ) as reply:
        assert reply.status == 403
    assert req.status == "awaiting"
    assert not (project / ".env").exists()


async def test_a_second_claim_is_refused_and_the_first_claim_stands(
    client: TestClient, stranger: aiohttp.ClientSession, store: RequestStore, project: Path
) -> None:
    """403 for a second browser's claim; the first browser may claim again (a reload)."""
    req, _ = remote_request(store, project)
    await claim(client, req)
    held = req.delivery.browser
    async with stranger.post(f"{path_of(req)}/claim", data={"nonce": req.nonce}) as reply:
        assert reply.status == 403
    again = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
    assert again.status == 204
    assert (req.delivery.browser, req.delivery.opened_elsewhere) == (held, True)


async def test_a_claim_needs_the_pages_nonce(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """A claim without the page's nonce is refused and claims nothing."""
    req, _ = remote_request(store, project)
    reply = await client.post(f"{path_of(req)}/claim", data={"nonce": "not-the-nonce"})
    assert (reply.status, req.delivery.browser) == (403, None)


async def test_a_claim_through_the_tunnel_is_secure(
    client: TestClient, settings: PageSettings, store: RequestStore, project: Path
) -> None:
    """Behind the tunnel (https) the cookie is Secure too."""
    settings.tunnel_host = TUNNEL
    req, _ = remote_request(store, project)
    reply = await client.post(
        f"{path_of(req)}/claim", data={"nonce": req.nonce}, headers={"Host": TUNNEL}
    )
    assert reply.status == 204
    assert "Secure" in [p.strip() for p in reply.headers["Set-Cookie"].split(";")]


async def test_a_closed_request_is_gone_for_the_claim_too(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """Cancelled: the claim route answers 410 like the page."""
    req, _ = remote_request(store, project)
    store.cancel(req)
    reply = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
    assert reply.status == 410


async def test_no_log_line_holds_the_claim_cookie(
    client: TestClient,
    stranger: aiohttp.ClientSession,
    make_request: MakeRequest,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The cookie is a credential: never logged, whoever sends it."""
    caplog.set_level(logging.DEBUG)
    req = make_request()
    await claim(client, req)
    cookie = req.delivery.browser
    assert cookie is not None
    async with stranger.post(path_of(req), data={"nonce": req.nonce, "API_KEY": canary}):
        pass
    await client.post(path_of(req), data={"nonce": req.nonce, "API_KEY": canary})
    assert cookie not in caplog.text
    assert canary not in caplog.text
    assert "second browser" in caplog.text


async def test_of_two_browsers_loading_at_once_exactly_one_holds_the_request(
    client: TestClient, stranger: aiohttp.ClientSession, make_request: MakeRequest
) -> None:
    """Two first GETs at the same moment (the page's render awaits the disk): one gets the form
    and the cookie, the other the second browser's page; neither a 500."""
    req = make_request()

    async def load(session: aiohttp.ClientSession) -> tuple[int, bool, bool]:
        async with session.get(str(client.make_url(path_of(req)))) as reply:
            html = await reply.text()
            return reply.status, "Set-Cookie" in reply.headers, has_field(html, "API_KEY")

    first, second = await asyncio.gather(load(client.session), load(stranger))
    assert (first[0], second[0]) == (200, 200)
    assert sorted([first[1:], second[1:]]) == [(False, False), (True, True)]
