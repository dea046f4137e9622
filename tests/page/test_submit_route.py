"""POST /r/<token> and the status endpoint: sizes, nonce, validation, git, disk failures, bodies."""

import asyncio
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient
from dotenv import dotenv_values
from helpers import bash_reads

from offprompt import offloop
from offprompt.crypto.fingerprint import EMOJI, fingerprint
from offprompt.crypto.tokens import encode_fp_key, new_fp_key
from offprompt.offloop import MAX_WORKERS
from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore
from offprompt.write.journal import Journal

from .conftest import FakeClock, claim, path_of

MakeRequest = Callable[..., RequestRecord]
JSON = {"Accept": "application/json"}
TURNED_AWAY = "file readers are all still waiting on files that have not answered"


def env(project: Path, name: str = ".env") -> dict[str, str | None]:
    return dotenv_values(project / name)


async def post(
    client: TestClient, req: RequestRecord, fields: dict[str, str], **kwargs: object
) -> aiohttp.ClientResponse:
    await claim(client, req)
    return await client.post(path_of(req), data={"nonce": req.nonce, **fields}, **kwargs)  # type: ignore[arg-type]


async def test_valid_post_writes_and_answers_written(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A form post with the nonce and a value writes .env and shows the Written page."""
    req = make_request()
    resp = await post(client, req, {"API_KEY": canary})
    body = await resp.text()
    assert (resp.status, env(project)) == (200, {"API_KEY": canary})
    assert "Written" in body


async def test_written_page_shows_the_server_fingerprint_and_names(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """Without fp_key the server makes one; the page shows its four emoji and their names."""
    req = make_request()
    body = await (await post(client, req, {"API_KEY": canary})).text()
    assert req.outcome is not None
    assert req.outcome.fingerprint is not None
    names = dict(EMOJI)
    assert req.outcome.fingerprint in body
    assert " · ".join(names[e] for e in req.outcome.fingerprint.split(" ")) in body


async def test_page_fp_key_gives_the_page_computed_fingerprint(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """With the page's fp_key the JSON answer carries the fingerprint the page can compute."""
    req = make_request()
    key = new_fp_key()
    resp = await post(client, req, {"API_KEY": canary, "fp_key": encode_fp_key(key)}, headers=JSON)
    data = await resp.json()
    expected = fingerprint(key, [("API_KEY", canary)])
    assert (data["fingerprint"], data["emoji"]) == (
        str(expected),
        [list(p) for p in zip(expected.emoji, expected.names, strict=True)],
    )


@pytest.mark.parametrize(
    "shape",
    ["  {} \n", "\t{}\t", "{}\n", "\n\n{} "],
    ids=["spaces-and-newline", "tabs", "trailing-newline", "leading-blank-lines"],
)
async def test_plain_form_post_writes_the_value_exactly(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str, shape: str
) -> None:
    """Without script, blanks and line breaks around a value reach python-dotenv and bash as sent.

    The fingerprint on the Written page is the one over the exact value.
    """
    value = shape.format(canary)
    req = make_request()
    key = new_fp_key()
    resp = await post(client, req, {"API_KEY": value, "fp_key": encode_fp_key(key)})
    body = await resp.text()
    expected = str(fingerprint(key, [("API_KEY", value)]))
    assert (resp.status, env(project), bash_reads(project, "API_KEY")) == (
        200,
        {"API_KEY": value},
        value,
    )
    assert (req.outcome and req.outcome.fingerprint, expected in body) == (expected, True)


async def test_plain_form_crlf_value_is_refused_with_the_file_sink_hint(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A browser without script sends a line break as CRLF: kept, so .env refuses it (422)."""
    req = make_request()
    resp = await post(client, req, {"API_KEY": f"{canary}\r\n"}, headers=JSON)
    data = await resp.json()
    (reason,) = data["errors"]["API_KEY"]
    assert (resp.status, "carriage return" in reason, 'kind: "file"' in reason) == (
        422,
        True,
        True,
    )
    assert (canary in str(data), (project / ".env").exists()) == (False, False)


async def test_plain_form_post_to_a_file_sink_keeps_crlf(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A file sink gets the posted bytes exactly: CRLF line breaks and a trailing blank line."""
    req = make_request(SecretSpec("KEY_PEM"), sink=SinkSpec("file", "key.pem"))
    value = f"-----BEGIN-----\r\n{canary}\r\n-----END-----\r\n\r\n"
    key = new_fp_key()
    resp = await post(client, req, {"KEY_PEM": value, "fp_key": encode_fp_key(key)})
    assert (resp.status, (project / "key.pem").read_bytes()) == (200, value.encode())
    assert req.outcome is not None
    assert req.outcome.fingerprint == str(fingerprint(key, [("KEY_PEM", value)]))


async def test_json_answer_lists_names_and_file(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """The JSON Written answer names the file and what happened to each key."""
    req = make_request(SecretSpec("API_KEY"), SecretSpec("GEN", generate=GenerateSpec()))
    data = await (await post(client, req, {"API_KEY": canary}, headers=JSON)).json()
    assert {k: data[k] for k in ("status", "file", "names", "added", "generated", "kept")} == {
        "status": "written",
        "file": ".env",
        "names": ["API_KEY", "GEN"],
        "added": ["API_KEY", "GEN"],
        "generated": ["GEN"],
        "kept": [],
    }


async def test_malformed_fp_key_is_refused(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """An fp_key that is not 43 base64url characters gets 422 and writes nothing."""
    req = make_request()
    resp = await post(client, req, {"API_KEY": canary, "fp_key": "short"}, headers=JSON)
    assert (resp.status, (project / ".env").exists()) == (422, False)


async def test_declared_oversize_body_is_refused(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A Content-Length over 64 KiB gets 413."""
    req = make_request()
    resp = await post(client, req, {"API_KEY": "a" * (64 * 1024)})
    assert (resp.status, (project / ".env").exists()) == (413, False)


async def test_chunked_oversize_body_is_refused(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A chunked body (no Content-Length) is cut off at 64 KiB with 413."""
    req = make_request()

    async def chunks() -> AsyncIterator[bytes]:
        yield f"nonce={req.nonce}&API_KEY=".encode()
        for _ in range(20):
            yield b"a" * 4096

    await claim(client, req)
    resp = await client.post(
        path_of(req),
        data=chunks(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (resp.status, (project / ".env").exists()) == (413, False)


async def test_oversize_multipart_body_is_refused(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """The 64 KiB limit holds for multipart bodies too."""
    req = make_request()
    form = aiohttp.FormData({"nonce": req.nonce, "API_KEY": "a" * (70 * 1024)})
    form._is_multipart = True  # force multipart/form-data for plain fields
    await claim(client, req)
    resp = await client.post(path_of(req), data=form)
    assert resp.status == 413


async def test_multipart_body_is_accepted(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """multipart/form-data with the same fields writes like a urlencoded post."""
    req = make_request()
    with aiohttp.MultipartWriter("form-data") as mp:
        for name, value in (("nonce", req.nonce), ("API_KEY", canary)):
            part = mp.append(value)
            part.set_content_disposition("form-data", name=name)
    await claim(client, req)
    resp = await client.post(path_of(req), data=mp)
    assert (resp.status, env(project)) == (200, {"API_KEY": canary})


async def test_multipart_file_upload_is_a_bad_request(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A file part where a text field belongs gets 400."""
    req = make_request()
    form = aiohttp.FormData()
    form.add_field("nonce", req.nonce)
    form.add_field("API_KEY", b"x", filename="key.txt")
    await claim(client, req)
    resp = await client.post(path_of(req), data=form)
    assert (resp.status, (project / ".env").exists()) == (400, False)


async def test_fetch_style_charset_parameter_is_accepted(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """`application/x-www-form-urlencoded;charset=UTF-8` (what fetch sends) is read as usual."""
    req = make_request()
    await claim(client, req)
    resp = await client.post(
        path_of(req),
        data=f"nonce={req.nonce}&API_KEY={canary}".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded;charset=UTF-8"},
    )
    assert (resp.status, env(project)) == (200, {"API_KEY": canary})


async def test_other_content_types_are_unsupported(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """A JSON body gets 415."""
    req = make_request()
    await claim(client, req)
    resp = await client.post(path_of(req), json={"nonce": req.nonce, "API_KEY": canary})
    assert resp.status == 415


async def test_invalid_utf8_in_a_field_is_a_bad_request(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Percent-encoded bytes that are not UTF-8 get 400."""
    req = make_request()
    await claim(client, req)
    resp = await client.post(
        path_of(req),
        data=f"nonce={req.nonce}&API_KEY=%FF%FE".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert resp.status == 400


async def test_a_field_sent_twice_is_a_bad_request(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """Two values for one name are ambiguous: 400, nothing written."""
    req = make_request()
    await claim(client, req)
    resp = await client.post(
        path_of(req),
        data=f"nonce={req.nonce}&API_KEY=a&API_KEY=b".encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert (resp.status, (project / ".env").exists()) == (400, False)


@pytest.mark.parametrize("nonce", ["", "wrong", "é" * 32, "🔑" * 8, None])
async def test_wrong_nonce_is_forbidden(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str, nonce: str | None
) -> None:
    """A missing, wrong or multibyte nonce gets 403 and writes nothing."""
    req = make_request()
    fields = {"API_KEY": canary} if nonce is None else {"nonce": nonce, "API_KEY": canary}
    await claim(client, req)
    resp = await client.post(path_of(req), data=fields)
    assert (resp.status, (project / ".env").exists()) == (403, False)


async def test_nonce_of_another_request_is_forbidden(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """A nonce is bound to its request."""
    first, second = make_request(), make_request()
    await claim(client, first)
    resp = await client.post(path_of(first), data={"nonce": second.nonce, "API_KEY": canary})
    assert resp.status == 403


async def test_plain_values_for_a_remote_request_are_refused(
    client: TestClient, store: RequestStore, project: Path, canary: str
) -> None:
    """A remote (tunnelled) request accepts no plain value fields: 400, nothing written."""
    req = store.create([SecretSpec("API_KEY")], SinkSpec(), project, "r", ttl=300, remote=True)
    resp = await post(client, req, {"API_KEY": canary})
    assert (resp.status, (project / ".env").exists()) == (400, False)


async def test_empty_required_value_is_unprocessable_without_echoing_values(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """422 names the empty field; the other, valid value typed beside it is not in the body."""
    req = make_request(SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    resp = await post(client, req, {"A_KEY": canary, "B_KEY": ""})
    body = await resp.text()
    assert (resp.status, "Required" in body, canary in body) == (422, True, False)
    assert not (project / ".env").exists()


async def test_validation_errors_come_back_as_json_under_their_fields(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """With Accept: application/json the 422 body is {"errors": {NAME: [...]}}."""
    req = make_request(SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    resp = await post(client, req, {"A_KEY": canary}, headers=JSON)
    data = await resp.json()
    assert (resp.status, data["errors"]) == (422, {"B_KEY": ["Required"]})


async def test_unsafe_value_is_unprocessable_without_echoing_it(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A value no dotenv form carries gets 422 with the reason under it; the value is absent."""
    req = make_request()
    resp = await post(client, req, {"API_KEY": canary + "${HOME}"}, headers=JSON)
    data = await resp.json()
    text = str(data)
    assert (resp.status, list(data["errors"]), canary in text) == (422, ["API_KEY"], False)
    assert not (project / ".env").exists()


async def test_request_stays_open_after_a_validation_failure(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A 422 leaves the request open: the corrected post writes."""
    req = make_request()
    first = await post(client, req, {"API_KEY": ""})
    second = await post(client, req, {"API_KEY": canary})
    assert (first.status, second.status, env(project)) == (422, 200, {"API_KEY": canary})


async def test_second_submit_is_gone(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """200 for the first post, 410 for the next; the file keeps the first value."""
    req = make_request()
    first = await post(client, req, {"API_KEY": canary})
    second = await post(client, req, {"API_KEY": canary + "x"})
    assert (first.status, second.status, env(project)) == (200, 410, {"API_KEY": canary})


async def test_post_to_a_cancelled_request_is_gone(
    client: TestClient, make_request: MakeRequest, store: RequestStore, project: Path, canary: str
) -> None:
    """A cancelled request refuses posts with 410 and writes nothing."""
    req = make_request()
    store.cancel(req)
    resp = await post(client, req, {"API_KEY": canary})
    assert (resp.status, (project / ".env").exists()) == (410, False)


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True)


async def test_tracked_destination_needs_the_override(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """A git-tracked .env gets 422 (file unchanged); with allow_tracked=1 it is written."""
    (project / ".env").write_text("OTHER=1\n")
    _git(project, "init", "-q")
    _git(project, "add", ".env")
    req = make_request()
    refused = await post(client, req, {"API_KEY": canary})
    body = await refused.text()
    unchanged = (project / ".env").read_text()
    allowed = await post(client, req, {"API_KEY": canary, "allow_tracked": "1"})
    assert (refused.status, "tracked by git" in body, unchanged) == (422, True, "OTHER=1\n")
    assert (allowed.status, env(project)) == (200, {"OTHER": "1", "API_KEY": canary})


async def test_tracked_refusal_is_flagged_in_json(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """The JSON 422 for a tracked file carries the reason and `tracked: true`."""
    (project / ".env").write_text("")
    _git(project, "init", "-q")
    _git(project, "add", ".env")
    req = make_request()
    data = await (await post(client, req, {"API_KEY": canary}, headers=JSON)).json()
    assert (data["tracked"], "tracked by git" in data["error"]) == (True, True)


@pytest.fixture
def read_only_dir(project: Path) -> Iterator[Path]:
    """A folder of the project on a read-only tmpfs, remountable read-write."""
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("needs root and mount(8) to make a real read-only file system")
    folder = project / "config"
    folder.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(folder)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True, check=False)


def remount_rw(folder: Path) -> None:
    subprocess.run(["mount", "-o", "remount,rw", str(folder)], check=True)


async def test_write_failure_is_500_and_a_retry_succeeds(
    client: TestClient, make_request: MakeRequest, read_only_dir: Path, canary: str
) -> None:
    """A read-only file system gives 500 with the request open; once writable, a retry writes."""
    req = make_request(sink=SinkSpec("dotenv", "config/.env"))
    failed = await post(client, req, {"API_KEY": canary}, headers=JSON)
    data = await failed.json()
    remount_rw(read_only_dir)
    retried = await post(client, req, {"API_KEY": canary}, headers=JSON)
    assert (failed.status, "Nothing was written" in data["error"], canary in str(data)) == (
        500,
        True,
        False,
    )
    assert (retried.status, dotenv_values(read_only_dir / ".env")) == (200, {"API_KEY": canary})


async def test_write_failure_re_renders_the_form_with_the_reason(
    client: TestClient, make_request: MakeRequest, read_only_dir: Path, canary: str
) -> None:
    """Without JSON the 500 is the form again, the reason beside the button, no value."""
    req = make_request(sink=SinkSpec("dotenv", "config/.env"))
    resp = await post(client, req, {"API_KEY": canary})
    body = await resp.text()
    assert (resp.status, 'id="collect"' in body, "Nothing was written" in body) == (500, True, True)
    assert canary not in body


async def test_no_free_file_worker_is_a_500_with_nothing_written_and_a_retry_writes(
    client: TestClient,
    make_request: MakeRequest,
    project: Path,
    canary: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every file worker held (offloop's bound, as on a hung file system): the page still
    answers its form, the target's problem beside it; a POST is the usual failed write (500,
    nothing written, request open, no value); once a worker is free, the retry writes."""
    monkeypatch.setattr(offloop, "SLOT_WAIT", 0.2)
    let_go = threading.Event()
    held = [asyncio.create_task(offloop.run_off_loop(let_go.wait)) for _ in range(MAX_WORKERS)]
    try:
        for _ in range(100):
            if offloop._SLOTS.taken == MAX_WORKERS:
                break
            await asyncio.sleep(0.01)
        req = make_request()
        page = await client.get(path_of(req))
        page_body = await page.text()
        failed = await post(client, req, {"API_KEY": canary}, headers=JSON)
        data = await failed.json()
    finally:
        let_go.set()
        await asyncio.gather(*held)
    assert (page.status, TURNED_AWAY in page_body, 'id="collect"' in page_body) == (200, True, True)
    assert (failed.status, "Nothing was written" in data["error"], canary in str(data)) == (
        500,
        True,
        False,
    )
    assert (req.status, (project / ".env").exists()) == ("awaiting", False)
    retried = await post(client, req, {"API_KEY": canary}, headers=JSON)
    assert (retried.status, env(project)) == (200, {"API_KEY": canary})


async def test_status_reports_awaiting_and_seconds_left(
    client: TestClient, make_request: MakeRequest, clock: FakeClock
) -> None:
    """The status endpoint answers JSON with the state and whole seconds left."""
    req = make_request()
    clock.now += 100
    resp = await client.get(path_of(req) + "/status")
    assert (resp.status, await resp.json()) == (200, {"status": "awaiting", "expires_in": 200})


async def test_status_reports_written_after_the_write(
    client: TestClient, make_request: MakeRequest, canary: str
) -> None:
    """After the write the status endpoint still answers 200, with status written."""
    req = make_request()
    await post(client, req, {"API_KEY": canary})
    resp = await client.get(path_of(req) + "/status")
    assert (resp.status, await resp.json()) == (200, {"status": "written", "expires_in": 0})


async def test_status_is_json_even_for_a_browser(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The status endpoint answers JSON whatever Accept says, errors included."""
    resp = await client.get("/r/" + "0" * 32 + "/status", headers={"Accept": "text/html"})
    assert (resp.status, resp.content_type) == (404, "application/json")


async def test_canary_is_in_no_response_after_the_write(
    client: TestClient, make_request: MakeRequest, project: Path, canary: str
) -> None:
    """Written page, the 410 page, status JSON and a repeated post never carry the value."""
    req = make_request()
    bodies = [await (await post(client, req, {"API_KEY": canary})).text()]
    bodies.append(await (await client.get(path_of(req))).text())
    bodies.append(await (await client.get(path_of(req) + "/status")).text())
    bodies.append(await (await post(client, req, {"API_KEY": canary}, headers=JSON)).text())
    assert [canary in b for b in bodies] == [False] * 4
    assert canary in (project / ".env").read_text()


async def test_logs_hold_no_value_token_or_nonce(
    client: TestClient,
    make_request: MakeRequest,
    journal: Journal,
    canary: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Everything logged while refusing and writing omits the value, the token and the nonce."""
    req = make_request()
    with caplog.at_level(logging.DEBUG):
        await post(client, req, {"API_KEY": canary + "${X}"})
        await client.post(path_of(req), data={"nonce": "bad", "API_KEY": canary})
        await post(client, req, {"API_KEY": canary})
    # aiohttp.access is the test server's own log; PageServer runs without one.
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("offprompt"))
    assert ours
    for secret in (canary, req.token, req.nonce):
        assert secret not in ours
    assert canary not in journal.path.read_text()
