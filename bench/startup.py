"""Start-up cost of `offprompt serve` against a minimal server on the official SDK.

Spawns each server alternately, times spawn → `initialize` response, then sends `tools/list` and
reads the RSS (VmRSS) after it. Prints the median of each and the ratios.
Usage: python bench/startup.py [--runs N]   (default 15, at least 10)
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SERVERS = {
    "offprompt": [sys.executable, "-m", "offprompt", "serve"],
    "sdk (mcp 2.3.0)": [sys.executable, str(HERE / "sdk_server.py")],
}
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def send(proc: subprocess.Popen[bytes], message: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()


def read_response(proc: subprocess.Popen[bytes], rid: int) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError("server closed stdout")
        msg = json.loads(line)
        if msg.get("id") == rid:
            return msg  # type: ignore[no-any-return]


def once(cmd: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    try:
        send(proc, INIT)
        read_response(proc, 0)
        elapsed = time.perf_counter() - start
        send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        send(proc, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        read_response(proc, 1)
        rss = rss_kb(proc.pid)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    return elapsed, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = max(10, parser.parse_args().runs)
    times: dict[str, list[float]] = {name: [] for name in SERVERS}
    rss: dict[str, list[int]] = {name: [] for name in SERVERS}
    for cmd in SERVERS.values():
        once(cmd)  # warm the .pyc files and the page cache once, not counted
    for _ in range(runs):
        for name, cmd in SERVERS.items():
            t, r = once(cmd)
            times[name].append(t)
            rss[name].append(r)
    print(f"{'server':<18}{'first reply (median)':>22}{'RSS idle (median)':>20}   runs={runs}")
    med = {}
    for name in SERVERS:
        med[name] = (statistics.median(times[name]) * 1000, statistics.median(rss[name]) / 1024)
        print(f"{name:<18}{med[name][0]:>19.1f} ms{med[name][1]:>17.1f} MB")
    ours, sdk = med["offprompt"], med["sdk (mcp 2.3.0)"]
    print(f"{'ratio sdk/ours':<18}{sdk[0] / ours[0]:>20.1f} x{sdk[1] / ours[1]:>18.1f} x")
    print("targets: offprompt <= 100 ms and <= 25 MB")


if __name__ == "__main__":
    main()
