"""What "masked" means per session (DESIGN §15, issue 43), in real Claude Code 2.1.332 driven by a
scripted model, with the guard `offprompt init` installs: the guard leaves a read to the mask
only in a session that runs in the masked project's sandbox. A session started above the masked
project, one whose command line turns the sandbox off, one whose sandbox lets commands reach a
daemon's Unix socket, and a hard link the mask's path does not cover each get the guard's block,
never the value; the everyday calls of a masked project still run."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers import tool_or_skip

from offprompt.collect.parts import mask_keeper
from offprompt.errors import WriteError
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore
from offprompt.write.journal import Journal
from offprompt.write.submit import Submitter

from .conftest import MakeWorld
from .harness import PY, World, run
from .mask_routes import KEY, STAND_IN, Route
from .test_mask import Watched, assert_kept_out, bash, claude_run, mask, sandbox_or_skip

pytestmark = pytest.mark.real_hosts

BLOCKED = "offprompt guard: blocked"


def wrapper(world: World) -> str:
    """The `offprompt` the guard's hook runs: outside the project (init --mask refuses one the
    sandbox may write)."""
    offprompt = world.root / "bin" / "offprompt"
    offprompt.parent.mkdir(exist_ok=True)
    offprompt.write_text(f'#!/bin/sh\nexec {PY} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    return str(offprompt)


def guarded_mask(make_world: MakeWorld, before: str = "") -> tuple[World, Watched]:
    """A project whose `.env` offprompt wrote the canary key into (after `before`), masked by
    `init --mask` with the guard."""
    sandbox_or_skip()
    model = Watched()
    world = make_world("anthropic", model=model)
    model.project = world.project
    model.written = mask(world, before, guard=wrapper(world))
    return world, model


def results(world: World, model: Watched, calls: int) -> list[str]:
    out = model.outputs()
    print("RESULTS", json.dumps(out, indent=1).replace(world.canary, "<canary>"))
    assert calls == len(out)
    return out


# -- 1. a session started above the masked project --------------------------------------------


async def _write(project: Path, state: Path, values: dict[str, str], sink: SinkSpec) -> None:
    store = RequestStore()
    secrets = tuple(SecretSpec(n) for n in values)
    request = store.create(secrets, sink, project, "the app", ttl=60)
    await Submitter(store, Journal(state / "journal.jsonl"), mask=mask_keeper()).submit(
        request, values
    )


def test_a_session_started_above_a_masked_subfolder_gets_no_value(
    make_world: MakeWorld, canary: str
) -> None:
    """A monorepo: the guard alone at its root, `init --mask` in `apps/web` (a dotenv sink and a
    file sink under its `config/`). A session started at the root reads only the root's
    settings, so its sandbox is off: after `cd apps/web`, `cat` of either file is blocked by the
    guard (it showed the real values when the guard asked only where the command ran)."""
    sandbox_or_skip()
    model = Watched()
    world = make_world("anthropic", model=model)
    web = world.project / "apps" / "web"
    (web / "config").mkdir(parents=True)
    offprompt = wrapper(world)
    values = {KEY: f"sk-proj-{canary}"}
    asyncio.run(_write(web, world.state, values, SinkSpec(path="config/app.env")))
    token = {"SERVICE_TOKEN": f"tok-{canary}"}
    asyncio.run(_write(web, world.state, token, SinkSpec(kind="file", path="config/token.txt")))
    for project, flags in ((world.project, []), (web, ["--mask"])):
        argv = [PY, "-m", "offprompt", "init", "--agent", "claude-code", *flags]
        argv += ["--project", str(project), "--command", f"{offprompt} serve"]
        done = run(argv, world.env, project, timeout=60)
        assert done.returncode == 0, done.stdout + done.stderr
    model.calls = [
        bash(Route("cd apps/web && pwd")),
        bash(Route("cat config/app.env")),
        bash(Route("cat config/token.txt")),
    ]
    out = claude_run(world, "--allowedTools", "Bash")

    moved, env, token_file = results(world, model, 3)
    assert moved.strip().endswith("apps/web")
    assert BLOCKED in env
    assert BLOCKED in token_file
    assert canary.encode() not in model.raw()
    assert canary not in out


# -- 4. the command line's own settings -----------------------------------------------------------


def test_settings_on_the_command_line_that_turn_the_sandbox_off_keep_the_guard(
    make_world: MakeWorld, canary: str
) -> None:
    """`claude -p --settings '{"sandbox":{"enabled":false}}'` outranks the project's local
    settings and runs every command unsandboxed: the guard reads the running Claude Code's
    own command line and blocks `cat .env` (it showed the real value when the guard read the
    settings files alone)."""
    world, model = guarded_mask(make_world)
    model.calls = [bash(Route("cat .env")), bash(Route(f"source .env && echo ${KEY}"))]
    off = json.dumps({"sandbox": {"enabled": False}})
    out = claude_run(world, "--allowedTools", "Bash", "--settings", off)

    assert [] == [r for r in results(world, model, 2) if BLOCKED not in r]
    assert_kept_out(world, model, out)


# -- 3. a daemon outside the sandbox ---------------------------------------------------------------

# A stand-in for a container client (docker): it hands the host path of `-v SRC:DST` to the daemon
# behind $DOCKER_HOST and prints what the daemon answers, as `docker run -v SRC:/e alpine cat /e`
# prints the file the daemon mounted.
CLIENT = """import os, socket, sys
args = sys.argv[1:]
source = next((a.split(":")[0] for p, a in zip(args, args[1:]) if p == "-v"), None)
if source is None:
    print("client ran:", " ".join(args))
    sys.exit(0)
with socket.socket(socket.AF_UNIX) as s:
    s.connect(os.environ["DOCKER_HOST"].removeprefix("unix://"))
    s.sendall(os.path.abspath(source).encode() + b"\\n")
    print(s.makefile().read(), end="")
"""


@contextmanager
def daemon(path: Path) -> Iterator[list[str]]:
    """A daemon on the Unix socket `path`, outside any sandbox, that opens each path a client
    sends and answers with its bytes (what a container daemon does with `-v`); yields the paths
    it was asked for."""
    asked: list[str] = []
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                wanted = conn.makefile().readline().strip()
                asked.append(wanted)
                try:
                    conn.sendall(Path(wanted).read_bytes())
                except OSError as e:
                    conn.sendall(f"daemon: {e.strerror}\n".encode())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield asked
    finally:
        stop.set()
        thread.join(5)
        server.close()


def client_on_path(world: World) -> dict[str, str]:
    folder = world.root / "client"
    folder.mkdir()
    (folder / "docker").write_text(f"#!{PY}\n{CLIENT}")
    (folder / "docker").chmod(0o755)
    return {"PATH": f"{folder}:{world.env['PATH']}"}


def test_a_client_handing_a_masked_file_to_a_daemon_is_blocked(
    make_world: MakeWorld, canary: str
) -> None:
    """With `sandbox.network.allowAllUnixSockets: true` (what docker users set), a container
    client in the sandbox reaches its daemon, which runs outside the sandbox and opens the real
    file: `docker run -v ./.env:/e alpine cat /e` is blocked by the guard before it runs. No
    container engine runs here: `docker` is a small stand-in client on PATH talking to a
    stand-in daemon on a Unix socket outside the sandbox; what is proven is the guard's decision
    from the command and the settings (the unchanged guard left the read to the mask, and the
    stand-in daemon returned the real value)."""
    world, model = guarded_mask(make_world)
    path = world.home / ".claude" / "settings.json"
    settings = json.loads(path.read_text())
    settings["sandbox"]["network"]["allowAllUnixSockets"] = True
    path.write_text(json.dumps(settings, indent=2) + "\n")
    sock = world.root / "d.sock"
    env = {**client_on_path(world), "DOCKER_HOST": f"unix://{sock}"}
    model.calls = [
        bash(Route("docker run --rm -v ./.env:/e alpine cat /e")),
        bash(Route("node --env-file=.env -e 0; echo ran")),
    ]
    with daemon(sock) as asked:
        out = claude_run(world, "--allowedTools", "Bash", env=env)

    handed, plain = results(world, model, 2)
    print("DAEMON ASKED FOR", asked)
    assert BLOCKED in handed
    assert BLOCKED in plain  # any command may reach the socket: nothing is left to the mask
    assert asked == []
    assert_kept_out(world, model, out)


# -- 5. a hard link the mask's path does not cover -----------------------------------------------


def test_a_hard_link_to_a_masked_file_is_blocked_under_its_other_name(
    make_world: MakeWorld, canary: str
) -> None:
    """`build/cache.txt` is a hard link to the masked `.env` (made here from outside, as a job
    started in a sandbox before `.env` existed made it: such a sandbox had no mask over a file
    that was not there). The sandbox masks the path `.env`, not the inode, so the link reads
    the real value: the guard blocks Claude Code's Read and a sandboxed `cat` of it by device
    and inode, and so a Grep and a `grep -r` of its folder; the next write of `.env` is
    refused, saying how to mend it."""
    world, model = guarded_mask(make_world)
    (world.project / "build").mkdir()
    os.link(world.project / ".env", world.project / "build" / "cache.txt")
    model.calls = [
        ("Read", {"file_path": str(world.project / "build" / "cache.txt")}),
        bash(Route("cat build/cache.txt")),
        (
            "Grep",
            {"pattern": "sk-", "path": str(world.project / "build"), "output_mode": "content"},
        ),
        bash(Route("grep -r sk- build")),
        bash(Route("cat .env")),
    ]
    out = claude_run(world, "--allowedTools", "Bash,Read,Grep")

    read, linked, searched, grepped, masked = results(world, model, 5)
    assert BLOCKED in read
    assert BLOCKED in linked
    assert BLOCKED in searched
    assert BLOCKED in grepped
    assert STAND_IN in masked
    assert_kept_out(world, model, out)
    store = RequestStore()
    request = store.create((SecretSpec(KEY),), SinkSpec(), world.project, "the app", ttl=60)
    submit = Submitter(store, Journal(world.state / "journal.jsonl"), mask=mask_keeper())
    with pytest.raises(WriteError, match=re.escape("find . -samefile")):
        asyncio.run(submit.submit(request, {KEY: f"sk-proj-{canary}-2"}))


# -- 7. everyday calls in a masked project --------------------------------------------------------

COMPOSE = "services:\n  app:\n    image: alpine\n    env_file: .env\n"
PACKAGE = {
    "name": "app",
    "version": "1.0.0",
    "scripts": {"start": "node -e \"console.log('started')\""},
}


def test_everyday_calls_in_a_masked_project_run(make_world: MakeWorld, canary: str) -> None:
    """In a masked project with the guard, the calls the project is masked for run: node with
    `--env-file=.env`, `source .env && npm start`, `docker compose up` of a compose file with
    `env_file: .env` (a stand-in client: no container engine here), and `git status`; none is
    blocked, and node sees the stand-in."""
    world, model = guarded_mask(make_world)
    subprocess.run(["git", "init", "-q"], cwd=world.project, check=True)
    (world.project / "compose.yaml").write_text(COMPOSE)
    (world.project / "package.json").write_text(json.dumps(PACKAGE))
    node = Path(tool_or_skip("node22")).parent
    env = client_on_path(world)
    env["PATH"] = f"{node}:{env['PATH']}"
    started = "process.env.OPENAI_API_KEY.slice(0, 11)"
    model.calls = [
        bash(Route(f"node --env-file=.env -e \"console.log('node ran', {started})\"")),
        bash(Route("source .env && npm start")),
        bash(Route("docker compose up")),
        bash(Route("git status")),
    ]
    out = claude_run(world, "--allowedTools", "Bash", env=env)

    ran = results(world, model, 4)
    assert [] == [r for r in ran if BLOCKED in r]
    assert f"node ran {STAND_IN}" in ran[0]
    assert "client ran: compose up" in ran[2]
    assert "On branch" in ran[3] or "No commits yet" in ran[3]
    assert_kept_out(world, model, out)
