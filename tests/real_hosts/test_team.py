"""A teammate of a `--shared` project whose hook runs offprompt through `uvx --from SOURCE`, and
whose uvx cannot fetch SOURCE (DESIGN §9 "Hooks fail closed"), under real Codex 0.171.0 (`codex
exec`, which runs the call once a hook passes its limit) and real Claude Code (the pinned native
build, `claude -p`) with the scripted model: a SOURCE nobody listens on, and one that accepts and
never answers. `ls` runs (asked where the source fails at once), `cat .env` is blocked with the
line naming SOURCE, and the value reaches no request to the model; the hook answers well before
the host's limit."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import tool_or_skip

from offprompt.agents import hook_wrapper

from .conftest import MakeWorld
from .harness import ROOT, World, run
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


def calls(kind: str, tool: str, ls: dict[str, str]) -> list[tuple[str, dict[str, str]]]:
    """The `ls` that must run, asked where the source fails at once: past the hook's deadline
    (a source that never answers) it takes the same name check, and waiting out the deadline
    for it too would add DEADLINE seconds to each run and prove nothing more."""
    return [(tool, ls)] if kind == "fails-at-once" else []


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
    model.calls = [
        *calls(kind, "exec_command", {"cmd": "ls"}),
        ("exec_command", {"cmd": "cat .env"}),
    ]
    source = source_for(kind, silent)
    env = teammate_project(world, "codex", source)

    start = time.monotonic()
    out = codex_run(world, env)
    took = time.monotonic() - start

    *listing, cat = model.outputs()
    print("RESULTS", json.dumps([*listing, cat], indent=1), f"{took:.1f}s")
    assert ["README.md" in text for text in listing] == [True] * (len(model.calls) - 1)
    assert fetched(source) in cat
    assert_kept_out(world, out)
    assert took < len(model.calls) * (hook_wrapper.DEADLINE + 5) + 30


@pytest.mark.parametrize("kind", SOURCES)
def test_claude_code_teammate_whose_source_cannot_be_fetched(
    make_world: MakeWorld, canary: str, silent: int, kind: str
) -> None:
    """Claude Code: `ls` runs, `cat .env` is blocked with the line naming SOURCE (not its own
    timeout), and the value reaches no request to the model."""
    world, model = make(make_world, "anthropic")
    model.calls = [
        *calls(kind, "Bash", {"command": "ls", "description": "List"}),
        ("Bash", {"command": "cat .env", "description": "Show the env file"}),
    ]
    source = source_for(kind, silent)
    env = teammate_project(world, "claude-code", source)

    out = claude_run(world, env)

    *listing, cat = model.outputs()
    print("RESULTS", json.dumps([*listing, cat], indent=1))
    assert ["README.md" in text for text in listing] == [True] * (len(model.calls) - 1)
    # The line alone, first: no wrapper script before it (the hook's JSON block).
    assert f"PreToolUse:Bash hook error: {fetched(source)}" == cat.rstrip()
    assert_kept_out(world, out)


# -- The team walk -----------------------------------------------------------------------------


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """This checkout's committed offprompt, served by git's dumb HTTP protocol on loopback:
    where the team gets offprompt from (a `git+` source, as `pipx install` takes it)."""
    bare = tmp_path / "served" / "offprompt.git"
    git = shutil.which("git") or "/usr/bin/git"
    subprocess.run([git, "clone", "-q", "--bare", str(ROOT), str(bare)], check=True, timeout=120)
    subprocess.run([git, "-C", str(bare), "update-server-info"], check=True, timeout=60)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(bare.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"git+http://127.0.0.1:{server.server_address[1]}/offprompt.git"
    server.shutdown()
    server.server_close()


def machine_env(home: Path, bin_dir: Path, cache: Path) -> dict[str, str]:
    """One person's machine: its own HOME, state and tools; PATH its bin and the system's."""
    home.mkdir(parents=True, exist_ok=True)
    bin_dir.mkdir(parents=True, exist_ok=True)
    # How this machine reaches a package index (certificates, a mirror): the tools' own
    # settings, which a person's machine has too. The loopback source is never proxied.
    reach = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(("UV_INDEX", "UV_DEFAULT_INDEX", "UV_EXTRA", "UV_FIND", "PIP_", "SSL_"))
        or k in ("REQUESTS_CA_BUNDLE", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")
    }
    pip_conf = Path.home() / ".config" / "pip" / "pip.conf"
    if pip_conf.exists():
        reach.setdefault("PIP_CONFIG_FILE", str(pip_conf))
    return {
        **reach,
        "UV_NATIVE_TLS": "1",
        "NO_PROXY": "127.0.0.1,localhost",
        "PATH": f"{bin_dir}:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "USER": "root",
        "OFFPROMPT_STATE_DIR": str(home / "state"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "PIPX_HOME": str(home / "pipx"),
        "PIPX_BIN_DIR": str(bin_dir),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "UV_CACHE_DIR": str(cache),
        "UV_TOOL_DIR": str(home / "uv-tools"),
        "UV_TOOL_BIN_DIR": str(bin_dir),
        "UV_PYTHON": sys.executable,
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_CONFIG_NOSYSTEM": "1",
    }


def ran(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = 600) -> str:
    done = run(argv, env, cwd, timeout=timeout)
    assert done.returncode == 0, f"{argv}: {done.stdout}{done.stderr}"
    return done.stdout


TEAM_FILES = (".mcp.json", ".claude/settings.json", ".codex/config.toml", ".codex/hooks.json")


def test_the_team_walk(make_world: MakeWorld, canary: str, served: str, tmp_path: Path) -> None:
    """README's "For a team", end to end: the initiator installs offprompt from the team's
    source and runs `init --shared`, commits; a teammate (another HOME, no offprompt) clones,
    and real Claude Code and real Codex block `cat .env` naming `pipx install SOURCE` while `ls`
    runs; the teammate installs from that source with pipx and the real guard decides; the
    initiator's `remove --everywhere` leaves the committed team files untouched."""
    tool_or_skip("claude")
    tool_or_skip("codex")
    cache = tmp_path / "uv-cache"
    # The initiator: offprompt installed from the team's source, then init --shared.
    first = machine_env(tmp_path / "initiator", tmp_path / "initiator" / "bin", cache)
    uv = str(Path(sysconfig.get_path("scripts")) / "uv")
    ran([uv, "tool", "install", "-q", served], first, tmp_path)
    origin = tmp_path / "origin"
    origin.mkdir()
    git = shutil.which("git") or "/usr/bin/git"
    ran([git, "init", "-q"], first, origin)
    (origin / ".gitignore").write_text(".env\n")
    (origin / "README.md").write_text("# app\n")
    said = ran(
        ["offprompt", "init", "--agent", "claude-code", "--agent", "codex", "--shared"],
        first,
        origin,
    )
    assert f"(`pipx install {served}`)" in said
    assert "/hooks" in said
    ran([git, "add", "-A"], first, origin)
    ran([git, "-c", "user.name=a", "-c", "user.email=a@a", "commit", "-qm", "offprompt"],
        first, origin)  # fmt: skip
    committed = {f: (origin / f).read_bytes() for f in TEAM_FILES}

    # The teammate: clones into each host's project, has no offprompt.
    mate = machine_env(tmp_path / "teammate", tmp_path / "teammate" / "bin", cache)
    worlds = []
    for kind, agent in (("anthropic", "claude-code"), ("openai", "codex")):
        world, model = make(make_world, kind)
        ran([git, "clone", "-q", str(origin), str(world.project)], mate, tmp_path)
        (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
        worlds.append((world, model, agent))
    assert shutil.which("offprompt", path=mate["PATH"]) is None

    def first_calls(installed: bool) -> None:
        for world, model, agent in worlds:
            shell = "Bash" if agent == "claude-code" else "exec_command"
            key = "command" if agent == "claude-code" else "cmd"
            extra = {"description": "x"} if agent == "claude-code" else {}
            model.calls = [(shell, {key: "ls", **extra}), (shell, {key: "cat .env", **extra})]
            env = {"PATH": f"{mate['PATH'].split(':')[0]}:{world.env['PATH']}"}
            if not installed:
                env["PATH"] = ":".join(
                    d for d in env["PATH"].split(":") if not shutil.which("offprompt", path=d)
                )
            done = claude_run(world, env) if agent == "claude-code" else codex_run(world, env)
            listing, cat = model.outputs()[-2:]
            print(agent, installed, json.dumps([listing, cat], indent=1))
            assert "README.md" in listing
            # Claude Code shows the hook's command before its reason: the reason is the end.
            why = cat.rstrip().rsplit("offprompt guard]: ", 1)[-1]
            if installed:
                assert "offprompt keys .env" in why
                assert "not installed" not in why
            else:
                assert f"not installed here: install it: pipx install {served}" in why
            assert_kept_out(world, done)

    first_calls(installed=False)
    # The teammate installs from the source the line names.
    ran(["pipx", "install", served], mate, tmp_path)
    assert shutil.which("offprompt", path=mate["PATH"]) is not None
    first_calls(installed=True)

    # The initiator uninstalls everywhere: the team's committed files stay as they are.
    out = ran(["offprompt", "remove", "--everywhere"], first, tmp_path)
    assert "committed team files, not touched" in out
    assert committed == {f: (origin / f).read_bytes() for f in TEAM_FILES}
    assert "" == ran([git, "status", "--porcelain"], first, origin)


def test_codex_lists_the_shared_hook_by_its_name(tmp_path: Path) -> None:
    """Codex's own `hooks/list` (what its /hooks screen shows) gives the shared hook the name
    init wrote, `offprompt guard: …`, not an unnamed `sh` script."""
    from .test_doctor import declare, hooks_list, world

    codex_bin = tool_or_skip("codex")
    home, project, env, server = world.__wrapped__(tmp_path)  # type: ignore[attr-defined]
    env = {**env, "CODEX_HOME": str(home / ".codex")}
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        f'[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n'
    )
    declare("codex", home, project, env, server)

    (hook,) = hooks_list(codex_bin, project, env)

    print("HOOK", json.dumps({k: v for k, v in hook.items() if k != "command"}, indent=1))
    assert hook["statusMessage"].startswith("offprompt guard")
