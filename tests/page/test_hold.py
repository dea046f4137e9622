"""DESIGN §17, the confirmation code on the page: a remote request's submit is held, not
written; the answer carries the code (`confirm_code` in JSON, `#confirm-code` in HTML); nothing
is written until the code comes back; the code is in no log."""

from __future__ import annotations

import json
import logging
import re
import subprocess
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.crypto.confirm import ALPHABET
from offprompt.crypto.seal import SealKey, plaintext, seal
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal

from .conftest import claim, path_of

JSON = {"Accept": "application/json"}


def remote(store: RequestStore, project: Path, *names: str) -> tuple[RequestRecord, SealKey]:
    secrets = [SecretSpec(n) for n in names or ("API_KEY",)]
    req = store.create(secrets, SinkSpec(), project, "Needed", ttl=1800, remote=True)
    req.delivery.seal_key = key = SealKey()
    return req, key


async def sealed_post(
    client: TestClient,
    req: RequestRecord,
    key: SealKey,
    values: dict[str, str],
    *,
    allow_tracked: bool = False,
) -> tuple[int, str]:
    await claim(client, req)
    box = seal(
        key.public_point,
        plaintext(values, allow_tracked=allow_tracked),
        token=req.token,
        nonce=req.nonce,
    )
    reply = await client.post(path_of(req), data={"nonce": req.nonce, "sealed": box}, headers=JSON)
    return reply.status, await reply.text()


async def test_a_remote_submit_is_held_and_answers_the_code(
    client: TestClient, store: RequestStore, project: Path, canary: str
) -> None:
    """200 with `status: confirm` and a 7-character code; nothing written, the request awaits
    its code, and the status route says `confirm`."""
    req, key = remote(store, project)
    status, body = await sealed_post(client, req, key, {"API_KEY": canary})
    assert status == 200, body
    data = json.loads(body)
    assert data["status"] == "confirm"
    code = data["confirm_code"]
    assert len(code) == 7
    assert set(code) <= set(ALPHABET)
    assert code == req.delivery.code
    assert canary not in body
    assert not (project / ".env").exists()
    assert (req.status, req.shown_status) == ("awaiting", "confirm")
    state = await (await client.get(f"{path_of(req)}/status")).json()
    assert state["status"] == "confirm"


async def test_the_held_page_without_script_shows_the_code(
    client: TestClient, store: RequestStore, project: Path, canary: str
) -> None:
    """An HTML answer: the code in the element with id `confirm-code`, hyphen after the fourth."""
    req, key = remote(store, project)
    await claim(client, req)
    box = seal(key.public_point, plaintext({"API_KEY": canary}), token=req.token, nonce=req.nonce)
    reply = await client.post(path_of(req), data={"nonce": req.nonce, "sealed": box})
    html = await reply.text()
    found = re.search(r'id="confirm-code">([^<]+)<', html)
    assert found is not None
    assert reply.status == 200
    code = req.delivery.code
    assert code is not None
    assert found.group(1) == f"{code[:4]}-{code[4:]}"
    assert canary not in html


async def test_a_held_submit_is_written_only_when_its_code_comes_back(
    client: TestClient, store: RequestStore, project: Path, canary: str, journal: Journal
) -> None:
    """A wrong code writes nothing and costs a try; the right one lets the held values be
    written exactly as sealed."""
    from offprompt.write.submit import Submitter

    req, key = remote(store, project)
    status, _ = await sealed_post(client, req, key, {"API_KEY": canary})
    assert status == 200
    code = req.delivery.code
    assert code is not None
    wrong = "0000000" if code != "0000000" else "1111111"
    assert store.try_code(req, wrong) == "wrong"
    assert (req.delivery.tries_left, (project / ".env").exists()) == (4, False)
    assert store.try_code(req, code.lower()) == "right"
    prepared = store.take_pending(req)
    assert prepared is not None
    await Submitter(store, journal).commit(req, prepared)
    assert (project / ".env").read_text() == f"API_KEY={canary}\n"
    assert req.status == "written"


async def test_a_bad_value_is_refused_before_anything_is_held(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """Validation runs before the hold: 422 with the reasons, no code made, nothing held."""
    req, key = remote(store, project)
    status, body = await sealed_post(client, req, key, {"API_KEY": " "})
    assert status == 422, body
    assert "confirm_code" not in body
    assert (req.delivery.pending, req.delivery.code) == (None, None)


async def test_a_tracked_file_is_refused_before_the_code_not_after(
    client: TestClient, store: RequestStore, project: Path, canary: str
) -> None:
    """A git-tracked destination without the override: 422 now, so the person is not given a
    code for a write that would be refused once it came back."""
    (project / ".env").write_text("OTHER=1\n")
    track(project, ".env")
    req, key = remote(store, project)
    status, body = await sealed_post(client, req, key, {"API_KEY": canary})
    assert status == 422, body
    assert '"tracked": true' in body
    assert req.delivery.pending is None
    status, body = await sealed_post(client, req, key, {"API_KEY": canary}, allow_tracked=True)
    assert (status, '"confirm"' in body) == (200, True)


async def test_no_log_line_holds_the_code(
    client: TestClient,
    store: RequestStore,
    project: Path,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The code is for the person's page only: never logged, in either form."""
    caplog.set_level(logging.DEBUG)
    req, key = remote(store, project)
    await sealed_post(client, req, key, {"API_KEY": canary})
    code = req.delivery.code
    assert code is not None
    assert "held for its confirmation code" in caplog.text
    for part in (code, f"{code[:4]}-{code[4:]}", canary):
        assert part not in caplog.text


def track(project: Path, name: str) -> None:
    """Make `project` a git repository that tracks `name`."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", name], cwd=project, check=True)
