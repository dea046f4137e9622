"""How long one value takes into a team's store (DESIGN §13.1) beside the same write to `.env`
alone, in one run: submit (POST) → await_secret's written result, for

- `.env` alone (no `also`): the floor the stores are compared with, and the path that must not
  get slower for having them;
- `.env` + OpenBao (`also: vault`): the real `bao server -dev` on loopback, `bao kv metadata
  get` then `kv patch`/`kv put` (two runs of the bao binary);
- `.env` + AWS Secrets Manager (`also: aws`): moto_server on loopback and the real AWS CLI v1,
  `get-secret-value` then `put-secret-value`/`create-secret` (two runs of a Python program).

The three are interleaved run by run on one `offprompt serve`, so a busy machine weighs on all
alike; medians, and each store's ratio to `.env` alone, are printed, beside the floor
`python -c pass` timed in the same run. Needs the test extra (`bao`, `aws`, `moto_server` in
this Python's bin folder).
Usage: python bench/stores.py [--runs N]  (default 9, min 3)
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import secrets
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent


def _bench_collect() -> Any:
    spec = importlib.util.spec_from_file_location("bench_collect", HERE / "collect.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bc = _bench_collect()


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _server(argv: list[str], health: str, home: Path) -> Iterator[None]:
    proc = subprocess.Popen(
        argv,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={"PATH": os.defpath, "HOME": str(home)},
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(health, timeout=2):  # noqa: S310 - loopback
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"{argv[0]} did not start") from None
                time.sleep(0.1)
        yield
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def one(server: Any, also: list[dict[str, str]]) -> float:
    """Seconds from the POST of one value to the written result (with `also` ticked)."""
    args = {"secrets": [{"name": "BENCH_KEY"}], "reason": bc.REASON}
    if also:
        args["also"] = also
    _, first = server.call("collect_secret", args)
    url = first["url"]
    nonce = bc.load_form(url)
    rid = server.send(
        "tools/call", {"name": "await_secret", "arguments": {"request_id": first["request_id"]}}
    )
    time.sleep(0.05)  # let await_secret start waiting
    fields = {"BENCH_KEY": "v-" + secrets.token_urlsafe(24), **({"also.0": "1"} if also else {})}
    start = time.perf_counter()
    bc.post(url, nonce, fields)
    at, result = server.answer(rid, timeout=120)
    content = result["structuredContent"]
    assert content["status"] == "written", content
    for sent in content.get("destinations", []):
        assert sent["status"] == "sent", sent
    return float(at - start)


def floor() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    runs = max(3, parser.parse_args().runs)
    for tool in ("bao", "aws", "moto_server"):
        if not (BIN / tool).exists():
            sys.exit(f"{tool} is not installed: pip install -e '.[test]' -c test-constraints.txt")
    with tempfile.TemporaryDirectory(prefix="offprompt-bench-stores-") as tmp:
        root = Path(tmp)
        project, state, home = root / "project", root / "state", root / "home"
        for d in (project, state, home):
            d.mkdir()
        bao_port, moto_port = _port(), _port()
        token = "root-" + secrets.token_hex(8)
        bao = [
            str(BIN / "bao"),
            "server",
            "-dev",
            f"-dev-listen-address=127.0.0.1:{bao_port}",
            f"-dev-root-token-id={token}",
        ]
        moto = [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(moto_port)]
        bao_addr, moto_url = f"http://127.0.0.1:{bao_port}", f"http://127.0.0.1:{moto_port}"
        with (
            _server(bao, f"{bao_addr}/v1/sys/health", home),
            _server(moto, f"{moto_url}/moto-api/", home),
        ):
            server = bc.Server(
                project,
                state,
                home,
                PATH=f"{BIN}:{os.defpath}",
                BAO_ADDR=bao_addr,
                BAO_TOKEN=token,
                AWS_ACCESS_KEY_ID="bench",
                AWS_SECRET_ACCESS_KEY="bench",  # noqa: S106 - moto takes any
                AWS_REGION="us-east-1",
                AWS_ENDPOINT_URL=moto_url,
            )
            kinds: dict[str, list[dict[str, str]]] = {
                ".env alone": [],
                ".env + vault": [{"kind": "vault", "path": "secret/bench"}],
                ".env + aws": [{"kind": "aws", "secret_id": "bench"}],
            }
            times: dict[str, list[float]] = {k: [] for k in kinds}
            floors: list[float] = []
            try:
                server.initialize()
                for also in kinds.values():  # warm-up: imports, the secrets made once
                    one(server, also)
                for _ in range(runs):
                    for kind, also in kinds.items():
                        times[kind].append(one(server, also))
                    floors.append(floor())
            finally:
                server.close()
    base = statistics.median(times[".env alone"])
    print(f"one value, submit → written result, median of {runs} (interleaved):")
    for kind, got in times.items():
        med = statistics.median(got)
        ratio = "" if kind == ".env alone" else f"  {med / base:.1f} times .env alone"
        print(f"  {kind:<14} {med * 1000:8.1f} ms{ratio}")
    print(f"  floor (python -c pass) {statistics.median(floors) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
