"""DESIGN §17 end to end, with a real `offprompt serve`: only the person who was asked completes
a request. A link previewer that fetches the remote link without script claims nothing; the
agent's own HTTP client holding the link cannot finish a held sandbox write, nor widen a local
"Write anyway" after a provider's 409; a local request never asks for a code. Each test scans
the server's stdout, stderr and the journal for its canary and the code."""

from __future__ import annotations

import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from dotenv import dotenv_values
from sandbox.person import NONCE, sealed_submit
from wire import OFFPROMPT, Wire

from offprompt.crypto.confirm import shown
from offprompt.crypto.seal import b64u_decode, plaintext, seal

JSON = {"Accept": "application/json"}


class Browser:
    """One browser: its own cookie jar, so its own claim (DESIGN §17)."""

    def __init__(self) -> None:
        self.jar = CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.ProxyHandler({}), urllib.request.HTTPCookieProcessor(self.jar)
        )

    def fetch(
        self, url: str, fields: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, str]:
        data = urllib.parse.urlencode(fields).encode() if fields is not None else None
        request = urllib.request.Request(url, data=data, headers=headers or {})  # noqa: S310
        try:
            with self.opener.open(request, timeout=30) as reply:
                return reply.status, reply.read().decode()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read().decode()

    def cookies(self) -> list[str]:
        return [c.name for c in self.jar]


def serve(project: Path, tmp_path: Path, **env: str) -> Wire:
    wire = Wire(
        OFFPROMPT,
        env={
            **os.environ,
            "OFFPROMPT_TUNNEL": "off",
            "OFFPROMPT_LOG": "debug",
            "OFFPROMPT_STATE_DIR": str(tmp_path / "state"),
            **env,
        },
        cwd=str(project),
    )
    wire.initialize({})
    return wire


def call(wire: Wire, tool: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
    answer = wire.request("tools/call", {"name": tool, "arguments": arguments}, timeout=timeout)
    result: dict[str, Any] = answer["result"]
    assert result.get("isError") is not True, result
    structured: dict[str, Any] = result["structuredContent"]
    return structured


def finish(wire: Wire, tmp_path: Path) -> str:
    """Close the server as a host does; everything it wrote and logged, and the journal."""
    try:
        assert wire.close(10) == 0
    finally:
        wire.kill()
    journal = tmp_path / "state" / "journal.jsonl"
    stdout = b"".join(wire.lines).decode()
    return stdout + wire.wait_stderr() + (journal.read_text() if journal.exists() else "")


def status_of(page_url: str) -> str:
    code, body = Browser().fetch(f"{page_url}/status")
    assert code == 200, body
    status: str = json.loads(body)["status"]
    return status


REMOTE = {"secrets": [{"name": "API_KEY"}], "reason": "The billing module calls the API."}


def test_a_link_previewer_claims_nothing_and_the_person_still_completes(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A plain GET of the remote link (a chat's previewer: no script, no #k=) gets the page and
    no cookie, and claims nothing; the person's browser then claims, submits, and the code
    back through await_secret writes their value."""
    wire = serve(project, tmp_path, OFFPROMPT_SANDBOX="1")
    try:
        first = call(wire, "collect_secret", REMOTE)
        page_url = first["url"].split("#")[0]
        previewer = Browser()
        code, html = previewer.fetch(page_url)
        assert (code, 'name="API_KEY"' in html, previewer.cookies()) == (200, True, [])
        answer, expected = sealed_submit(first["url"], {"API_KEY": canary})
        held = answer.json()
        assert (answer.status, held["status"]) == (200, "confirm")
        asked = call(wire, "await_secret", {"request_id": first["request_id"]})
        assert (asked["status"], asked.get("opened_elsewhere", False)) == ("confirm", False)
        args = {"request_id": first["request_id"], "confirm": held["confirm_code"]}
        done = call(wire, "await_secret", args)
    finally:
        seen = finish(wire, tmp_path)
    assert (done["status"], done["fingerprint"]) == ("written", expected)
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    for secret in (canary, held["confirm_code"], shown(held["confirm_code"])):
        assert secret not in seen


def test_the_agents_client_cannot_finish_a_held_sandbox_write(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """Sandbox: after the person's submit is held, the agent's own client with the whole link
    (it can read the page's nonce and seal with the #k= key) is refused its claim and its
    submit, 403; the held write is the person's, and their code writes their value."""
    wire = serve(project, tmp_path, OFFPROMPT_SANDBOX="1")
    try:
        first = call(wire, "collect_secret", REMOTE)
        page_url, _, fragment = first["url"].partition("#")
        answer, expected = sealed_submit(first["url"], {"API_KEY": canary})
        held = answer.json()
        assert held["status"] == "confirm"
        agent = Browser()
        code, html = agent.fetch(page_url)
        assert (code, "another browser" in html, NONCE.search(html)) == (200, True, None)
        request = wire_request(wire, first["request_id"])
        assert request["opened_elsewhere"] is True
        claimed = agent.fetch(f"{page_url}/claim", {"nonce": "n" * 32}, JSON)
        token = page_url.rsplit("/", 1)[1]
        point = b64u_decode(fragment.removeprefix("k="))
        box = seal(point, plaintext({"API_KEY": "agent-own-value"}), token=token, nonce="n" * 32)
        posted = agent.fetch(page_url, {"nonce": "n" * 32, "sealed": box}, JSON)
        assert (claimed[0], posted[0]) == (403, 403)
        assert (status_of(page_url), (project / ".env").exists()) == ("confirm", False)
        args = {"request_id": first["request_id"], "confirm": held["confirm_code"]}
        done = call(wire, "await_secret", args)
    finally:
        seen = finish(wire, tmp_path)
    assert (done["status"], done["fingerprint"]) == ("written", expected)
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    for secret in (canary, held["confirm_code"], shown(held["confirm_code"])):
        assert secret not in seen


def wire_request(wire: Wire, request_id: str) -> dict[str, Any]:
    """What await_secret says of the request now (answers at once: the await window is 0)."""
    return call(wire, "await_secret", {"request_id": request_id})


# -- local: the agent cannot widen the person's "Write anyway" ------------------------------------


class _Refuses(BaseHTTPRequestHandler):
    """A provider that refuses every key (401), counting what it was asked."""

    asked: list[str] = []  # noqa: RUF012

    def do_GET(self) -> None:
        type(self).asked.append(self.path)
        body = b'{"error": "invalid key"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[str]:
    """A fake api.openai.com on loopback that answers 401; its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def test_the_agents_client_cannot_widen_a_local_write_after_a_409(
    project: Path, tmp_path: Path, canary: str, provider: str
) -> None:
    """Local: the person's checked submit is refused by the provider (409, nothing written);
    the agent's client, another cookie jar, posting "Write anyway" widened with the tracked-file
    override and an `also` box is 403, nothing written and nothing dropped; the person's own
    "Write anyway" writes at once: a local request never asks for a code (its status is never
    `confirm`)."""
    link_file = tmp_path / "opened.txt"
    wire = serve(
        project,
        tmp_path,
        OFFPROMPT_SANDBOX="0",
        OFFPROMPT_AWAIT_SECONDS="0",
        OFFPROMPT_CHECK="on",
        OFFPROMPT_CHECK_BASE=f"api.openai.com={provider}",
        BROWSER=f"sh -c 'echo \"$0\" > {link_file}' %s",
    )
    value = "sk-proj-" + canary + "Q" * 12
    args = {"secrets": [{"name": "OPENAI_API_KEY"}], "reason": "The chat module calls OpenAI."}
    try:
        # A local collect_secret waits for the person: its answer is read after they submit.
        wire.send(
            {
                "jsonrpc": "2.0",
                "id": "c1",
                "method": "tools/call",
                "params": {"name": "collect_secret", "arguments": args},
            }
        )
        deadline = time.monotonic() + 15
        while not link_file.exists() or not link_file.read_text():
            assert time.monotonic() < deadline, "the page was never opened"
            time.sleep(0.05)
        page_url = link_file.read_text().strip()
        person = Browser()
        code, html = person.fetch(page_url)
        found = NONCE.search(html)
        assert (code, found is not None) == (200, True)
        assert found is not None
        fields = {"nonce": found.group(1), "OPENAI_API_KEY": value, "check": "1"}
        code, body = person.fetch(page_url, fields, JSON)
        refused = json.loads(body)
        assert (code, refused["checked"]) == (409, {"OPENAI_API_KEY": "rejected"})
        widen = {
            "nonce": refused["nonce"],
            "anyway": "1",
            "allow_tracked": "1",
            "also.0": "1",
            "check": "1",
        }
        agent = Browser()
        assert agent.fetch(page_url, widen, JSON)[0] == 403
        assert (status_of(page_url), (project / ".env").exists()) == ("awaiting", False)
        code, body = person.fetch(page_url, {"nonce": refused["nonce"], "anyway": "1"}, JSON)
        written = json.loads(body)
        assert (code, written["status"], "confirm_code" in written) == (200, "written", False)
        done = wire.response("c1", timeout=30)["result"]["structuredContent"]
    finally:
        seen = finish(wire, tmp_path)
    assert done["status"] == "written"
    assert dotenv_values(project / ".env") == {"OPENAI_API_KEY": value}
    assert (canary not in seen, len(_Refuses.asked) >= 1) == (True, True)
    assert not re.search(r'"status":\s*"confirm"', seen)
