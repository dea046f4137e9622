"""DESIGN §17, the claim bound to its page: cookies are not kept apart by port, so a server on
another loopback port that the person's browser is sent to at `/r/<token>` receives the claim
cookie. Holding it is not enough: every POST also needs the nonce, which only the page that
claimed the request was given; a later GET with the cookie hands out none. And a prefetch, a
HEAD or the status route claims nothing and gets no form."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp.test_utils import TestClient

from offprompt.page.claim import COOKIE
from offprompt.spec import SecretSpec
from offprompt.store import RequestRecord, RequestStore

from .conftest import path_of
from .test_claim import has_field, remote_request
from .test_provider_check import OPENAI, openai_key, page, providers  # noqa: F401 (fixtures)

MakeRequest = Callable[..., RequestRecord]
JSON = {"Accept": "application/json"}
NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]*)"')


def nonces(html: str) -> list[str]:
    """Every nonce the page hands out in a hidden input."""
    return NONCE.findall(html)


@pytest.fixture
async def replayer(client: TestClient) -> AsyncIterator[aiohttp.ClientSession]:
    """The other loopback server's own HTTP client: no browser, it sends what it was sent."""
    async with aiohttp.ClientSession(
        base_url=str(client.make_url("/")), cookie_jar=aiohttp.DummyCookieJar()
    ) as session:
        yield session


def stolen(req: RequestRecord) -> dict[str, str]:
    """The Cookie header the person's browser sends to any port of 127.0.0.1 at `/r/<token>`."""
    assert req.delivery.browser is not None
    return {"Cookie": f"{COOKIE}={req.delivery.browser}"}


async def test_a_later_get_with_the_cookie_hands_out_no_nonce(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The claiming GET carries the nonce; a second GET by the same cookie (a reload, or a
    replay) gets the form with an empty nonce, a disabled button and the words to continue in
    the tab already open, and sets no cookie."""
    req = make_request()
    first = await client.get(path_of(req))
    assert nonces(await first.text()) == [req.nonce]
    again = await client.get(path_of(req))
    html = await again.text()
    assert (again.status, "Set-Cookie" in again.headers) == (200, False)
    assert has_field(html, "API_KEY")
    assert nonces(html) == [""]
    assert req.nonce not in html
    assert 'id="reopened"' in html
    assert re.search(r'<button type="submit" id="submit"[^>]* disabled', html)


async def test_a_replayed_cookie_posts_nothing(
    client: TestClient, replayer: aiohttp.ClientSession, make_request: MakeRequest, project: Path
) -> None:
    """The cookie alone, replayed from another server with the nonce its own GET found: the
    submit, a claim and a post without any nonce are all 403, and nothing changes."""
    req = make_request()
    await client.get(path_of(req))
    nonce, cookie = req.nonce, stolen(req)
    async with replayer.get(path_of(req), headers=cookie) as reply:
        found = nonces(await reply.text())
    assert found == [""]
    for fields in ({"nonce": found[0], "API_KEY": "theirs"}, {"API_KEY": "theirs"}):
        async with replayer.post(path_of(req), data=fields, headers={**cookie, **JSON}) as reply:
            assert reply.status == 403
    async with replayer.post(f"{path_of(req)}/claim", data={"nonce": ""}, headers=cookie) as r:
        assert r.status == 403
    assert (req.status, req.nonce, (project / ".env").exists()) == ("awaiting", nonce, False)


async def test_a_replayed_cookie_cannot_write_anyway(
    providers: Any,  # noqa: F811 (the fixture imported above)
    page: Any,  # noqa: F811
    canary: str,
) -> None:
    """After a 409 the held values wait for "Write anyway": the cookie replayed with whatever
    nonce a GET gives it is 403, the held submit and the fresh nonce stay, and the person's own
    "Write anyway" writes their value."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    refused = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    fresh = (await refused.json())["nonce"]
    cookie = stolen(req)
    async with aiohttp.ClientSession(
        base_url=str(p.client.make_url("/")), cookie_jar=aiohttp.DummyCookieJar()
    ) as other:
        async with other.get(f"/r/{req.token}", headers=cookie) as reply:
            html = await reply.text()
        assert fresh not in html
        assert nonces(html) == [""]
        for nonce in ("", None):
            fields = {"anyway": "1", "check": "1", "allow_tracked": "1"}
            if nonce is not None:
                fields["nonce"] = nonce
            async with other.post(
                f"/r/{req.token}", data=fields, headers={**cookie, **JSON}
            ) as reply:
                assert reply.status == 403
    assert (req.status, req.delivery.held is not None, req.nonce) == ("awaiting", True, fresh)
    assert not (p.project / ".env").exists()
    resp = await p.post(req, {"anyway": "1"})
    assert resp.status == 200
    assert p.env() == {"OPENAI_API_KEY": openai_key(canary)}


async def test_a_remote_page_hands_out_no_nonce_once_claimed(
    client: TestClient, replayer: aiohttp.ClientSession, store: RequestStore, project: Path
) -> None:
    """Before its claim a remote page is served with its nonce (its script claims with it);
    after the claim a GET with the cookie gets none, and a replayed claim without it is 403."""
    req, _ = remote_request(store, project)
    before = await client.get(path_of(req))
    assert nonces(await before.text()) == [req.nonce]
    claimed = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
    assert claimed.status == 204
    async with replayer.get(path_of(req), headers=stolen(req)) as reply:
        html = await reply.text()
    assert nonces(html) == [""]
    assert req.nonce not in html
    async with replayer.post(
        f"{path_of(req)}/claim", data={"nonce": ""}, headers=stolen(req)
    ) as reply:
        assert reply.status == 403
    # The person's own page, which kept its nonce, claims again as a reload does.
    again = await client.post(f"{path_of(req)}/claim", data={"nonce": req.nonce})
    assert again.status == 204


@pytest.mark.parametrize(
    "headers",
    [
        {"Sec-Purpose": "prefetch"},
        {"Sec-Purpose": "prefetch;prerender"},
        {"Sec-Purpose": "prefetch; anonymous-client-ip"},
        {"Purpose": "prefetch"},
        {"X-Purpose": "preview"},
        {"X-Moz": "prefetch"},
    ],
)
async def test_a_prefetch_claims_nothing_and_gets_no_form(
    client: TestClient, make_request: MakeRequest, headers: dict[str, str]
) -> None:
    """A browser's prefetch is not the person opening the page: no cookie, no form, no nonce,
    and not a 2xx (so a browser never shows it for the navigation); the person's own GET after
    it claims the request and gets the form."""
    req = make_request()
    reply = await client.get(path_of(req), headers=headers)
    html = await reply.text()
    assert reply.status == 503
    assert "Set-Cookie" not in reply.headers
    assert reply.headers["Cache-Control"] == "no-store"
    assert not has_field(html, "API_KEY")
    assert nonces(html) == []
    assert req.nonce not in html
    assert (req.delivery.browser, req.delivery.page_opened) == (None, False)
    mine = await client.get(path_of(req))
    assert "Set-Cookie" in mine.headers
    assert nonces(await mine.text()) == [req.nonce]


async def test_a_head_and_the_status_route_claim_nothing_and_hand_out_no_nonce(
    client: TestClient, make_request: MakeRequest
) -> None:
    """HEAD answers without a cookie; the status route neither; the first GET still claims."""
    req = make_request()
    head = await client.head(path_of(req))
    assert (head.status, "Set-Cookie" in head.headers) == (200, False)
    status = await client.get(f"{path_of(req)}/status")
    assert (status.status, "Set-Cookie" in status.headers) == (200, False)
    assert req.nonce not in await status.text()
    assert (req.delivery.browser, req.delivery.page_opened) == (None, False)
    mine = await client.get(path_of(req))
    assert "Set-Cookie" in mine.headers


async def test_the_first_post_after_a_claim_keeps_working_as_the_contract_says(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """An outside client that GETs the page, reads the hidden nonce and keeps the cookie, posts
    its fields and is written (DESIGN §6, §17): the contract's path is unchanged."""
    req = make_request(SecretSpec("API_KEY"))
    served = await client.get(path_of(req))
    nonce = nonces(await served.text())[0]
    reply = await client.post(path_of(req), data={"nonce": nonce, "API_KEY": canary})
    assert reply.status == 200
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
