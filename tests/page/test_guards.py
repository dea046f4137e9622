"""DESIGN §6 steps 1-3: Host, Sec-Fetch-Site/Origin, token, path and query, closed requests."""

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.page import PageSettings
from offprompt.store import RequestRecord, RequestStore

from .conftest import FakeClock, path_of

MakeRequest = Callable[..., RequestRecord]


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1.evil.example",
        "[::1]",
        "[::1]:8080",
        "localhost.evil",
        "evil.example",
        "127.0.0.2",
        "localhost.",
        "0.0.0.0",  # noqa: S104 - a Host header, not a bind address
        "127.0.0.1:80@evil.example",
        "",
    ],
)
async def test_foreign_host_is_misdirected(
    client: TestClient, make_request: MakeRequest, host: str
) -> None:
    """A Host other than 127.0.0.1/localhost (DNS rebinding, IPv6 loopback) gets 421."""
    resp = await client.get(path_of(make_request()), headers={"Host": host})
    assert resp.status == 421


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.0.0.1:1", "LOCALHOST:65535"])
async def test_loopback_host_on_any_port_is_served(
    client: TestClient, make_request: MakeRequest, host: str
) -> None:
    """127.0.0.1 and localhost pass the Host check with any port or none."""
    resp = await client.get(path_of(make_request()), headers={"Host": host})
    assert resp.status == 200


@pytest.mark.parametrize(
    "host",
    [
        "localhost:99999",
        "127.0.0.1:0",
        "127.0.0.1:65536",
        "LOCALHOST:00000",
        "localhost:http",
        "127.0.0.1:-1",
        "127.0.0.1:",
        "localhost:+80",
        "127.0.0.1:\u0661\u0662",  # Arabic-Indic digits are not a port
    ],
)
async def test_loopback_host_with_a_port_outside_1_to_65535_is_misdirected(
    client: TestClient, make_request: MakeRequest, host: str
) -> None:
    """A loopback Host whose port is not a number in 1-65535 gets 421 (DESIGN §6)."""
    resp = await client.get(path_of(make_request()), headers={"Host": host})
    assert resp.status == 421


@pytest.mark.parametrize("port", [":0", ":99999", ":65536", ":x"])
async def test_tunnel_host_with_a_port_outside_1_to_65535_is_misdirected(
    client: TestClient, make_request: MakeRequest, settings: PageSettings, port: str
) -> None:
    """The tunnel's hostname follows the same port rule; with a port in range it is served."""
    settings.tunnel_host = "abc.trycloudflare.com"
    path = path_of(make_request())
    resp = await client.get(path, headers={"Host": "abc.trycloudflare.com" + port})
    assert resp.status == 421
    resp = await client.get(path, headers={"Host": "abc.trycloudflare.com:443"})
    assert resp.status == 200


async def test_host_check_comes_before_the_token_check(client: TestClient) -> None:
    """An unknown path on a foreign Host answers 421, not 404."""
    resp = await client.get("/nowhere", headers={"Host": "evil.example"})
    assert resp.status == 421


@pytest.mark.parametrize("site", ["cross-site", "same-site", "something-else"])
async def test_cross_site_fetch_is_forbidden(
    client: TestClient, make_request: MakeRequest, site: str
) -> None:
    """Sec-Fetch-Site cross-site or same-site (or unknown) gets 403."""
    resp = await client.get(path_of(make_request()), headers={"Sec-Fetch-Site": site})
    assert resp.status == 403


@pytest.mark.parametrize("site", ["same-origin", "none"])
async def test_same_origin_or_typed_navigation_is_served(
    client: TestClient, make_request: MakeRequest, site: str
) -> None:
    """Sec-Fetch-Site same-origin and none pass."""
    resp = await client.get(path_of(make_request()), headers={"Sec-Fetch-Site": site})
    assert resp.status == 200


async def test_cross_site_post_writes_nothing(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A cross-site POST with the right nonce is refused and the file is untouched."""
    req = make_request()
    resp = await client.post(
        path_of(req),
        data={"nonce": req.nonce, "API_KEY": canary},
        headers={"Sec-Fetch-Site": "cross-site"},
    )
    assert (resp.status, (project / ".env").exists()) == (403, False)


@pytest.mark.parametrize(
    "origin",
    [None, "null", "http://127.0.0.1", "http://127.0.0.1:9999", "http://localhost:3000"],
)
async def test_allowed_origins_are_served(
    client: TestClient, make_request: MakeRequest, origin: str | None
) -> None:
    """Origin absent, null, or loopback on any port passes."""
    headers = {} if origin is None else {"Origin": origin}
    resp = await client.get(path_of(make_request()), headers=headers)
    assert resp.status == 200


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "http://127.0.0.1.evil.example",
        "http://localhost.evil",
        "https://127.0.0.1",
        "http://[::1]:8080",
        "file://",
    ],
)
async def test_foreign_origin_is_forbidden(
    client: TestClient, make_request: MakeRequest, origin: str
) -> None:
    """Any other Origin gets 403."""
    resp = await client.get(path_of(make_request()), headers={"Origin": origin})
    assert resp.status == 403


async def test_foreign_origin_post_writes_nothing(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A POST from another origin is refused before the nonce, and nothing is written."""
    req = make_request()
    resp = await client.post(
        path_of(req),
        data={"nonce": req.nonce, "API_KEY": canary},
        headers={"Origin": "http://evil.example"},
    )
    assert (resp.status, (project / ".env").exists()) == (403, False)


async def test_tunnel_host_and_its_https_origin_are_accepted_once_set(
    client: TestClient, make_request: MakeRequest, settings: PageSettings
) -> None:
    """With a live tunnel, its hostname passes Host and https://<it> passes Origin."""
    req = make_request()
    headers = {"Host": "abc.trycloudflare.com", "Origin": "https://abc.trycloudflare.com"}
    before = (await client.get(path_of(req), headers=headers)).status
    settings.tunnel_host = "abc.trycloudflare.com"
    after = (await client.get(path_of(req), headers=headers)).status
    assert (before, after) == (421, 200)


async def test_tunnel_host_over_plain_http_origin_is_forbidden(
    client: TestClient, make_request: MakeRequest, settings: PageSettings
) -> None:
    """The tunnel origin is https only."""
    settings.tunnel_host = "abc.trycloudflare.com"
    resp = await client.get(
        path_of(make_request()),
        headers={"Host": "abc.trycloudflare.com", "Origin": "http://abc.trycloudflare.com"},
    )
    assert resp.status == 403


async def test_unknown_token_is_not_found(client: TestClient, make_request: MakeRequest) -> None:
    """A well-formed token no request has gets 404."""
    make_request()
    resp = await client.get("/r/" + "0" * 32)
    assert resp.status == 404


@pytest.mark.parametrize("path", ["/", "/r/", "/favicon.ico", "/r/{token}/", "/r/{token}/x"])
async def test_unknown_path_is_not_found(
    client: TestClient, make_request: MakeRequest, path: str
) -> None:
    """Any path besides the three routes gets 404."""
    resp = await client.get(path.format(token=make_request().token))
    assert resp.status == 404


async def test_uppercase_token_is_not_found(client: TestClient, make_request: MakeRequest) -> None:
    """Tokens are lowercase hex; another spelling of a real one is unknown."""
    resp = await client.get("/r/" + make_request().token.upper())
    assert resp.status == 404


@pytest.mark.parametrize("suffix", ["?a=1", "/status?x", "?nonce=1", "?%00"])
async def test_any_query_string_is_not_found(
    client: TestClient, make_request: MakeRequest, suffix: str
) -> None:
    """A query string on a page or status URL gets 404, even an empty one."""
    resp = await client.get(path_of(make_request()) + suffix)
    assert resp.status == 404


async def raw_status(client: TestClient, target: str, method: str = "GET") -> bytes:
    """The status code of a request line sent byte for byte (HTTP clients re-encode paths)."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    request = f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
    writer.write(request.encode() + b"Connection: close\r\n\r\n")
    status_line = await asyncio.wait_for(reader.readline(), 10)
    writer.close()
    await writer.wait_closed()
    return bytes(status_line.split()[1])


def percent_encoded(token: str, at: int) -> str:
    return token[:at] + f"%{ord(token[at]):02x}" + token[at + 1 :]


@pytest.mark.parametrize("at", [0, 5, 31])
@pytest.mark.parametrize("suffix", ["", "/status"])
async def test_percent_encoded_token_is_not_found(
    client: TestClient, make_request: MakeRequest, at: int, suffix: str
) -> None:
    """A token path is matched as sent: one of its characters percent-encoded (`/r/%61bc…`)
    names no request, for the page, its status and a POST; the path as sent is served."""
    token = make_request().token
    assert await raw_status(client, f"/r/{token}{suffix}") == b"200"
    encoded = f"/r/{percent_encoded(token, at)}{suffix}"
    assert await raw_status(client, encoded) == b"404"
    assert await raw_status(client, f"/r/{percent_encoded(token, at).upper()}{suffix}") == b"404"
    if not suffix:
        assert await raw_status(client, encoded, "POST") == b"404"


@pytest.mark.parametrize("path", ["/%72/{token}", "/r%2F{token}", "/r/./{token}", "//r/{token}"])
async def test_a_token_path_spelled_otherwise_is_not_found(
    client: TestClient, make_request: MakeRequest, path: str
) -> None:
    """The route's parts percent-encoded, a dot segment or a doubled slash: not as sent, 404."""
    assert await raw_status(client, path.format(token=make_request().token)) == b"404"


async def test_percent_encoded_probe_path_is_not_its_answer(
    client: TestClient, settings: PageSettings
) -> None:
    """The tunnel probe's path is matched as sent too."""
    token = "0123456789abcdef0123456789abcdef"
    settings.probe = (token, "probe-answer")
    assert await raw_status(client, f"/r/{token}") == b"200"
    assert await raw_status(client, f"/r/{percent_encoded(token, 3)}") == b"404"


async def test_bare_question_mark_is_not_found(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A request line ending in a bare `?` (which HTTP clients drop) still gets 404."""
    reader, writer = await asyncio.open_connection(client.host, client.port)
    request = f"GET {path_of(make_request())}? HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    writer.write(request.encode() + b"Connection: close\r\n\r\n")
    status_line = await reader.readline()
    writer.close()
    await writer.wait_closed()
    assert status_line.split()[1] == b"404"


async def test_post_with_a_query_string_is_not_found(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """A POST to the page URL with a query string is refused as unknown."""
    req = make_request()
    resp = await client.post(path_of(req) + "?x=1", data={"nonce": req.nonce, "API_KEY": canary})
    assert resp.status == 404


async def test_cancelled_request_page_is_gone(
    client: TestClient, make_request: MakeRequest, store: RequestStore
) -> None:
    """The page of a cancelled request answers 410."""
    req = make_request()
    store.cancel(req)
    resp = await client.get(path_of(req))
    assert resp.status == 410


async def test_expired_request_page_is_gone(
    client: TestClient, make_request: MakeRequest, clock: FakeClock
) -> None:
    """After its TTL the page answers 410."""
    req = make_request()
    clock.now += 301
    resp = await client.get(path_of(req))
    assert resp.status == 410


async def test_closed_request_is_forgotten_after_an_hour(
    client: TestClient, make_request: MakeRequest, store: RequestStore, clock: FakeClock
) -> None:
    """An hour after closing, page and status both answer 404."""
    req = make_request()
    store.cancel(req)
    clock.now += 3601
    page = await client.get(path_of(req))
    status = await client.get(path_of(req) + "/status")
    assert (page.status, status.status) == (404, 404)


async def test_other_methods_are_not_allowed(client: TestClient, make_request: MakeRequest) -> None:
    """PUT on the page URL gets 405."""
    resp = await client.put(path_of(make_request()), data=b"")
    assert resp.status == 405
