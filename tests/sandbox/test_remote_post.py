"""The page server's side of DESIGN §5 and §17: remote pages, a remote POST's check order, the
probe. Every POST here comes from the browser that claimed the request first (`POST …/claim`), so
the nonce and seal checks are what refuses it, not the claim; a sealed submit that opens is held
for its confirmation code (200 `confirm`) and written only when `store.try_code` takes the code
and the submitter commits the held values."""

from __future__ import annotations

import re
import secrets
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from dotenv import dotenv_values

from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.seal import SealKey, b64u_encode, plaintext, seal
from offprompt.page import PageSettings
from offprompt.page.server import create_app
from offprompt.spec import SecretSpec, SinkSpec, WriteOutcome
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

Client = TestClient[web.Request, web.Application]
AiohttpClient = Callable[[web.Application], Awaitable[Client]]
JSON = {"Accept": "application/json"}


@pytest.fixture
def store() -> RequestStore:
    return RequestStore()


@pytest.fixture
def settings() -> PageSettings:
    return PageSettings()


@pytest.fixture
def submitter(store: RequestStore, tmp_path: Path) -> Submitter:
    return Submitter(store, Journal(tmp_path / "state" / "journal.jsonl"))


@pytest.fixture
async def client(
    aiohttp_client: AiohttpClient, store: RequestStore, submitter: Submitter, settings: PageSettings
) -> Client:
    return await aiohttp_client(create_app(store, submitter, settings=settings))


def remote(store: RequestStore, project: Path, *names: str) -> RequestRecord:
    """A remote request with its key pair, as the service makes one."""
    req = store.create(
        [SecretSpec(n) for n in names or ("API_KEY",)],
        SinkSpec(),
        project,
        "r",
        ttl=1800,
        remote=True,
    )
    req.delivery.seal_key = SealKey()
    return req


def key_of(req: RequestRecord) -> SealKey:
    key = req.delivery.seal_key
    assert key is not None
    return key


def sealed(req: RequestRecord, values: dict[str, str], **kw: object) -> str:
    clear = plaintext(values, **kw)  # type: ignore[arg-type]
    return seal(key_of(req).public_point, clear, token=req.token, nonce=req.nonce)


async def claim(client: Client, req: RequestRecord) -> None:
    """What the person's page does once loaded (DESIGN §17): a remote page claims by its
    script's POST, a local one by its GET; the test client keeps the cookie."""
    if req.delivery.browser is not None:
        return
    if req.remote:
        reply = await client.post(f"/r/{req.token}/claim", data={"nonce": req.nonce})
        assert reply.status == 204, await reply.text()
    else:
        assert (await client.get(f"/r/{req.token}")).status == 200
    assert req.delivery.browser is not None


async def post(
    client: Client,
    req: RequestRecord,
    fields: dict[str, str],
    headers: dict[str, str] | None = None,
) -> aiohttp.ClientResponse:
    """POST `fields` from the browser that claimed `req` (claiming it first)."""
    await claim(client, req)
    return await client.post(f"/r/{req.token}", data=fields, headers=headers or JSON)


async def held_code(resp: aiohttp.ClientResponse) -> str:
    """The confirmation code of a held answer (200 `confirm`), which only the page shows."""
    data = await resp.json()
    assert (resp.status, data["status"]) == (200, "confirm"), data
    code = data["confirm_code"]
    assert isinstance(code, str)
    assert len(code) == 7
    return code


async def confirm(
    store: RequestStore, submitter: Submitter, req: RequestRecord, code: str
) -> WriteOutcome:
    """The code come back through the host: the held values written (DESIGN §17)."""
    assert store.try_code(req, code) == "right"
    prepared = store.take_pending(req)
    assert prepared is not None
    return await submitter.commit(req, prepared)


async def test_sealed_post_writes_the_value(
    client: Client, store: RequestStore, submitter: Submitter, project: Path, canary: str
) -> None:
    """nonce + sealed → 200 held for its code, nothing written yet; the code back → the file
    holds the value."""
    req = remote(store, project)
    resp = await post(client, req, {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary})})
    code = await held_code(resp)
    assert ((project / ".env").exists(), req.shown_status) == (False, "confirm")
    await confirm(store, submitter, req, code)
    assert (req.status, dotenv_values(project / ".env")) == ("written", {"API_KEY": canary})


async def test_sealed_fp_key_gives_the_pages_fingerprint(
    client: Client, store: RequestStore, submitter: Submitter, project: Path, canary: str
) -> None:
    """The fp_key inside the seal is the fingerprint's key, as in a plain POST: the write that
    the code releases reports the fingerprint the page computed."""
    req = remote(store, project)
    fp_key = secrets.token_bytes(32)
    body = {
        "nonce": req.nonce,
        "sealed": sealed(req, {"API_KEY": canary}, fp_key=b64u_encode(fp_key)),
    }
    code = await held_code(await post(client, req, body))
    outcome = await confirm(store, submitter, req, code)
    assert outcome.fingerprint == str(fingerprint(fp_key, [("API_KEY", canary)]))


async def test_malformed_fp_key_inside_the_seal_is_422(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """A bad fp_key in an opened seal gets the plain POST's 422 before any hold; nothing is
    written and no code is made."""
    req = remote(store, project)
    body = {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary}, fp_key="short")}
    resp = await post(client, req, body)
    assert (resp.status, (project / ".env").exists()) == (422, False)
    assert (req.delivery.pending, req.delivery.code) == (None, None)


async def test_sealed_validation_failure_keeps_the_request_open(
    client: Client, store: RequestStore, submitter: Submitter, project: Path, canary: str
) -> None:
    """An empty required value → 422 naming it; a second sealed POST is then held, and its
    code writes both values."""
    req = remote(store, project, "A_KEY", "B_KEY")
    first = await post(client, req, {"nonce": req.nonce, "sealed": sealed(req, {"A_KEY": canary})})
    errors = (await first.json())["errors"]
    again = {"nonce": req.nonce, "sealed": sealed(req, {"A_KEY": canary, "B_KEY": "b"})}
    second = await post(client, req, again)
    assert (first.status, errors, second.status) == (422, {"B_KEY": ["Required"]}, 200)
    await confirm(store, submitter, req, await held_code(second))
    assert dotenv_values(project / ".env") == {"A_KEY": canary, "B_KEY": "b"}


async def test_sealed_allow_tracked_reaches_the_writer(
    client: Client, store: RequestStore, submitter: Submitter, project: Path, canary: str
) -> None:
    """allow_tracked inside the seal lets a git-tracked .env be written, like the plain tick:
    without it 422 before any hold; with it held, and the code writes."""
    (project / ".env").write_text("OLD=1\n")
    _git(project, "init", "-q")
    _git(project, "add", ".env")
    req = remote(store, project)
    refused = await post(
        client, req, {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary})}
    )
    body = {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary}, allow_tracked=True)}
    allowed = await post(client, req, body)
    assert (refused.status, allowed.status) == (422, 200)
    assert dotenv_values(project / ".env") == {"OLD": "1"}
    await confirm(store, submitter, req, await held_code(allowed))
    assert dotenv_values(project / ".env") == {"OLD": "1", "API_KEY": canary}


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


# -- the check order: claim 403, then nonce 403, then unsealed 400, then seal 403 -----------------


async def test_a_valid_seal_from_a_browser_without_the_claim_is_403(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """The claim is checked first: a valid nonce and seal from no claimed browser is 403, and
    nothing is held or written."""
    req = remote(store, project)
    body = {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary})}
    resp = await client.post(f"/r/{req.token}", data=body, headers=JSON)
    assert (resp.status, req.delivery.pending, (project / ".env").exists()) == (403, None, False)


async def test_bad_nonce_is_403_before_anything_else(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """From the claimed browser, a wrong nonce with plain values is 403 (the nonce is checked
    before the fields)."""
    req = remote(store, project)
    resp = await post(client, req, {"nonce": "x" * 32, "API_KEY": canary})
    assert (resp.status, (project / ".env").exists()) == (403, False)
    assert req.delivery.browser is not None


async def test_no_sealed_field_is_400(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """A remote POST with the right nonce and plain values only is 400; nothing written."""
    req = remote(store, project)
    resp = await post(client, req, {"nonce": req.nonce, "API_KEY": canary})
    assert (resp.status, (project / ".env").exists()) == (400, False)


@pytest.mark.parametrize("extra", ["API_KEY", "allow_tracked", "fp_key", "other"])
async def test_any_field_beside_sealed_is_400(
    client: Client, store: RequestStore, project: Path, canary: str, extra: str
) -> None:
    """A valid seal with any other field beside it (a value, the tick, fp_key) is 400."""
    req = remote(store, project)
    body = {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary}), extra: "1"}
    resp = await post(client, req, body)
    assert (resp.status, (project / ".env").exists()) == (400, False)


async def test_nonce_only_is_400(client: Client, store: RequestStore, project: Path) -> None:
    """A remote POST with the nonce and nothing else is 400 (no sealed)."""
    req = remote(store, project)
    assert (await post(client, req, {"nonce": req.nonce})).status == 400


def _flip(part: str) -> str:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return alphabet[(alphabet.index(part[0]) + 1) % 64] + part[1:]


TAMPER: dict[str, Callable[[str, RequestRecord, RequestRecord], str]] = {
    "version": lambda s, r, o: "v2" + s[2:],
    "page point": lambda s, r, o: ".".join(
        [s.split(".")[0], _flip(s.split(".")[1]), *s.split(".")[2:]]
    ),
    "iv": lambda s, r, o: ".".join([*s.split(".")[:2], _flip(s.split(".")[2]), s.split(".")[3]]),
    "ciphertext": lambda s, r, o: ".".join([*s.split(".")[:3], _flip(s.split(".")[3])]),
    "tag": lambda s, r, o: s[:-2] + ("AA" if not s.endswith("AA") else "BA"),
    "extra part": lambda s, r, o: s + ".AA",
    "malformed": lambda s, r, o: "not a seal",
    "other request's token": lambda s, r, o: seal(
        key_of(r).public_point, plaintext({"API_KEY": "x"}), token=o.token, nonce=r.nonce
    ),
    "other request's nonce": lambda s, r, o: seal(
        key_of(r).public_point, plaintext({"API_KEY": "x"}), token=r.token, nonce=o.nonce
    ),
    "other request's key": lambda s, r, o: seal(
        key_of(o).public_point, plaintext({"API_KEY": "x"}), token=r.token, nonce=r.nonce
    ),
}


def _comparable(resp: aiohttp.ClientResponse, body: str) -> tuple[int, str, dict[str, str]]:
    csp = resp.headers.get("Content-Security-Policy", "")
    found = re.search(r"'nonce-([^']+)'", csp)
    nonce = found.group(1) if found else None

    def strip(text: str) -> str:
        return text.replace(nonce, "N") if nonce else text

    headers = {k: strip(v) for k, v in resp.headers.items() if k not in ("Date", "Content-Length")}
    return resp.status, strip(body), headers


@pytest.mark.parametrize("accept", ["json", "html"])
@pytest.mark.parametrize("case", list(TAMPER))
async def test_a_seal_that_does_not_open_is_the_bad_nonce_answer(
    client: Client,
    store: RequestStore,
    project: Path,
    canary: str,
    case: str,
    accept: str,
) -> None:
    """Every tampered seal gets the same status, headers and body as a wrong nonce; no write."""
    req, other = remote(store, project), remote(store, project)
    headers = JSON if accept == "json" else {"Accept": "text/html"}
    bad = TAMPER[case](sealed(req, {"API_KEY": canary}), req, other)
    resp = await post(client, req, {"nonce": req.nonce, "sealed": bad}, headers)
    wrong_nonce = await post(client, req, {"nonce": "y" * 32, "sealed": bad}, headers)
    assert _comparable(resp, await resp.text()) == _comparable(
        wrong_nonce, await wrong_nonce.text()
    )
    assert (resp.status, req.status, (project / ".env").exists()) == (403, "awaiting", False)


async def test_remote_request_without_a_key_refuses_every_seal(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """A remote request whose key is gone (or never made) opens nothing: 403, from the very
    browser that claimed it; nothing held."""
    req = remote(store, project)
    body = {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary})}
    req.delivery.seal_key = None
    assert (await post(client, req, body)).status == 403
    assert (req.delivery.browser is not None, req.delivery.pending) == (True, None)


async def test_the_key_is_dropped_when_the_request_closes(
    client: Client, store: RequestStore, submitter: Submitter, project: Path, canary: str
) -> None:
    """While held for its code the key is kept (a new submit may follow); after the confirmed
    write the request holds no private key any more."""
    req = remote(store, project)
    resp = await post(client, req, {"nonce": req.nonce, "sealed": sealed(req, {"API_KEY": canary})})
    code = await held_code(resp)
    assert req.delivery.seal_key is not None
    await confirm(store, submitter, req, code)
    assert (req.status, req.delivery.seal_key) == ("written", None)


async def test_cancel_drops_the_key(store: RequestStore, project: Path) -> None:
    """A cancelled remote request holds no private key any more."""
    req = remote(store, project)
    store.cancel(req)
    assert req.delivery.seal_key is None


async def test_local_request_still_takes_plain_values(
    client: Client, store: RequestStore, project: Path, canary: str
) -> None:
    """A local request is unchanged: its page claimed by its GET, a plain form POST writes at
    once, with no code."""
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=300)
    resp = await post(client, req, {"nonce": req.nonce, "API_KEY": canary})
    data = await resp.json()
    assert (resp.status, dotenv_values(project / ".env")) == (200, {"API_KEY": canary})
    assert ("confirm_code" in data, req.status) == (False, "written")


# -- the remote page ------------------------------------------------------------------------------


async def test_remote_page_carries_the_seal_script_and_a_disabled_button(
    client: Client, store: RequestStore, project: Path
) -> None:
    """The remote page is marked remote, loads seal.js, and its button starts disabled."""
    req = remote(store, project)
    html = await (await client.get(f"/r/{req.token}")).text()
    assert 'data-remote="1"' in html
    assert "offprompt/v1/seal" in html
    assert re.search(r'<button type="submit" id="submit" disabled>', html)
    assert 'id="seal-status"' in html


async def test_remote_page_forbids_plain_form_posts_by_csp(
    client: Client, store: RequestStore, project: Path
) -> None:
    """A remote page's CSP has form-action 'none': only the sealing script can post."""
    req = remote(store, project)
    csp = (await client.get(f"/r/{req.token}")).headers["Content-Security-Policy"]
    assert "form-action 'none'" in csp


async def test_local_page_is_unchanged(client: Client, store: RequestStore, project: Path) -> None:
    """A local page has no seal script, an enabled button and form-action 'self'."""
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=300)
    resp = await client.get(f"/r/{req.token}")
    html = await resp.text()
    assert ("offprompt/v1/seal" in html, 'data-remote="1"' in html) == (False, False)
    assert '<button type="submit" id="submit">' in html
    assert "form-action 'self'" in resp.headers["Content-Security-Policy"]


async def test_remote_page_never_contains_the_private_key(
    client: Client, store: RequestStore, project: Path
) -> None:
    """The page carries no key at all: the public point travels only in the link's fragment."""
    req = remote(store, project)
    html = await (await client.get(f"/r/{req.token}")).text()
    assert key_of(req).fragment.removeprefix("k=") not in html


# -- the tunnel probe -----------------------------------------------------------------------------


async def test_probe_path_answers_while_set(client: Client, settings: PageSettings) -> None:
    """GET /r/<probe token> answers the probe's answer while a probe runs."""
    settings.probe = ("ab" * 16, "the-answer")
    resp = await client.get("/r/" + "ab" * 16)
    assert (resp.status, await resp.text()) == (200, "the-answer")


async def test_probe_path_is_404_afterwards(client: Client, settings: PageSettings) -> None:
    """Without a running probe the same path is an unknown token: 404."""
    assert (await client.get("/r/" + "ab" * 16)).status == 404


async def test_probe_path_still_passes_the_host_check(
    client: Client, settings: PageSettings
) -> None:
    """The probe is behind the same guards: a foreign Host gets 421."""
    settings.probe = ("ab" * 16, "the-answer")
    resp = await client.get("/r/" + "ab" * 16, headers={"Host": "evil.example"})
    assert resp.status == 421
