"""Checked with the provider before it is written (DESIGN §16), against fake providers on
loopback that record what they receive (`OFFPROMPT_CHECK_BASE`), through the real page server."""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import re
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient, TestServer
from dotenv import dotenv_values
from helpers import assert_no_part
from provider_fakes import OWNED, SHAPELESS, carrying, own_prefixes

from offprompt import registry
from offprompt.crypto.seal import SealKey, plaintext, seal
from offprompt.page.server import create_app
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.tools import results
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import claim

JSON = {"Accept": "application/json"}
AiohttpServer = Callable[[web.Application], Awaitable[TestServer]]
AiohttpClient = Callable[[web.Application], Awaitable[TestClient]]


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeProvider:
    """One provider's API on loopback: answers `status` (with `body` JSON and `headers`),
    after `delay` seconds, and records every request it receives."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    seen: list[Seen] = field(default_factory=list)
    base: str = ""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append(
            Seen(request.method, request.path, dict(request.headers), await request.read())
        )
        if self.delay:
            await asyncio.sleep(self.delay)
        return web.json_response(self.body or {}, status=self.status, headers=self.headers)


@pytest.fixture
def providers(aiohttp_server: AiohttpServer) -> Callable[..., Awaitable[FakeProvider]]:
    async def start(**kwargs: Any) -> FakeProvider:
        fake = FakeProvider(**kwargs)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", fake.handle)
        server = await aiohttp_server(app)
        fake.base = f"http://127.0.0.1:{server.port}"
        return fake

    return start


@dataclass
class Page:
    client: TestClient
    store: RequestStore
    journal: Journal
    project: Path
    submitter: Submitter

    def request(self, *secrets: SecretSpec, sink: SinkSpec | None = None) -> RequestRecord:
        return self.store.create(
            secrets, sink or SinkSpec(), self.project, "Needed", ttl=300, client="Test Agent"
        )

    async def post(
        self, req: RequestRecord, fields: dict[str, str], *, json_answer: bool = True
    ) -> aiohttp.ClientResponse:
        await claim(self.client, req)
        return await self.client.post(
            f"/r/{req.token}",
            data={"nonce": req.nonce, **fields},
            headers=JSON if json_answer else None,
        )

    def env(self) -> dict[str, str | None]:
        return dotenv_values(self.project / ".env")


@pytest.fixture
def page(
    aiohttp_client: AiohttpClient, project: Path, tmp_path: Path
) -> Callable[..., Awaitable[Page]]:
    async def start(*fakes: tuple[str, FakeProvider], **env: str) -> Page:
        store = RequestStore()
        journal = Journal(tmp_path / "state" / "journal.jsonl")
        bases = ",".join(f"{host}={fake.base}" for host, fake in fakes)
        submitter = Submitter(store, journal, env={"OFFPROMPT_CHECK_BASE": bases, **env})
        client = await aiohttp_client(create_app(store, submitter))
        return Page(client, store, journal, project, submitter)

    return start


def main_of(html: str) -> str:
    """The page's `<main>`: what it says. Its styles and scripts, the random token and nonces
    in it and the test's temporary path hold digits that could read as the value's length."""
    found = re.search(r"<main.*?</main>", html, re.S)
    assert found is not None
    noise = (
        r'/r/[0-9a-f]{32}|name="nonce" value="[^"]*"|' + re.escape(tempfile.gettempdir()) + '[^"<]*'
    )
    return re.sub(noise, "", found[0])


def openai_key(canary: str) -> str:
    return "sk-proj-" + canary + "Q" * 12


OPENAI = SecretSpec("OPENAI_API_KEY")
STRIPE = SecretSpec("STRIPE_SECRET_KEY")


async def test_a_refused_key_is_not_written_and_the_page_says_so(
    providers: Any, page: Any, canary: str
) -> None:
    """OpenAI answers 401: nothing is written, the answer is 409 with the verdict and a fresh
    nonce, and OpenAI got the key once, as a bearer token, at GET /v1/models."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    old = req.nonce
    key = openai_key(canary)
    resp = await p.post(req, {"OPENAI_API_KEY": key, "check": "1"})
    data = await resp.json()
    assert resp.status == 409
    assert {"OPENAI_API_KEY": "rejected"} == data["checked"]
    assert {"OPENAI_API_KEY": "OpenAI refused this key (401)"} == data["verdicts"]
    assert data["nonce"] == req.nonce != old
    assert not (p.project / ".env").exists()
    assert [("GET", "/v1/models", f"Bearer {key}")] == [
        (s.method, s.path, s.headers.get("Authorization")) for s in openai.seen
    ]
    # Less the fresh random nonce, whose digits could read as the value's length.
    assert_no_part(canary, json.dumps({k: v for k, v in data.items() if k != "nonce"}))
    assert req.status == "awaiting"


async def test_write_anyway_writes_the_held_values_and_reports_rejected(
    providers: Any, page: Any, canary: str
) -> None:
    """After a 409, a post of the fresh nonce with `anyway=1` and no values writes what was
    sent, checks again, and the result and journal say `rejected`."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI, SecretSpec("APP_NAME"))
    key = openai_key(canary)
    await p.post(req, {"OPENAI_API_KEY": key, "APP_NAME": "shop", "check": "1"})
    resp = await p.post(req, {"anyway": "1"})
    data = await resp.json()
    assert resp.status == 200, data
    assert {"OPENAI_API_KEY": key, "APP_NAME": "shop"} == p.env()
    assert {"OPENAI_API_KEY": "rejected", "APP_NAME": "skipped"} == data["checked"]
    assert 2 == len(openai.seen)
    assert "written anyway" in data["html"]
    result = results.build(req, url=None, expires_in=0, opened=True).structured or {}
    assert {"OPENAI_API_KEY": "rejected", "APP_NAME": "skipped"} == result["checked"]
    [entry] = p.journal.read()
    assert {"OPENAI_API_KEY": "rejected", "APP_NAME": "skipped"} == entry.to_dict()["checked"]
    journal = p.journal.path.read_text()
    assert canary not in journal
    # Less its time and project path, whose digits could read as the value's length.
    line = {k: v for k, v in json.loads(journal).items() if k not in ("at", "project")}
    for out in (json.dumps(data), json.dumps(result), json.dumps(line)):
        assert_no_part(canary, out)
    assert "OpenAI refused" not in journal + json.dumps(result)


async def test_values_posted_with_anyway_take_the_held_ones_place(
    providers: Any, page: Any, canary: str
) -> None:
    """ "Write anyway" with a value posted again writes that value, not the held one."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    await p.post(req, {"OPENAI_API_KEY": openai_key("first" + canary), "check": "1"})
    resp = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "anyway": "1"})
    assert resp.status == 200
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()


async def test_the_old_nonce_no_longer_posts_after_a_refusal(
    providers: Any, page: Any, canary: str
) -> None:
    """The 409 renews the nonce: the refused form posted again as it was is refused (403)."""
    p = await page(("api.openai.com", await providers(status=401)))
    req = p.request(OPENAI)
    old = req.nonce
    await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    resp = await p.client.post(f"/r/{req.token}", data={"nonce": old, "anyway": "1"}, headers=JSON)
    assert resp.status == 403
    assert not (p.project / ".env").exists()


async def test_another_post_drops_the_held_values(providers: Any, page: Any, canary: str) -> None:
    """A post without `anyway` after a 409 forgets the refused values: a later "anyway" with
    nothing posted has nothing to write (Required), and the refused key is never written."""
    p = await page(("api.openai.com", await providers(status=401)))
    req = p.request(OPENAI)
    await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    await p.post(req, {"OPENAI_API_KEY": ""})
    resp = await p.post(req, {"anyway": "1"})
    assert resp.status == 422
    assert not (p.project / ".env").exists()


async def test_no_javascript_gets_the_verdicts_and_a_write_anyway_form(
    providers: Any, page: Any, canary: str
) -> None:
    """A plain form post answers a 409 page: the verdict beside the field and a second form
    with the fresh nonce and `anyway=1`, which writes when posted as it is."""
    p = await page(("api.openai.com", await providers(status=401)))
    req = p.request(OPENAI)
    key = openai_key(canary)
    resp = await p.post(req, {"OPENAI_API_KEY": key, "check": "1"}, json_answer=False)
    html = await resp.text()
    assert resp.status == 409
    assert "OpenAI refused this key (401)" in html
    assert_no_part(canary, main_of(html))
    form = re.search(r'<form[^>]*id="anyway-form".*?</form>', html, re.S)
    assert form is not None
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form[0]))
    assert {"nonce": req.nonce, "anyway": "1", "check": "1"} == hidden
    resp = await p.client.post(f"/r/{req.token}", data=hidden)
    written = await resp.text()
    assert resp.status == 200
    assert {"OPENAI_API_KEY": key} == p.env()
    assert "OpenAI refused this key (401) (written anyway)" in written
    assert_no_part(canary, main_of(written))


async def test_a_working_key_is_written_with_its_account_shown_on_the_page_only(
    providers: Any, page: Any, canary: str
) -> None:
    """200 with the documented `openai-organization` header: written, "Works — account …" on
    the page, `ok` in the result and journal, the account in neither."""
    openai = await providers(headers={"openai-organization": "acme-labs"})
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    resp = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    data = await resp.json()
    assert resp.status == 200
    assert {"OPENAI_API_KEY": "ok"} == data["checked"]
    assert "Works — account acme-labs" in data["html"]
    result = results.build(req, url=None, expires_in=0, opened=True).structured or {}
    assert {"OPENAI_API_KEY": "ok"} == result["checked"]
    assert "acme" not in json.dumps(result) + p.journal.path.read_text()


async def test_an_account_that_holds_part_of_the_value_is_not_shown(
    providers: Any, page: Any, canary: str
) -> None:
    """A provider that names the key by a piece of it (a label "sk-proj-AB…") shows no account."""
    key = openai_key(canary)
    p = await page(("api.openai.com", await providers(headers={"openai-organization": key[:16]})))
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": key, "check": "1"})).json()
    assert {"OPENAI_API_KEY": "ok"} == data["checked"]
    assert_no_part(canary, data["html"])
    assert key[:16] not in data["html"]


@pytest.mark.parametrize("span", [7, 4])
@pytest.mark.parametrize("form", ["as is", "reversed"])
async def test_an_account_sharing_four_characters_with_the_value_is_not_shown(
    providers: Any, page: Any, canary: str, span: int, form: str
) -> None:
    """The one 4-character rule of every echo (offprompt.echo): an account name that shares
    7 or 4 characters of the key, as they run in it or reversed, is not shown."""
    key = openai_key(canary)
    piece = canary[-span:] if form == "as is" else canary[-span:][::-1]
    name = f"team {piece} x"
    p = await page(("api.openai.com", await providers(headers={"openai-organization": name})))
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": key, "check": "1"})).json()
    assert {"OPENAI_API_KEY": "ok"} == data["checked"]
    assert name not in data["html"]
    assert piece not in data["html"]
    assert "Works — account" not in data["html"]


async def test_an_unreachable_provider_does_not_hold_the_write(
    providers: Any, page: Any, canary: str
) -> None:
    """A 503 is `unreachable`: written at once, "Could not reach OpenAI" on the page."""
    p = await page(("api.openai.com", await providers(status=503)))
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})).json()
    assert {"OPENAI_API_KEY": "unreachable"} == data["checked"]
    assert "Could not reach OpenAI" in data["html"]
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()


async def test_a_redirect_is_not_followed(providers: Any, page: Any, canary: str) -> None:
    """A 302 to elsewhere counts as `unreachable`: the place it points at receives nothing."""
    elsewhere = await providers()
    openai = await providers(status=302, headers={"Location": elsewhere.base + "/steal"})
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})).json()
    assert {"OPENAI_API_KEY": "unreachable"} == data["checked"]
    assert (1, []) == (len(openai.seen), elsewhere.seen)
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()


async def test_a_slow_provider_costs_at_most_five_seconds_and_the_write_happens(
    providers: Any, page: Any, canary: str
) -> None:
    """A provider that answers after 30 s: the submit returns within the 5 s limit, written."""
    p = await page(("api.openai.com", await providers(delay=30)))
    req = p.request(OPENAI)
    start = time.monotonic()
    data = await (await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})).json()
    took = time.monotonic() - start
    assert {"OPENAI_API_KEY": "unreachable"} == data["checked"]
    assert took < 7, took
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()


async def test_checks_of_one_submit_run_in_parallel(providers: Any, page: Any, canary: str) -> None:
    """Two providers each 3 s slow: one submit takes about 3 s, not 6.

    Stripe's key is a restricted `rk_live_` one: an `sk_live_` key is no longer sent to Stripe,
    since Clerk issues that prefix too (a value goes only to its own issuer, DESIGN §16)."""
    openai = await providers(delay=3)
    stripe = await providers(delay=3, body={"id": "acct_1"})
    p = await page(("api.openai.com", openai), ("api.stripe.com", stripe))
    req = p.request(OPENAI, STRIPE)
    start = time.monotonic()
    fields = {
        "OPENAI_API_KEY": openai_key(canary),
        "STRIPE_SECRET_KEY": "rk_live_" + canary.replace("-", "") + "a" * 20,
        "check": "1",
    }
    data = await (await p.post(req, fields)).json()
    assert {"OPENAI_API_KEY": "ok", "STRIPE_SECRET_KEY": "ok"} == data["checked"]
    assert time.monotonic() - start < 5.5
    assert "Works — account acct_1" in data["html"]
    # Each provider got its own key, once, and nothing of the other's.
    assert [f"Bearer {fields['OPENAI_API_KEY']}"] == [
        s.headers["Authorization"] for s in openai.seen
    ]
    assert [f"Bearer {fields['STRIPE_SECRET_KEY']}"] == [
        s.headers["Authorization"] for s in stripe.seen
    ]
    for fake, other in ((openai, "STRIPE_SECRET_KEY"), (stripe, "OPENAI_API_KEY")):
        assert all(fields[other] not in repr(s) for s in fake.seen)


@pytest.mark.parametrize(
    ("env", "fields"),
    [({"OFFPROMPT_CHECK": "off"}, {"check": "1"}), ({}, {})],
    ids=["OFFPROMPT_CHECK=off", "box unticked"],
)
async def test_no_check_sends_nothing(
    providers: Any, page: Any, canary: str, env: dict[str, str], fields: dict[str, str]
) -> None:
    """Turned off for the process, or the box unticked (no `check=1`): nothing is sent, the
    key is written and `skipped`."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai), **env)
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": openai_key(canary), **fields})).json()
    assert {"OPENAI_API_KEY": "skipped"} == data["checked"]
    assert [] == openai.seen
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()


async def test_the_page_offers_the_box_only_when_checks_are_on(page: Any) -> None:
    """A key with a check gets the ticked box; under OFFPROMPT_CHECK=off the page shows none,
    so it never offers what the process will not do."""
    for env, shown in (({}, True), ({"OFFPROMPT_CHECK": "off"}, False)):
        p = await page(**env)
        html = await (await p.client.get(f"/r/{p.request(OPENAI).token}")).text()
        assert shown is ('name="check" value="1" id="check" checked' in html)


async def test_a_check_that_fails_inside_offprompt_holds_nothing_and_says_no_value(
    providers: Any,
    page: Any,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A fault of our own while checking (here an error that quotes the value) is `unreachable`:
    the key is written, nothing is sent, and the log names the fault's class only."""
    from offprompt.write import provider

    def broken(probe: provider.Probe, base: str | None) -> Any:
        raise RuntimeError(f"could not build a request for {probe.value}")

    monkeypatch.setattr(provider, "_request", broken)
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    data = await (await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})).json()
    assert {"OPENAI_API_KEY": "unreachable"} == data["checked"]
    assert ([], {"OPENAI_API_KEY": openai_key(canary)}) == (openai.seen, p.env())
    assert "check: OPENAI_API_KEY failed (RuntimeError)" in caplog.text
    assert_no_part(canary, caplog.text)


async def test_a_key_shaped_like_another_providers_is_sent_to_neither(
    providers: Any, page: Any, canary: str
) -> None:
    """An Anthropic key in OPENAI_API_KEY (it passes OpenAI's rules, but looks like Anthropic's)
    and an OpenAI key in STRIPE_SECRET_KEY (fails Stripe's rules): both `skipped`, and neither
    provider receives anything."""
    openai, anthropic, stripe = await providers(), await providers(), await providers()
    p = await page(
        ("api.openai.com", openai), ("api.anthropic.com", anthropic), ("api.stripe.com", stripe)
    )
    req = p.request(OPENAI, STRIPE)
    fields = {
        "OPENAI_API_KEY": "sk-ant-api03-" + canary + "Q" * 40,
        "STRIPE_SECRET_KEY": openai_key(canary),
        "check": "1",
    }
    data = await (await p.post(req, fields)).json()
    assert {"OPENAI_API_KEY": "skipped", "STRIPE_SECRET_KEY": "skipped"} == data["checked"]
    assert ([], [], []) == (openai.seen, anthropic.seen, stripe.seen)


async def test_basic_auth_takes_the_user_name_from_the_credential_beside_it(
    providers: Any, page: Any, canary: str
) -> None:
    """Twilio's auth token goes as the basic-auth password of the Account SID submitted with it;
    without that SID on the same page nothing is sent.

    The request names Twilio: its auth token has no prefix of its own, so it is checked only
    then, never when found by its name alone (DESIGN §16); that case is now `skipped` too."""
    twilio = await providers(body={"accounts": [{"friendly_name": "Shop"}]})
    p = await page(("api.twilio.com", twilio))
    sid = "AC" + "0123456789abcdef" * 2
    token = "0123456789abcdef" * 2
    named = SecretSpec("TWILIO_AUTH_TOKEN", provider="twilio/auth_token")
    req = p.request(SecretSpec("TWILIO_ACCOUNT_SID"), named)
    fields = {"TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "check": "1"}
    data = await (await p.post(req, fields)).json()
    assert {"TWILIO_ACCOUNT_SID": "skipped", "TWILIO_AUTH_TOKEN": "ok"} == data["checked"]
    basic = "Basic " + base64.b64encode(f"{sid}:{token}".encode()).decode()
    assert [("/2010-04-01/Accounts.json", basic)] == [
        (s.path, s.headers["Authorization"]) for s in twilio.seen
    ]
    assert "Works — account Shop" in data["html"]
    alone = p.request(named)
    data = await (await p.post(alone, {"TWILIO_AUTH_TOKEN": token, "check": "1"})).json()
    assert {"TWILIO_AUTH_TOKEN": "skipped"} == data["checked"]
    by_name = p.request(SecretSpec("TWILIO_ACCOUNT_SID"), SecretSpec("TWILIO_AUTH_TOKEN"))
    fields = {"TWILIO_ACCOUNT_SID": sid, "TWILIO_AUTH_TOKEN": token, "check": "1"}
    data = await (await p.post(by_name, fields)).json()
    assert {"TWILIO_ACCOUNT_SID": "skipped", "TWILIO_AUTH_TOKEN": "skipped"} == data["checked"]
    assert 1 == len(twilio.seen)


async def test_an_ok_field_that_is_false_is_rejected(
    providers: Any, page: Any, canary: str
) -> None:
    """Slack answers 200 with `{"ok": false}` for a bad token: `rejected`, held."""
    slack = await providers(body={"ok": False, "error": "invalid_auth"})
    p = await page(("slack.com", slack))
    req = p.request(SecretSpec("SLACK_BOT_TOKEN"))
    token = "xoxb-1234567890-1234567890123-" + canary.replace("-", "")
    resp = await p.post(req, {"SLACK_BOT_TOKEN": token, "check": "1"})
    data = await resp.json()
    assert (resp.status, data["checked"]) == (409, {"SLACK_BOT_TOKEN": "rejected"})
    assert "POST" == slack.seen[0].method


async def test_a_file_sink_is_never_checked(providers: Any, page: Any, canary: str) -> None:
    """A file sink's value is a whole file, not a credential: nothing is sent."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(SecretSpec("OPENAI_API_KEY"), sink=SinkSpec(kind="file", path="key.txt"))
    resp = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    assert resp.status == 200
    assert [] == openai.seen


async def test_a_sealed_post_is_checked_after_it_is_opened(
    providers: Any, page: Any, canary: str
) -> None:
    """From a sandbox: `"check": true` inside the seal checks; `"anyway": true` with the fresh
    nonce checks again and holds the refused value for its confirmation code (DESIGN §17);
    the code back writes it without asking the provider a third time."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.store.create((OPENAI,), SinkSpec(), p.project, "r", ttl=1800, remote=True)
    req.delivery.seal_key = key = SealKey()
    clear = plaintext({"OPENAI_API_KEY": openai_key(canary)}, check=True)
    box = seal(key.public_point, clear, token=req.token, nonce=req.nonce)
    await claim(p.client, req)
    resp = await p.client.post(
        f"/r/{req.token}", data={"nonce": req.nonce, "sealed": box}, headers=JSON
    )
    assert (resp.status, (await resp.json())["checked"]) == (409, {"OPENAI_API_KEY": "rejected"})
    box = seal(key.public_point, plaintext({}, anyway=True), token=req.token, nonce=req.nonce)
    resp = await p.client.post(
        f"/r/{req.token}", data={"nonce": req.nonce, "sealed": box}, headers=JSON
    )
    held = await resp.json()
    assert (resp.status, held["status"], held["checked"]) == (
        200,
        "confirm",
        {"OPENAI_API_KEY": "rejected"},
    )
    assert (not (p.project / ".env").exists(), 2) == (True, len(openai.seen))
    assert "right" == p.store.try_code(req, held["confirm_code"])
    prepared = p.store.take_pending(req)
    assert prepared is not None
    outcome = await p.submitter.commit(req, prepared)
    assert {"OPENAI_API_KEY": openai_key(canary)} == p.env()
    assert (("OPENAI_API_KEY", "rejected"),) == outcome.checked
    assert 2 == len(openai.seen)


async def test_no_log_line_holds_the_value_or_the_answer(
    providers: Any, page: Any, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Refused, then written anyway: the log names keys and verdicts, never a value or an
    account."""
    caplog.set_level(logging.DEBUG)
    p = await page(("api.openai.com", await providers(status=401, body={"org": "acme-corp"})))
    req = p.request(OPENAI)
    await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    await p.post(req, {"anyway": "1"})
    assert_no_part(canary, caplog.text)
    assert "acme" not in caplog.text
    assert "check: OPENAI_API_KEY rejected" in caplog.text


def _answer_naming(account: str, name: str) -> tuple[dict[str, Any], dict[str, str]]:
    """A 2xx body and headers that carry `name` where `account` says the provider puts it."""
    if account.startswith("header:"):
        return {}, {account.removeprefix("header:"): name}
    body: Any = name
    for step in reversed(account.removeprefix("json:").split(".") if account else []):
        body = [body] if step.isdigit() else {step: body}
    return (body if isinstance(body, dict) else {}), {}


# Those a value can be sent for: not Gemini's, whose `AIza` Firebase and Google Cloud issue too,
# so no key of it is positively Gemini's (tests/write/test_provider.py proves it is never sent).
SENDABLE = OWNED + SHAPELESS


def _own_example(provider: Any, credential: Any) -> str:
    """The registry's example when it is positively this credential's, else one of the same
    filler with a prefix only this provider issues (Stripe's example is an `sk_test_` key,
    which Clerk's keys start with too)."""
    field = registry.resolve("THE_KEY", f"{provider.id}/{credential.key}")
    assert field is not None
    if registry.whose(field, credential.example) != "claimed":
        return str(credential.example)
    value = carrying(own_prefixes(provider, credential)[0], "EXAMPLE0" * 4, field)
    assert value is not None
    return value


@pytest.mark.parametrize(
    ("provider", "credential"), SENDABLE, ids=[f"{p.id}/{c.key}" for p, c in SENDABLE]
)
async def test_each_check_sends_the_value_once_in_its_documented_place(
    providers: Any, page: Any, provider: Any, credential: Any
) -> None:
    """Every check of the registry, against a fake of its host: one request, to its path, with
    the value where the provider's reference puts it, the documented headers and body; a 2xx
    naming the account is `ok` with that account on the page.

    The value is one that is positively the credential's (`_own_example`), and Gemini's check is
    not among them: a value goes only to its own issuer (DESIGN §16)."""
    check = credential.check
    body, headers = _answer_naming(check.account, "Shop Team")
    if check.ok_field:
        body[check.ok_field] = True
    fake = await providers(body=body, headers=headers)
    p = await page((check.host, fake))
    value = _own_example(provider, credential)
    specs = [SecretSpec("THE_KEY", provider=f"{provider.id}/{credential.key}")]
    fields = {"THE_KEY": value, "check": "1"}
    user = check.user
    if check.user_from:
        [sibling] = [c for c in provider.credentials if c.key == check.user_from]
        specs.append(SecretSpec("THE_USER", provider=f"{provider.id}/{sibling.key}"))
        fields["THE_USER"] = user = sibling.example
    data = await (await p.post(p.request(*specs), fields)).json()
    assert "ok" == data["checked"]["THE_KEY"], data
    [seen] = fake.seen
    assert (seen.method, seen.path) == ("POST" if check.body else "GET", check.path)
    if check.auth == "bearer":
        assert f"Bearer {value}" == seen.headers["Authorization"]
    elif check.auth == "basic":
        pair = f"{user}:{value}" if user else f"{value}:"
        assert "Basic " + base64.b64encode(pair.encode()).decode() == seen.headers["Authorization"]
    else:
        assert value == seen.headers[check.auth.removeprefix("header:")]
    for name, expected in check.headers:
        assert expected == seen.headers[name]
    assert check.body.encode() == seen.body
    assert ("Works — account Shop Team" in data["html"]) is bool(check.account)


async def test_only_the_browser_that_claimed_it_can_write_anyway(
    providers: Any, page: Any, canary: str
) -> None:
    """DESIGN §16/§17: after a 409, another client holding the link (the agent's own HTTP
    client) gets no nonce from the page, and even with the fresh nonce its "Write anyway" is 403
    and drops nothing; the person's own "Write anyway" then writes their value."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI)
    refused = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    fresh = (await refused.json())["nonce"]
    async with aiohttp.ClientSession(
        base_url=str(p.client.make_url("/")), cookie_jar=aiohttp.CookieJar(unsafe=True)
    ) as agent:
        async with agent.get(f"/r/{req.token}") as reply:
            html = await reply.text()
        assert "another browser" in html
        assert fresh not in html
        widen = {"nonce": fresh, "anyway": "1", "allow_tracked": "1", "check": "1"}
        async with agent.post(f"/r/{req.token}", data=widen, headers=JSON) as reply:
            assert reply.status == 403
    assert (req.status, req.delivery.held is not None, req.nonce) == ("awaiting", True, fresh)
    assert not (p.project / ".env").exists()
    resp = await p.post(req, {"anyway": "1"})
    assert resp.status == 200
    assert p.env() == {"OPENAI_API_KEY": openai_key(canary)}


def track(project: Path, name: str) -> None:
    """Make `project` a git repository that tracks `name`."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", name], cwd=project, check=True)


async def test_write_anyway_cannot_widen_the_refused_submit(
    providers: Any, page: Any, canary: str
) -> None:
    """The held submit's choices stand as first sent: a "Write anyway" that adds the
    tracked-file override to a submit that did not tick it still refuses the tracked file."""
    openai = await providers(status=401)
    p = await page(("api.openai.com", openai))
    (p.project / ".env").write_text("OTHER=1\n")
    track(p.project, ".env")
    req = p.request(OPENAI)
    first = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "check": "1"})
    assert first.status == 409
    widened = await p.post(req, {"anyway": "1", "allow_tracked": "1"})
    data = await widened.json()
    assert (widened.status, data.get("tracked")) == (422, True)
    assert p.env() == {"OTHER": "1"}


async def test_a_ticked_check_that_was_skipped_is_said_with_why(
    providers: Any, page: Any, canary: str
) -> None:
    """The box was ticked, but APP_SECRET has no provider to ask: `checked` says `skipped`, and
    the written page and the result's note say it was not checked and why (DESIGN §16)."""
    openai = await providers(status=200)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI, SecretSpec("APP_SECRET"))
    resp = await p.post(
        req, {"OPENAI_API_KEY": openai_key(canary), "APP_SECRET": canary, "check": "1"}
    )
    data = await resp.json()
    assert resp.status == 200, data
    assert {"OPENAI_API_KEY": "ok", "APP_SECRET": "skipped"} == data["checked"]
    assert 'data-check="skipped">Not checked: offprompt knows no provider' in data["html"]
    result = results.build(req, url=None, expires_in=0, opened=True).structured or {}
    assert {"OPENAI_API_KEY": "ok", "APP_SECRET": "skipped"} == result["checked"]
    assert "APP_SECRET was not checked with a provider: offprompt knows no" in result["note"]
    assert canary not in json.dumps(result) + data["html"]


async def test_an_unticked_check_says_nothing_of_it(providers: Any, page: Any, canary: str) -> None:
    """The person unticked the box: every name is `skipped`, as they chose, and nothing more is
    said of it on the page or in the note."""
    openai = await providers(status=200)
    p = await page(("api.openai.com", openai))
    req = p.request(OPENAI, SecretSpec("APP_SECRET"))
    resp = await p.post(req, {"OPENAI_API_KEY": openai_key(canary), "APP_SECRET": canary})
    data = await resp.json()
    assert {"OPENAI_API_KEY": "skipped", "APP_SECRET": "skipped"} == data["checked"]
    assert "Not checked" not in data["html"]
    result = results.build(req, url=None, expires_in=0, opened=True).structured or {}
    assert "not checked" not in result["note"]
