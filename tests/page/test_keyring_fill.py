"""Filling a key from the OS's keyring on the page (DESIGN §13.2), against a real Secret Service
and plain aiohttp posts: an unticked box where offprompt saved a value, the value filled on the
server only when the box comes back ticked and the field empty, fingerprinted as a typed one
under the page's key; a vanished item is a 400 naming the keyring, an empty field without the
tick a 422, and the value is only in the keyring and the .env."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from dotenv import dotenv_values
from keyring_service import SecretService

from offprompt import oskeyring
from offprompt.crypto.fingerprint import fingerprint
from offprompt.crypto.seal import plaintext, seal
from offprompt.crypto.tokens import encode_fp_key, new_fp_key
from offprompt.spec import SecretSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.submit import Submitter

from .conftest import claim, path_of
from .test_hold import remote

MakeRequest = Callable[..., RequestRecord]
JSON = {"Accept": "application/json"}


def saved(name: str, value: str) -> None:
    """`name` saved as offprompt saves it (the keyring and its list of names)."""
    oskeyring.open_keyring().replace(name, value)
    oskeyring.record_saved([name])


def box_of(html: str, name: str) -> str | None:
    found = re.search(rf'<input type="checkbox" name="keyring\.{name}"[^>]*>', html)
    return found.group(0) if found else None


async def page(client: TestClient, req: RequestRecord) -> str:
    await claim(client, req)
    reply = await client.get(path_of(req))
    assert reply.status == 200
    return await reply.text()


def state_and_logs(tmp_path: Path, project: Path) -> str:
    return "".join(
        p.read_text(errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and p != project / ".env"
    )


async def test_the_page_offers_a_saved_key_unticked_and_never_holds_its_value(
    client: TestClient, make_request: MakeRequest, keyring_env: SecretService, canary: str
) -> None:
    """A saved name gets an unticked `keyring.NAME` box and an optional field; a name never
    saved gets neither; the value is not on the page."""
    saved("KR_OFFER", canary)
    req = make_request(SecretSpec("KR_OFFER"), SecretSpec("KR_OTHER"))
    html = await page(client, req)
    box = box_of(html, "KR_OFFER")
    assert box is not None
    assert "checked" not in box
    assert 'value="1"' in box
    assert "Use the value saved in your keyring" in html
    assert box_of(html, "KR_OTHER") is None
    area = re.search(r'<textarea id="v-KR_OFFER"[^>]*>', html)
    assert area is not None
    assert "required" not in area.group(0)
    assert canary not in html


async def test_an_item_another_program_saved_is_offered_and_fills(
    client: TestClient,
    make_request: MakeRequest,
    project: Path,
    keyring_env: SecretService,
    canary: str,
) -> None:
    """An item under offprompt / NAME that `secret-tool store` saved (not offprompt) is found by
    name and fills the field like one offprompt saved."""
    keyring_env.store("KR_THEIRS", canary)
    req = make_request(SecretSpec("KR_THEIRS"))
    assert box_of(await page(client, req), "KR_THEIRS") is not None
    reply = await client.post(
        path_of(req), data={"nonce": req.nonce, "KR_THEIRS": "", "keyring.KR_THEIRS": "1"}
    )
    assert reply.status == 200
    assert dotenv_values(project / ".env") == {"KR_THEIRS": canary}


async def test_a_ticked_empty_field_is_filled_and_fingerprinted_as_typed(
    client: TestClient,
    make_request: MakeRequest,
    project: Path,
    tmp_path: Path,
    keyring_env: SecretService,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The ticked key is written from the keyring; the fingerprint covers it and the typed one,
    in request order, under the page's fp_key; the value is only in the keyring and .env."""
    saved("KR_FILLED", canary)
    req = make_request(SecretSpec("KR_TYPED"), SecretSpec("KR_FILLED"))
    await page(client, req)
    key = new_fp_key()
    reply = await client.post(
        path_of(req),
        data={
            "nonce": req.nonce,
            "KR_TYPED": "typed-value",
            "KR_FILLED": "",
            "keyring.KR_FILLED": "1",
            "fp_key": encode_fp_key(key),
        },
        headers=JSON,
    )
    body = await reply.text()
    assert reply.status == 200, body
    assert dotenv_values(project / ".env") == {"KR_TYPED": "typed-value", "KR_FILLED": canary}
    expected = fingerprint(key, [("KR_TYPED", "typed-value"), ("KR_FILLED", canary)])
    assert json.loads(body)["fingerprint"] == str(expected)
    assert canary not in body + caplog.text + state_and_logs(tmp_path, project)


async def test_a_typed_value_wins_over_the_tick(
    client: TestClient, make_request: MakeRequest, project: Path, keyring_env: SecretService
) -> None:
    """Ticked but typed: what the person typed is written, the keyring is not read."""
    saved("KR_BOTH", "from-the-keyring")
    req = make_request(SecretSpec("KR_BOTH"))
    await page(client, req)
    reply = await client.post(
        path_of(req),
        data={"nonce": req.nonce, "KR_BOTH": "typed-here", "keyring.KR_BOTH": "1"},
        headers=JSON,
    )
    assert reply.status == 200
    assert dotenv_values(project / ".env") == {"KR_BOTH": "typed-here"}


async def test_ticked_but_gone_from_the_keyring_is_400_and_nothing_written(
    client: TestClient, make_request: MakeRequest, project: Path, keyring_env: SecretService
) -> None:
    """An item deleted after the page opened: 400 naming the keyring, no file, still open."""
    saved("KR_GONE", "soon-gone")
    req = make_request(SecretSpec("KR_GONE"))
    assert box_of(await page(client, req), "KR_GONE") is not None
    keyring_env.clear("KR_GONE")
    reply = await client.post(
        path_of(req), data={"nonce": req.nonce, "KR_GONE": "", "keyring.KR_GONE": "1"}, headers=JSON
    )
    data = await reply.json()
    assert reply.status == 400
    assert "keyring" in data["error"]
    assert "KR_GONE" in data["error"]
    assert not (project / ".env").exists()
    assert req.status == "awaiting"


async def test_empty_without_the_tick_is_refused_as_empty(
    client: TestClient, make_request: MakeRequest, project: Path, keyring_env: SecretService
) -> None:
    """The box offered but not ticked, the field empty: 422 Required; the keyring is not read."""
    saved("KR_UNTICKED", "never-read")
    req = make_request(SecretSpec("KR_UNTICKED"))
    await page(client, req)
    reply = await client.post(
        path_of(req), data={"nonce": req.nonce, "KR_UNTICKED": ""}, headers=JSON
    )
    assert reply.status == 422
    assert (await reply.json())["errors"] == {"KR_UNTICKED": ["Required"]}
    assert not (project / ".env").exists()


async def test_a_sealed_post_names_the_keys_to_fill(
    client: TestClient,
    store: RequestStore,
    project: Path,
    journal: object,
    keyring_env: SecretService,
    canary: str,
) -> None:
    """A remote page seals `"keyring": [NAME]` beside the empty field; once its code comes back
    the filled value is written, fingerprinted under the sealed fp_key."""
    saved("KR_SEALED", canary)
    req, key = remote(store, project, "KR_SEALED")
    await claim(client, req)
    fp = new_fp_key()
    clear = plaintext({"KR_SEALED": ""}, fp_key=encode_fp_key(fp), keyring=["KR_SEALED"])
    box = seal(key.public_point, clear, token=req.token, nonce=req.nonce)
    reply = await client.post(path_of(req), data={"nonce": req.nonce, "sealed": box}, headers=JSON)
    body = await reply.text()
    assert reply.status == 200, body
    assert canary not in body
    code = req.delivery.code
    assert code is not None
    assert store.try_code(req, code) == "right"
    prepared = store.take_pending(req)
    assert prepared is not None
    outcome = await Submitter(store, journal).commit(req, prepared)  # type: ignore[arg-type]
    assert dotenv_values(project / ".env") == {"KR_SEALED": canary}
    assert outcome.fingerprint == str(fingerprint(fp, [("KR_SEALED", canary)]))
