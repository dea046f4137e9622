"""How long a collect takes where the person waits: the link, the write, and a big `.env`.

Drives `offprompt serve` with raw JSON lines (no elicitation, `BROWSER=false`, so every URL comes
back in the result) and plays the person with plain HTTP. Prints the median of:
- tool call → URL handed out, for the first call of a process (lazy imports, page server
  start) and for a later call on the same process;
- submit (POST) → await_secret's result, one key into an empty `.env`;
- the same with 12 keys into a 1,000-line `.env` (and 1 key into it, to tell size from count);
- submit → result for 1 OpenAI key with the provider check (DESIGN §16) against a local fake
  provider (`OFFPROMPT_CHECK_BASE`, answering at once), and the same key unchecked;
- submit → result for 1 and 12 keys into `.env` files of 1,000, 10,000 and 50,000 lines, and the
  time per 1,000 lines at each size (whole, and less the empty-file write), so a write that grows
  faster than the file shows; beside them the floor, `python -c pass`, timed in the same run.
Usage: python bench/collect.py [--runs N] [--sizes 1000,10000,50000]  (runs: default 15, min 5)
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import queue
import re
import secrets
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

SERVE = [sys.executable, "-m", "offprompt", "serve"]
NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]+)">')
REASON = "Benchmark."


class Server:
    """`offprompt serve` in `project`; every answer is timestamped when it is read."""

    def __init__(self, project: Path, state: Path, home: Path | None = None, **extra: str) -> None:
        env = {
            **os.environ,
            **extra,
            "BROWSER": "false",
            "OFFPROMPT_SANDBOX": "0",
            "OFFPROMPT_STATE_DIR": str(state),
            **({"HOME": str(home)} if home is not None else {}),
        }
        self.proc = subprocess.Popen(
            SERVE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            cwd=project,
            env=env,
        )
        self._answers: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self._next = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            at = time.perf_counter()
            message = json.loads(line)
            if "id" in message and "method" not in message:
                self._answers.put((at, message))

    def send(self, method: str, params: dict[str, Any]) -> int:
        self._next += 1
        message = {"jsonrpc": "2.0", "id": self._next, "method": method, "params": params}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        return self._next

    def answer(self, rid: int, timeout: float = 60) -> tuple[float, dict[str, Any]]:
        """(time read, result) of the answer to `rid`."""
        at, message = self._answers.get(timeout=timeout)
        if message.get("id") != rid or "result" not in message:
            raise RuntimeError(f"unexpected answer {message}")
        return at, message["result"]

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """(seconds from send to answer, structuredContent)."""
        start = time.perf_counter()
        at, result = self.answer(self.send("tools/call", {"name": tool, "arguments": arguments}))
        return at - start, result["structuredContent"]

    def initialize(self) -> None:
        rid = self.send(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.answer(rid)
        assert self.proc.stdin is not None
        self.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.proc.stdin.flush()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def collect_args(names: list[str]) -> dict[str, Any]:
    return {"secrets": [{"name": n} for n in names], "reason": REASON}


# The person's browser: it keeps the claim cookie its GET of the page gets (DESIGN §17).
BROWSER = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


def load_form(url: str) -> str:
    with BROWSER.open(url, timeout=10) as page:
        found = NONCE.search(page.read().decode())
    assert found is not None, "the page has no nonce"
    return found.group(1)


def post(url: str, nonce: str, values: dict[str, str]) -> None:
    data = urllib.parse.urlencode({"nonce": nonce, **values}).encode()
    request = urllib.request.Request(  # noqa: S310 - loopback
        url, data=data, headers={"Accept": "application/json"}, method="POST"
    )
    with BROWSER.open(request, timeout=30) as answer:
        assert json.loads(answer.read())["status"] == "written"


def submit_to_result(
    server: Server, names: list[str], values: dict[str, str] | None = None, check: bool = False
) -> float:
    """Seconds from the person's POST to await_secret's written result."""
    _, first = server.call("collect_secret", collect_args(names))
    url = first["url"]
    nonce = load_form(url)  # the person has the page open before submitting
    rid = server.send(
        "tools/call", {"name": "await_secret", "arguments": {"request_id": first["request_id"]}}
    )
    time.sleep(0.05)  # let await_secret start waiting
    values = values or {n: "v-" + secrets.token_urlsafe(24) for n in names}
    start = time.perf_counter()
    post(url, nonce, {**values, **({"check": "1"} if check else {})})
    at, result = server.answer(rid)
    assert result["structuredContent"]["status"] == "written", result
    return at - start


def big_dotenv(path: Path, lines: int) -> None:
    body = [f"# config line {i}" if i % 10 == 0 else f"KEY_{i}=value-{i}" for i in range(lines)]
    path.write_text("\n".join(body) + "\n")


def sized_run(root: Path, lines: int) -> dict[str, float]:
    """Submit → result for 12 keys, then 1 key, into a `.env` of `lines` lines."""
    project = root / f"lines-{lines}"
    project.mkdir()
    big_dotenv(project / ".env", lines)
    server = Server(project, root / "state")
    try:
        server.initialize()
        server.call("collect_secret", collect_args(["WARM_UP"]))  # imports out of the way
        twelve = submit_to_result(server, [f"NEW_KEY_{i}" for i in range(12)])
        one = submit_to_result(server, ["ONE_MORE_KEY"])
    finally:
        server.close()
    written = (project / ".env").read_text().count("\n")
    assert written == lines + 13, written
    return {f"twelve@{lines}": twelve, f"one@{lines}": one}


def masked_run(root: Path) -> dict[str, float]:
    """Submit → result for 1 key in a project `offprompt init --mask` masked (DESIGN §15), with
    its own HOME: the write also brings the mask entry in Claude Code's settings up to date."""
    project, home, state = root / "masked", root / "masked-home", root / "masked-state"
    for folder in (project, home):
        folder.mkdir()
    env = {**os.environ, "HOME": str(home), "OFFPROMPT_STATE_DIR": str(state)}
    init = [*SERVE[:-1], "init", "--agent", "claude-code", "--mask", "--no-guard"]
    init += ["--project", str(project), "--command", "offprompt serve"]
    subprocess.run(init, env=env, check=True, capture_output=True)
    server = Server(project, state, home)
    try:
        server.initialize()
        server.call("collect_secret", collect_args(["WARM_UP"]))  # imports out of the way
        first = submit_to_result(server, ["MASKED_KEY"])
        later = submit_to_result(server, ["MASKED_TOO"])
    finally:
        server.close()
    settings = (home / ".claude" / "settings.json").read_text()
    assert "MASKED_KEY|MASKED_TOO" in settings, settings
    return {"masked_first": first, "masked": later}


class _Provider(http.server.BaseHTTPRequestHandler):
    """OpenAI's `GET /v1/models` as a check sees it: 200 with the account header, at once."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("openai-organization", "org-bench")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def checked_run(root: Path) -> dict[str, float]:
    """Submit → result for 1 OpenAI key, checked with a local fake provider, and unchecked."""
    provider = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Provider)
    threading.Thread(target=provider.serve_forever, daemon=True).start()
    project = root / "checked"
    project.mkdir()
    base = f"api.openai.com=http://127.0.0.1:{provider.server_address[1]}"
    server = Server(project, root / "state", OFFPROMPT_CHECK_BASE=base)
    key = {"OPENAI_API_KEY": "sk-proj-" + secrets.token_urlsafe(48)}
    try:
        server.initialize()
        submit_to_result(server, ["OPENAI_API_KEY"], key, check=True)  # imports out of the way
        checked = submit_to_result(server, ["OPENAI_API_KEY"], key, check=True)
        unchecked = submit_to_result(server, ["OPENAI_API_KEY"], key)
    finally:
        server.close()
        provider.shutdown()
    return {"checked": checked, "unchecked": unchecked}


def floor() -> float:
    """Seconds for `python -c pass`: what any process of this interpreter costs."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def one_run(root: Path) -> dict[str, float]:
    project = root / "project"
    project.mkdir()
    server = Server(project, root / "state")
    try:
        server.initialize()
        first, out = server.call("collect_secret", collect_args(["API_KEY"]))
        assert out["status"] == "awaiting", out
        assert "url" in out, out
        later, out = server.call("collect_secret", collect_args(["OTHER_KEY"]))
        assert "url" in out, out
        small = submit_to_result(server, ["SMALL_KEY"])
    finally:
        server.close()
    big = root / "big"
    big.mkdir()
    big_dotenv(big / ".env", 1000)
    server = Server(big, root / "state")
    try:
        server.initialize()
        server.call("collect_secret", collect_args(["WARM_UP"]))  # imports out of the way
        twelve = submit_to_result(server, [f"NEW_KEY_{i}" for i in range(12)])
        one_big = submit_to_result(server, ["ONE_MORE_KEY"])
    finally:
        server.close()
    lines = (big / ".env").read_text().count("\n")
    assert lines == 1013, lines
    return {"first": first, "later": later, "small": small, "twelve": twelve, "one_big": one_big}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--sizes", default="1000,10000,50000", help="line counts, comma-separated")
    args = parser.parse_args()
    runs = max(5, args.runs)
    sizes = [int(n) for n in args.sizes.split(",") if n]
    samples: dict[str, list[float]] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            measured = {
                "floor": floor(),
                **one_run(Path(tmp)),
                **masked_run(Path(tmp)),
                **checked_run(Path(tmp)),
            }
            for lines in sizes:
                measured.update(sized_run(Path(tmp), lines))
            for key, value in measured.items():
                samples.setdefault(key, []).append(value)
    ms = {k: statistics.median(v) * 1000 for k, v in samples.items()}
    print(f"runs: {runs} (medians)")
    print(f"floor: python -c pass:                                 {ms['floor']:7.1f} ms")
    print(f"tool call -> URL handed out, first call of a process:  {ms['first']:7.1f} ms")
    print(f"tool call -> URL handed out, later call:               {ms['later']:7.1f} ms")
    print(f"submit -> tool result, 1 key, empty .env:              {ms['small']:7.1f} ms")
    print(f"  the same in a masked project, first write's entry:   {ms['masked_first']:7.1f} ms")
    print(f"  the same in a masked project, a later key's:         {ms['masked']:7.1f} ms")
    print(f"submit -> tool result, 1 OpenAI key, checked (local):  {ms['checked']:7.1f} ms")
    print(f"  the same key, box unticked (no check):               {ms['unchecked']:7.1f} ms")
    print(f"submit -> tool result, 12 keys into a 1,000-line .env: {ms['twelve']:7.1f} ms")
    print(f"submit -> tool result, 1 key into that .env (for scale):{ms['one_big']:7.1f} ms")
    print()
    print(f"submit -> tool result by .env size (floor: python -c pass {ms['floor']:.1f} ms;")
    print(f"per 1,000 lines: whole time, and less the empty-file write of {ms['small']:.1f} ms)")
    print("   lines    1 key   12 keys  |  per 1,000 lines, 1 key    12 keys")
    for lines in sizes:
        one, twelve = ms[f"one@{lines}"], ms[f"twelve@{lines}"]
        k = lines / 1000
        print(
            f"{lines:8,} {one:6.1f} ms {twelve:6.1f} ms  |"
            f"  {one / k:6.2f} ({(one - ms['small']) / k:6.2f}) ms"
            f"  {twelve / k:6.2f} ({(twelve - ms['small']) / k:6.2f}) ms"
        )


if __name__ == "__main__":
    main()
