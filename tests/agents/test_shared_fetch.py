"""A team's shared hook in the uvx form (`uvx --from SOURCE offprompt serve`), run exactly as
`init --shared` wrote it through `/bin/sh -c`, with the real uvx (DESIGN §9 "Hooks fail
closed"): a SOURCE that fails at once or never answers is "not installed" for that teammate
(the name check, one line naming SOURCE and how to install), answered well within every host's
limit; a guard that started and then failed or hung still blocks every call."""

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from test_setups import GIT
from test_shared_hook import BROKEN, SHAPES, app, everyday, naming, written_hook
from test_uvx import ROOT, uvx_or_skip

from offprompt.agents import hook_wrapper

Run = Callable[..., Result]
__all__ = ["app"]  # the fixture, imported for these tests
# Codex runs the call once its hook passes its limit (30 s, as init sets it): the answer must
# come well before; the hook's own deadline is that bound.
BOUND = hook_wrapper.DEADLINE + 3.0
assert hook_wrapper.HOST_LIMIT - BOUND >= 10


TIMED_OUT = (
    "offprompt guard: blocked: the guard did not decide within 15 s, so this call was stopped in"
    " case it exposes a secret. Try again; if it keeps happening, reinstall offprompt, or take"
    " this hook out with offprompt remove."
)


def fetched(source: str) -> str:
    return (
        "offprompt guard: blocked: this call names a .env file, which this project guards with"
        f" offprompt, and offprompt is not installed here (nor could uvx fetch it from {source}):"
        f" install it: pipx install {source}"
    )


@pytest.fixture
def teammate(tmp_path: Path) -> dict[str, str]:
    """A teammate's environment: uv's uvx on PATH beside the system's tools, a cache of its own
    (nothing fetched yet), no offprompt."""
    uvx = Path(uvx_or_skip())
    bin_dir = tmp_path / "teammate-bin"
    bin_dir.mkdir()
    for name in ("uv", "uvx"):
        (bin_dir / name).symlink_to(uvx.parent / name)
    env = {
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(tmp_path / "teammate-home"),
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "UV_PYTHON": sys.executable,
        "LANG": "C.UTF-8",
    }
    for name in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "SSL_CERT_FILE", "HTTPS_PROXY"):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


@pytest.fixture
def silent() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1]
    stop.set()
    thread.join()
    for c in held:
        c.close()
    server.close()


def closed_port() -> int:
    """A loopback port nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def hook_run(command: str, event: object, env: dict[str, str]) -> tuple[int, bytes, float]:
    """`command` as a host runs it; (exit, stderr, seconds)."""
    start = time.monotonic()
    done = subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(event).encode(),
        capture_output=True,
        env=env,
        timeout=hook_wrapper.HOST_LIMIT,
        check=False,
    )
    return done.returncode, done.stderr, time.monotonic() - start


def uvx_hook(run: Run, project: Path, agent: str, source: str, fake: Callable[[str], Path]) -> str:
    fake("uvx")  # init checks the shared command's first word resolves here
    return written_hook(run, project, agent, f"uvx --from {source} offprompt serve")


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_a_source_that_fails_at_once_is_not_installed(
    run: Run,
    app: Path,
    agent: str,
    teammate: dict[str, str],
    fake_program: Callable[[str], Path],
    canary: str,
) -> None:
    """Nobody listens where SOURCE points: `ls` and a change go through, the calls naming a
    dotenv file are blocked with the line naming SOURCE and `pipx install`."""
    source = f"git+http://127.0.0.1:{closed_port()}/team/offprompt.git"
    hook = uvx_hook(run, app, agent, source, fake_program)

    calls = {**everyday(agent, app), **naming(agent, app)}
    got = {k: hook_run(hook, e, teammate) for k, e in calls.items() if not isinstance(e, str)}

    want = {k: (0, b"") for k in everyday(agent, app)}
    want.update({k: (2, fetched(source).encode() + b"\n") for k in got if k not in want})
    assert want == {k: (r, e) for k, (r, e, _) in got.items()}
    assert not any(canary.encode() in e for _, e, _ in got.values())


@pytest.mark.slow
@pytest.mark.parametrize("agent", ["codex", "claude-code"])
def test_a_source_that_never_answers_is_answered_within_the_bound(
    run: Run,
    app: Path,
    agent: str,
    teammate: dict[str, str],
    fake_program: Callable[[str], Path],
    silent: int,
) -> None:
    """SOURCE accepts and never answers: the hook answers by its own deadline, well before the
    host's limit: `cat .env` blocked naming SOURCE, `ls` let through."""
    source = f"git+http://127.0.0.1:{silent}/team/offprompt.git"
    hook = uvx_hook(run, app, agent, source, fake_program)
    shell = SHAPES[agent][0]

    got = {c: hook_run(hook, shell(app, c), teammate) for c in ("cat .env", "ls -la src")}

    assert {"cat .env": (2, fetched(source).encode() + b"\n"), "ls -la src": (0, b"")} == {
        c: (r, e) for c, (r, e, _) in got.items()
    }
    assert all(s < BOUND for _, _, s in got.values()), got


def fake_uvx(folder: Path, then: str) -> Path:
    """A `uvx` whose offprompt starts (it says so as the guard does, through
    hook._started) and then runs `then` (Python)."""
    folder.mkdir()
    program = folder / "uvx"
    program.write_text(
        f"#!{sys.executable}\nimport os, sys, time\nfrom offprompt.guard.hook import _started\n"
        f"_started(os.environ)\n{then}\n"
    )
    program.chmod(0o755)
    return folder


@pytest.mark.parametrize(
    ("then", "line"),
    [
        ("sys.exit(1)", BROKEN),
        ("time.sleep(60)", TIMED_OUT),
    ],
    ids=["crash", "hang"],
)
def test_a_guard_that_started_and_then_failed_blocks_every_call(
    run: Run, app: Path, tmp_path: Path, fake_program: Callable[[str], Path], then: str, line: str
) -> None:
    """offprompt fetched and started, then crashed or hung: `ls` is blocked too, within the
    bound (a guard's failure is never "not installed")."""
    hook = uvx_hook(run, app, "codex", "git+https://example.invalid/o/x", fake_program)
    bin_dir = fake_uvx(tmp_path / "started-bin", then)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}

    got = {k: hook_run(hook, e, env) for k, e in everyday("codex", app).items()}

    assert {k: (2, line.encode() + b"\n") for k in got} == {
        k: (r, e) for k, (r, e, _) in got.items()
    }
    assert all(s < BOUND for _, _, s in got.values()), got


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """This checkout's committed offprompt, served by git's dumb HTTP protocol on loopback: a
    SOURCE a teammate's uvx can fetch."""
    bare = tmp_path / "served" / "offprompt.git"
    for args in (["clone", "-q", "--bare", str(ROOT), str(bare)], ["-C", str(bare),
                 "update-server-info"]):  # fmt: skip
        subprocess.run([GIT, *args], check=True, capture_output=True, timeout=120)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(bare.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"git+http://127.0.0.1:{server.server_address[1]}/offprompt.git"
    server.shutdown()
    server.server_close()


@pytest.mark.slow
def test_a_source_uvx_can_fetch_runs_the_guard(
    run: Run,
    app: Path,
    teammate: dict[str, str],
    fake_program: Callable[[str], Path],
    served: str,
) -> None:
    """SOURCE fetched once (as the MCP server's start does): the real guard decides each call,
    its own reason for `cat .env`, `ls` let through."""
    hook = uvx_hook(run, app, "codex", served, fake_program)
    warm = subprocess.run(
        [teammate["PATH"].split(":")[0] + "/uvx", "--from", served, "offprompt", "--version"],
        env=teammate,
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert 0 == warm.returncode, warm.stderr
    shell = SHAPES["codex"][0]

    got = {c: hook_run(hook, shell(app, c), teammate) for c in ("cat .env", "ls -la src")}

    assert 2 == got["cat .env"][0], got
    assert b"offprompt keys" in got["cat .env"][1]
    assert b"not installed" not in got["cat .env"][1]
    assert (0, b"") == got["ls -la src"][:2]
