"""A teammate of a `--shared` project whose hook runs offprompt through `uvx --from SOURCE`, and
whose uvx cannot fetch SOURCE (DESIGN §9 "Hooks fail closed"), under real Codex 0.171.0 (`codex
exec`, which runs the call once a hook passes its limit) and real Claude Code 2.1.332 (`claude
-p`) with the scripted model: a SOURCE nobody listens on, and one that accepts and never answers.
`ls` runs, `cat .env` is blocked with the line naming SOURCE, and the value reaches no request to
the model; the hook answers well before the host's limit."""

from __future__ import annotations

import json
import shutil
import socket
import sysconfig
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from offprompt.agents import hook_wrapper

from .conftest import MakeWorld
from .harness import World, run
from .test_guard import KEY, assert_kept_out, claude_run, codex_run, make

pytestmark = pytest.mark.real_hosts


def fetched(source: str) -> str:
    return (
        "offprompt guard: blocked: this call names a .env file, which this project guards with"
        f" offprompt, and offprompt is not installed here (nor could uvx fetch it from {source}):"
        f" install it: pipx install {source}"
    )


@pytest.fixture
def silent() -> Iterator[int]:
    """A loopback port that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def teammate_project(world: World, agent: str, source: str) -> dict[str, str]:
    """`init --shared --command 'uvx --from SOURCE offprompt serve'` run for real in the
    project (a .env holding the canary beside it); returns a teammate's environment: uv's uvx on
    PATH, no offprompt."""
    (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
    (world.project / "README.md").write_text("# app\n")
    scripts = Path(sysconfig.get_path("scripts"))
    if not (scripts / "uvx").exists():
        pytest.fail("uvx is missing: `uv` belongs in the test extras")
    uv_bin = world.root / "uv-bin"
    uv_bin.mkdir()
    for name in ("uv", "uvx"):
        (uv_bin / name).symlink_to(scripts / name)
    path = ":".join(
        [str(uv_bin)]
        + [d for d in world.env["PATH"].split(":") if not shutil.which("offprompt", path=d)]
    )
    env = {**world.env, "PATH": path, "CODEX_HOME": str(world.codex_home)}
    command = f"uvx --from {source} offprompt serve"
    argv = [
        str(scripts / "python"), "-m", "offprompt", "init", "--agent", agent, "--shared",
        "--command", command,
    ]  # fmt: skip
    done = run(argv, env, world.project, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    assert shutil.which("offprompt", path=path) is None
    return env


SOURCES = ["fails-at-once", "never-answers"]


def source_for(kind: str, silent: int) -> str:
    port = closed_port() if kind == "fails-at-once" else silent
    return f"git+http://127.0.0.1:{port}/team/offprompt.git"


@pytest.mark.parametrize("kind", SOURCES)
def test_codex_teammate_whose_source_cannot_be_fetched(
    make_world: MakeWorld, canary: str, silent: int, kind: str
) -> None:
    """Codex: `ls` runs, `cat .env` is blocked naming SOURCE, each hook answered well within
    Codex's 30 s (past it Codex would have run `cat .env`)."""
    world, model = make(make_world, "openai")
    model.calls = [("exec_command", {"cmd": "ls"}), ("exec_command", {"cmd": "cat .env"})]
    source = source_for(kind, silent)
    env = teammate_project(world, "codex", source)

    start = time.monotonic()
    out = codex_run(world, env)
    took = time.monotonic() - start

    listing, cat = model.outputs()
    print("RESULTS", json.dumps([listing, cat], indent=1), f"{took:.1f}s")
    assert "README.md" in listing
    assert fetched(source) in cat
    assert_kept_out(world, out)
    assert took < 2 * (hook_wrapper.DEADLINE + 5) + 30


@pytest.mark.parametrize("kind", SOURCES)
def test_claude_code_teammate_whose_source_cannot_be_fetched(
    make_world: MakeWorld, canary: str, silent: int, kind: str
) -> None:
    """Claude Code: `ls` runs, `cat .env` is blocked with the line naming SOURCE (not its own
    timeout), and the value reaches no request to the model."""
    world, model = make(make_world, "anthropic")
    model.calls = [
        ("Bash", {"command": "ls", "description": "List"}),
        ("Bash", {"command": "cat .env", "description": "Show the env file"}),
    ]
    source = source_for(kind, silent)
    env = teammate_project(world, "claude-code", source)

    out = claude_run(world, env)

    listing, cat = model.outputs()
    print("RESULTS", json.dumps([listing, cat], indent=1))
    assert "README.md" in listing
    assert cat.rstrip().endswith(fetched(source))
    assert_kept_out(world, out)
