"""Start-up cost of `offprompt serve`, side by side with the floor and the official SDK's server.

In one run, interleaved, with this interpreter (use the venv's python):
  floor          spawn → exit of `python -c pass`
  first reply    spawn → the `initialize` answer, then → the `tools/list` answer
  idle RSS       VmRSS after the handshake and `tools/list`
  sdk            the same first reply from `bench/sdk_server.py` (the `mcp` package's server)
  call→URL       a first `collect_secret`, sent once the server is idle, until its link is out:
                 the `elicitation/create` (client declares URL elicitation) or the `awaiting`
                 result carrying `url` (no elicitation, no browser)
Prints medians and the targets of DESIGN §2 / issue 19 as ratios measured in this same run.
Usage: python bench/startup.py [--runs N]   (default 15, at least 10)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
FLOOR = [sys.executable, "-c", "pass"]
OFFPROMPT = [sys.executable, "-m", "offprompt", "serve"]
SDK = [sys.executable, str(HERE / "sdk_server.py")]


def initialize(caps: dict[str, Any]) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }


COLLECT = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {
        "name": "collect_secret",
        "arguments": {"secrets": [{"name": "API_KEY"}], "reason": "The bench needs it."},
    },
}


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


class Server:
    """One server process on pipes; stderr discarded."""

    def __init__(self, cmd: list[str], env: dict[str, str], cwd: str) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            cmd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def until(self, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("server closed stdout")
            msg: dict[str, Any] = json.loads(line)
            if done(msg):
                return msg

    def answer(self, rid: int) -> dict[str, Any]:
        return self.until(lambda m: m.get("id") == rid and "method" not in m)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def floor(env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run(FLOOR, env=env, cwd=cwd, check=True)
    return time.perf_counter() - start


def first_reply(cmd: list[str], env: dict[str, str], cwd: str) -> tuple[float, float, int]:
    """Seconds to the `initialize` answer and to the `tools/list` one; RSS (KiB) after."""
    server = Server(cmd, env, cwd)
    try:
        server.send(initialize({}))
        server.answer(0)
        init = time.perf_counter() - server.started
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        server.answer(1)
        listed = time.perf_counter() - server.started
        return init, listed, rss_kb(server.proc.pid)
    finally:
        server.close()


def _has_url(msg: dict[str, Any]) -> bool:
    if msg.get("method") == "elicitation/create":
        return True
    content = msg.get("result", {}).get("structuredContent", {})
    return msg.get("id") == COLLECT["id"] and "url" in content


def call_to_url(env: dict[str, str], cwd: str, *, elicit: bool) -> float:
    """Seconds from sending a first `collect_secret` to an idle server until its link is out."""
    server = Server(OFFPROMPT, env, cwd)
    try:
        server.send(initialize({"elicitation": {"url": {}}} if elicit else {}))
        server.answer(0)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        server.answer(1)
        start = time.perf_counter()
        server.send(COLLECT)
        msg = server.until(_has_url)
        elapsed = time.perf_counter() - start
        if elicit and msg.get("method") != "elicitation/create":
            raise RuntimeError("expected an elicitation, got the link in a result")
        return elapsed
    finally:
        server.close()


def environment(home: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure as installed: with .pyc files
    for name in [n for n in env if n.startswith("OFFPROMPT_")]:
        del env[name]
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / "state"),
        XDG_CACHE_HOME=str(home / "cache"),
        OFFPROMPT_STATE_DIR=str(home / "offprompt-state"),
        OFFPROMPT_SANDBOX="0",
        BROWSER="false",  # the link path: no browser opens, the link comes back in the result
    )
    return env


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = max(10, parser.parse_args().runs)
    with tempfile.TemporaryDirectory(prefix="offprompt-bench-") as tmp:
        home = Path(tmp) / "home"
        project = Path(tmp) / "project"
        home.mkdir()
        project.mkdir()
        env, cwd = environment(home), str(project)
        kinds = ["floor", "init", "list", "rss", "sdk", "sdk_rss", "elicit", "link"]
        seen: dict[str, list[float]] = {k: [] for k in kinds}

        def one_round() -> None:
            seen["floor"].append(floor(env, cwd))
            init, listed, rss = first_reply(OFFPROMPT, env, cwd)
            seen["init"].append(init)
            seen["list"].append(listed)
            seen["rss"].append(rss / 1024)
            sdk, _, sdk_rss = first_reply(SDK, env, cwd)
            seen["sdk"].append(sdk)
            seen["sdk_rss"].append(sdk_rss / 1024)
            seen["elicit"].append(call_to_url(env, cwd, elicit=True))
            seen["link"].append(call_to_url(env, cwd, elicit=False))

        one_round()  # writes the .pyc files and warms the page cache; not counted
        seen = {k: [] for k in kinds}
        for _ in range(runs):
            one_round()

    fl = median_ms(seen["floor"])
    init, listed = median_ms(seen["init"]), median_ms(seen["list"])
    rss = statistics.median(seen["rss"])
    sdk, sdk_rss = median_ms(seen["sdk"]), statistics.median(seen["sdk_rss"])
    elicit, link = median_ms(seen["elicit"]), median_ms(seen["link"])
    rows = [
        ("floor: python -c pass", f"{fl:.1f} ms", ""),
        ("first reply: initialize", f"{init:.1f} ms", f"{init / fl:.1f}x floor"),
        ("first reply: + tools/list", f"{listed:.1f} ms", f"{listed / fl:.1f}x floor"),
        ("idle RSS after handshake", f"{rss:.1f} MB", ""),
        ("sdk server: initialize", f"{sdk:.1f} ms", f"{sdk / init:.1f}x ours"),
        ("sdk server: idle RSS", f"{sdk_rss:.1f} MB", f"{sdk_rss / rss:.1f}x ours"),
        ("cold call→URL: elicitation", f"{elicit:.1f} ms", f"{elicit / fl:.1f}x floor"),
        ("cold call→URL: link in result", f"{link:.1f} ms", f"{link / fl:.1f}x floor"),
    ]
    print(f"medians of {runs} interleaved runs, {sys.executable}")
    for name, value, ratio in rows:
        print(f"  {name:<32}{value:>11}   {ratio}")
    targets = [
        ("first reply <= 3x floor", init <= 3 * fl, f"{init / fl:.1f}x"),
        ("idle RSS <= 16 MB", rss <= 16, f"{rss:.1f} MB"),
        ("sdk >= 10x slower than ours", sdk >= 10 * init, f"{sdk / init:.1f}x"),
        ("cold call→URL <= 120 ms", max(elicit, link) <= 120, f"{max(elicit, link):.1f} ms"),
    ]
    print("targets:")
    for name, ok, got in targets:
        print(f"  {'ok  ' if ok else 'MISS'} {name:<30}{got}")


if __name__ == "__main__":
    main()
