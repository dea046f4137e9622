"""Drive a stdio server with raw JSON lines: what SDK clients cannot express."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = [sys.executable, str(ROOT / "tests" / "protocol" / "fixture_server.py")]
OFFPROMPT = [sys.executable, "-m", "offprompt", "serve"]

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "wire-test", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}, "url": {}}},
}


def meta(**overrides: Any) -> dict[str, Any]:
    m = dict(MODERN_META)
    m.update(overrides)
    return m


class Wire:
    """A server subprocess; every stdout line is recorded, and must be one JSON object."""

    def __init__(
        self,
        cmd: list[str] | None = None,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ) -> None:
        full_env = dict(os.environ)
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            cmd or FIXTURE,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd or str(ROOT),
        )
        self.lines: list[bytes] = []  # raw stdout, for "nothing but JSON" checks
        self.sent: list[bytes] = []
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._stderr = b""
        self._threads = [
            threading.Thread(target=self._pump, daemon=True),
            threading.Thread(target=self._drain_stderr, daemon=True),
        ]
        for t in self._threads:
            t.start()
        self.backlog: list[dict[str, Any]] = []

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.append(raw)
            try:
                self._inbox.put(json.loads(raw))
            except ValueError:
                self._inbox.put({"__not_json__": raw.decode("utf-8", "replace")})
        self._inbox.put(None)

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        self._stderr = self.proc.stderr.read()

    @property
    def stderr(self) -> str:
        return self._stderr.decode("utf-8", "replace")

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.sent.append(data)
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode() + b"\n")

    def next(self, timeout: float = 10.0) -> dict[str, Any] | None:
        if self.backlog:
            return self.backlog.pop(0)
        try:
            return self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no message from the server") from None

    def expect(self, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
        """The first message matching `predicate`; others are kept for later."""
        deadline = time.monotonic() + timeout
        kept: list[dict[str, Any]] = []
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError("expected message did not arrive")
                try:
                    msg = self._inbox.get(timeout=left)
                except queue.Empty:
                    raise TimeoutError("expected message did not arrive") from None
                if msg is None:
                    raise EOFError("server closed stdout")
                if predicate(msg):
                    return msg
                kept.append(msg)
        finally:
            self.backlog = kept + self.backlog

    def response(self, rid: Any, timeout: float = 10.0) -> dict[str, Any]:
        for i, m in enumerate(self.backlog):
            if m.get("id") == rid and "method" not in m:
                return self.backlog.pop(i)
        return self.expect(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def request(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        rid: Any = None,
        timeout: float = 10.0,
    ) -> dict[str, Any]:
        rid = rid if rid is not None else f"t{len(self.sent)}"
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.response(rid, timeout)

    def initialize(
        self, caps: dict[str, Any] | None = None, version: str = "2025-11-25"
    ) -> dict[str, Any]:
        r = self.request(
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": caps or {},
                "clientInfo": {"name": "wire-test", "version": "1"},
            },
            rid=0,
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def close(self, timeout: float = 5.0) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for t in self._threads:
            t.join(5)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if f is not None and not f.closed:
                try:
                    f.close()
                except OSError:
                    pass

    def wait_stderr(self) -> str:
        """stderr once the process has exited and its pipe is drained."""
        self._threads[1].join(5)
        return self.stderr

    def stdout_is_only_json(self) -> bool:
        for raw in self.lines:
            try:
                if not isinstance(json.loads(raw), dict):
                    return False
            except ValueError:
                return False
        return True
