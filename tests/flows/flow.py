"""One end-to-end flow: a project folder, a tee'd `offprompt serve`, the person, and the checks.

The checks every flow ends with: the value is in the destination file and nowhere else (not in
the MCP traffic either way, stderr, the journal, a result, or the page after the write), and the
fingerprint the agent gets is the one the person saw.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import json
import os
import queue
import shlex
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import mcp_types.methods as methods
from dotenv import dotenv_values
from mcp import Client
from sdk import Seen, connect

from .person import (
    CHROMIUM_ARGS,
    Form,
    fill_page,
    fill_page_and_read,
    http_submit,
    open_form,
    post_answer,
    post_form,
)

T = TypeVar("T")
PY = sys.executable
HERE = Path(__file__).resolve().parent
TEE = HERE / "tee_server.py"
PERSON = HERE / "person.py"
SHORT_STATE_SERVE = HERE / "short_state_serve.py"
REFUSED = "offprompt refused that request: "
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"


def secrets_of(*names: str, **extra: Any) -> dict[str, Any]:
    """collect_secret arguments asking for `names` with a fixed reason."""
    args: dict[str, Any] = {
        "secrets": [{"name": n} for n in names],
        "reason": "The billing module needs these to call the API.",
    }
    args.update(extra)
    return args


def structured(result: Any) -> dict[str, Any]:
    """A result's structuredContent (SDK object or raw JSON), checked to be a success."""
    if isinstance(result, dict):
        assert "isError" not in result, result
        out = result["structuredContent"]
    else:
        assert result.is_error is False, result
        out = result.structured_content
    assert isinstance(out, dict)
    return out


def texts(result: Any) -> list[str]:
    """The text of each content block (SDK object or raw JSON)."""
    if isinstance(result, dict):
        return [block["text"] for block in result["content"]]
    return [block.text for block in result.content]


def dumped(result: Any) -> str:
    return json.dumps(result) if isinstance(result, dict) else str(result.model_dump_json())


def refusal_text(result: Any) -> str:
    """The one text block of a refusal, checked to have the contract's shape."""
    assert result.is_error is True
    assert result.structured_content is None
    (text,) = texts(result)
    assert text.startswith(REFUSED)
    return text


class Chromium:
    """One headless Chromium on its own thread (Playwright's sync API), shared by many tests."""

    def __init__(self, executable: str) -> None:
        self._jobs: queue.Queue[tuple[Callable[[Any], Any], concurrent.futures.Future[Any]] | None]
        self._jobs = queue.Queue()
        self._thread = threading.Thread(
            target=self._run, args=(executable,), name="flows-chromium", daemon=True
        )
        self._thread.start()

    def _run(self, executable: str) -> None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            try:
                browser = p.chromium.launch(
                    executable_path=executable, headless=True, args=CHROMIUM_ARGS
                )
            except Exception as exc:
                while (job := self._jobs.get()) is not None:
                    job[1].set_exception(exc)
                return
            try:
                while (job := self._jobs.get()) is not None:
                    work, future = job
                    if future.set_running_or_notify_cancel():
                        try:
                            future.set_result(work(browser))
                        except BaseException as exc:
                            future.set_exception(exc)
            finally:
                browser.close()

    async def run(self, work: Callable[[Any], T]) -> T:
        """`work(browser)` on the browser's thread (Playwright's sync API), awaited here."""
        future: concurrent.futures.Future[T] = concurrent.futures.Future()
        self._jobs.put((work, future))
        return await asyncio.wait_for(asyncio.wrap_future(future), 60)

    async def fill_and_submit(self, url: str, values: dict[str, str]) -> str:
        """Open `url`, type `values`, submit, wait for Written; the four emoji the page shows."""
        return await self.run(functools.partial(fill_page, url=url, values=values))

    async def fill_and_read(self, url: str, values: dict[str, str]) -> tuple[str, str]:
        """`fill_and_submit`, plus the text the Written view shows the person."""
        return await self.run(functools.partial(fill_page_and_read, url=url, values=values))

    def close(self) -> None:
        self._jobs.put(None)
        self._thread.join(30)


@dataclass
class AtDialog:
    """The person answering a URL elicitation: the page opens in Chromium in the background
    while the callback returns `accept` at once (only a prompt accept counts).

    `finish_first`: the person fills the page before answering, as in Claude Code's
    "Open in browser", then "I'm done, continue" (2026-07-28).
    """

    chromium: Chromium
    values: dict[str, str]
    finish_first: bool = False
    urls: list[str] = field(default_factory=list)
    tasks: list[asyncio.Task[tuple[str, str]]] = field(default_factory=list)

    async def __call__(self, url: str) -> None:
        self.urls.append(url)
        self.tasks.append(asyncio.ensure_future(self.chromium.fill_and_read(url, self.values)))
        if self.finish_first:
            await self.tasks[-1]

    async def fingerprints(self) -> list[str]:
        return [shown for shown, _ in await asyncio.gather(*self.tasks)]

    async def written_views(self) -> list[str]:
        """The text each Written view showed the person."""
        return [text for _, text in await asyncio.gather(*self.tasks)]


def get(url: str) -> tuple[int, str]:
    """Status and body of a GET to the loopback page server."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:  # noqa: S310 - loopback
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


async def aget(url: str) -> tuple[int, str]:
    return await asyncio.to_thread(get, url)


async def submit(url: str, values: dict[str, str]) -> str:
    """The person without JavaScript: GET, POST the form; the fingerprint they expect."""
    return await asyncio.to_thread(http_submit, url, values)


async def load(url: str) -> Form:
    """The person loads the page (and may submit it later)."""
    return await asyncio.to_thread(open_form, url)


async def post(form: Form, values: dict[str, str]) -> str:
    """The person submits a page loaded earlier."""
    return await asyncio.to_thread(post_form, form, values)


async def post_read(form: Form, values: dict[str, str]) -> tuple[str, str]:
    """`post`, plus the HTML of the Written view the page's answer carries."""
    fingerprint, answer = await asyncio.to_thread(post_answer, form, values)
    return fingerprint, str(answer["html"])


async def assert_page_closed(url: str, status: str, *secrets: str) -> None:
    """After the request closed: the page answers 410, /status names `status`, no value shown."""
    code, body = await aget(url)
    assert code == 410
    state_code, state = await aget(url + "/status")
    assert state_code == 200
    assert json.loads(state)["status"] == status
    for value in secrets:
        assert value not in body
        assert value not in state


@dataclass
class Flow:
    """A project folder, a state dir (journal), a tee dir (MCP bytes) and the person's notes."""

    project: Path
    state: Path
    tee: Path
    notes: Path
    chromium_path: str = "/usr/bin/chromium"

    @property
    def env(self) -> dict[str, str]:
        """The server's environment for a flow: nothing opens a real browser unless told."""
        return {
            "TEE_DIR": str(self.tee),
            "OFFPROMPT_STATE_DIR": str(self.state),
            "OFFPROMPT_SANDBOX": "0",
            "BROWSER": "false",
        }

    def person(self, mode: str = "http", values: dict[str, str] | None = None) -> dict[str, str]:
        """Environment that makes `$BROWSER` the person (see person.py)."""
        return {
            "BROWSER": f"{shlex.quote(PY)} {shlex.quote(str(PERSON))} %s",
            "PERSON_MODE": mode,
            "PERSON_VALUES": json.dumps(values or {}),
            "PERSON_OUT": str(self.notes),
            "PERSON_CHROMIUM": self.chromium_path,
        }

    def command(self, *child: str) -> list[str]:
        return [PY, str(TEE), *child]

    @asynccontextmanager
    async def connect(
        self,
        mode: str,
        *,
        action: str | None = None,
        on_url: Callable[[str], Awaitable[None]] | None = None,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
        child: tuple[str, ...] = (),
        roots: list[str] | None = None,
        client_name: str = "sdk-tests",
    ) -> AsyncIterator[tuple[Client, Seen]]:
        """The official SDK client on `offprompt serve` (through the tee) in the project.

        The server's stderr is printed at the end, so a failing test shows it.
        """
        seen: Seen | None = None
        try:
            async with connect(
                mode,
                action=action,
                command=self.command(*child),
                env={**self.env, **(env or {})},
                cwd=str(cwd or self.project),
                on_url=on_url,
                roots=roots,
                client_name=client_name,
            ) as pair:
                seen = pair[1]
                yield pair
        finally:
            print(f"MCP bytes in {self.tee}; server stderr:\n{seen.stderr if seen else ''}")

    # -- what happened ----------------------------------------------------------------------------

    def traffic(self) -> bytes:
        """Every byte that crossed the MCP pipes, both directions, all servers of the test."""
        return b"".join(p.read_bytes() for p in sorted(self.tee.glob("*.*")))

    def _lines(self, suffix: str) -> list[dict[str, Any]]:
        out = []
        for path in sorted(self.tee.glob(f"*{suffix}")):
            out += [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]
        return out

    def tool_calls(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """(request, response) of every answered tools/call, each result schema-validated."""
        pairs = []
        for path in sorted(self.tee.glob("*.in")):
            sent = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
            got = [
                json.loads(x)
                for x in path.with_suffix(".out").read_bytes().splitlines()
                if x.strip()
            ]
            answers = {m["id"]: m for m in got if "id" in m and "method" not in m}
            for msg in sent:
                if msg.get("method") != "tools/call" or msg.get("id") not in answers:
                    continue
                answer = answers[msg["id"]]
                if "result" in answer:
                    meta = msg.get("params", {}).get("_meta", {})
                    version = MODERN if META_VERSION in meta else LEGACY
                    methods.validate_server_result("tools/call", version, answer["result"])
                pairs.append((msg, answer))
        return pairs

    def journal(self) -> list[dict[str, Any]]:
        """The journal's entries, oldest first."""
        path = self.state / "journal.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]

    def _notes(self, count: int, deadline: float) -> list[dict[str, Any]] | None:
        notes = []
        if self.notes.exists():
            notes = [json.loads(x) for x in self.notes.read_text().splitlines() if x]
        errors = [n["error"] for n in notes if "error" in n]
        assert not errors, errors
        if len(notes) >= count:
            return notes
        if time.monotonic() > deadline:
            raise TimeoutError(f"the person noted {notes}, expected {count} notes")
        return None

    async def person_notes(self, count: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
        """The person's first `count` notes (person.py), waiting for them; errors raise."""
        deadline = time.monotonic() + timeout
        while True:
            notes = self._notes(count, deadline)
            if notes is not None:
                return notes
            await asyncio.sleep(0.05)  # the person is another process: poll its notebook

    def wait_person_notes(self, count: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
        """`person_notes` for tests without an event loop."""
        deadline = time.monotonic() + timeout
        while (notes := self._notes(count, deadline)) is None:
            time.sleep(0.05)
        return notes

    def browser_opened(self) -> bool:
        """Whether `$BROWSER` (person.py) was run at all."""
        return self.notes.exists() and bool(self.notes.read_text().strip())

    # -- the checks -----------------------------------------------------------------------------

    def assert_contained(
        self,
        secret: str,
        *,
        stderr: str,
        results: tuple[Any, ...] = (),
        name: str = "API_KEY",
        file: str = ".env",
        whole_file: bool = False,
    ) -> None:
        """`secret` is in the destination and in nothing the agent, a log or the journal holds."""
        path = self.project / file
        if whole_file:
            assert path.read_text() == secret
        else:
            assert dotenv_values(path)[name] == secret
        traffic = self.traffic()
        assert b'"tools/call"' in traffic
        assert secret.encode() not in traffic
        assert secret not in stderr
        assert [line for line in stderr.splitlines() if not line.startswith("offprompt: ")] == []
        assert secret not in (self.state / "journal.jsonl").read_text()
        for result in results:
            assert secret not in dumped(result)
        assert self.tool_calls()

    def assert_fingerprint(
        self, result: Any, fingerprint: str, *, file: str = ".env", client: str = "sdk-tests"
    ) -> None:
        """The agent's result, its headline and the journal all carry the person's four emoji."""
        out = structured(result)
        assert out["status"] == "written"
        assert out["fingerprint"] == fingerprint
        assert out["tell_user"] == "Fingerprint " + fingerprint
        assert next(iter(out)) == "tell_user"
        written = len(out["names"]) - len(out.get("kept", []))
        count = "1 value" if written == 1 else f"{written} values"
        assert texts(result)[0] == f"Wrote {count} to {file} · fingerprint {fingerprint}"
        assert json.loads(texts(result)[-1]) == out
        entry = next(e for e in reversed(self.journal()) if e["request_id"] == out["request_id"])
        assert entry["fingerprint"] == fingerprint
        assert entry["names"] == out["names"]
        assert entry["file"] == file
        assert entry["project"] == str(self.project.resolve())
        assert entry["client"] == client


def make_flow(root: Path, project: Path, chromium_path: str = "/usr/bin/chromium") -> Flow:
    state = Path(os.environ.get("OFFPROMPT_STATE_DIR") or root / "state")
    return Flow(
        project=project,
        state=state,
        tee=root / "tee",
        notes=root / "person.jsonl",
        chromium_path=chromium_path,
    )
