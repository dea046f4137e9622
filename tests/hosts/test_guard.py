"""The guard as `offprompt init` installs it, run by the real hosts (DESIGN §14): Claude Code
2.1.328 (`claude -p`) and Codex 0.169.0 (`codex exec`) with a scripted model that asks the
host's own tools for `.env`; the value never reaches the model, the guard's reason does, and
an everyday command still passes."""

from __future__ import annotations

import json
import shlex
from typing import Any

from helpers import tool_or_skip

from .conftest import MakeWorld
from .harness import PY, ROOT, World, run
from .model import ToolScript

KEY = "STRIPE_SECRET_KEY"
README = "guard-readme-marker-7f3a"
BLOCKED = "offprompt guard: blocked: this would expose .env,"
# What Claude Code answers a Read its `permissions.deny` rules (from `offprompt init`) refuse.
DENIED = "denied by your permission settings"
# Codex runs a hook only once the person trusted its exact definition (the /hooks screen, kept
# as `[hooks.state]` in CODEX_HOME/config.toml); without it, measured here, `cat .env` ran and
# the value reached the model. The run stands in for that person with Codex's own flag.
TRUST = ["--dangerously-bypass-hook-trust"]
Calls = list[tuple[str, dict[str, Any]]]


def guarded_project(world: World, agent: str) -> dict[str, str]:
    """The project with a `.env` offprompt wrote earlier and a README; `offprompt` on PATH
    running the tree under test; `offprompt init --agent AGENT` run there for real. Returns
    the environment with that PATH."""
    (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    bin_dir = world.root / "bin"
    offprompt = bin_dir / "offprompt"
    offprompt.write_text(f'#!/bin/sh\nexec {shlex.quote(PY)} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    env = {**world.env, "PATH": f"{bin_dir}:{world.env['PATH']}", "PYTHONPATH": str(ROOT)}
    # --command: the hook then runs this tree's offprompt, not whichever one is installed.
    argv = ["offprompt", "init", "--agent", agent, "--command", f"{offprompt} serve"]
    done = run(argv, env, world.project, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return env


def make(make_world: MakeWorld, kind: str) -> tuple[World, ToolScript]:
    """A run whose model calls `model.calls` (set once the project's path is known)."""
    model = ToolScript(kind, [])
    return make_world(kind, model=model), model


def assert_kept_out(world: World, host_out: str) -> None:
    assert world.canary.encode() not in world.model.raw()
    assert world.canary not in host_out
    assert (world.project / ".env").read_text() == f"{KEY}={world.canary}\n"


# -- Claude Code -----------------------------------------------------------------------------

CLAUDE_ATTEMPTS: Calls = [
    ("Read", {"file_path": ".env"}),
    ("Grep", {"pattern": KEY, "path": ".env", "output_mode": "content"}),
    ("Bash", {"command": "cat .env", "description": "Show the env file"}),
]


def claude_run(world: World, env: dict[str, str]) -> str:
    claude = tool_or_skip("claude")
    host_env, config = world.claude()
    host_env = {**host_env, "PATH": env["PATH"]}
    argv = [
        claude,
        "-p",
        "Check the project's keys.",
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--allowedTools",
        "Read,Grep,Bash",
    ]
    done = run(argv, host_env, world.project, timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_claude_code_runs_the_installed_guard(make_world: MakeWorld, canary: str) -> None:
    """`claude -p` with the guard `offprompt init` installed: the Read of `.env` is refused by
    the deny rules, Grep and `cat .env` by the hook with the guard's reason; the value is in
    no request to the model."""
    world, model = make(make_world, "anthropic")
    # Claude Code's file tools take absolute paths.
    model.calls = [
        (name, {k: str(world.project / v) if v == ".env" else v for k, v in args.items()})
        for name, args in CLAUDE_ATTEMPTS
    ]
    env = guarded_project(world, "claude-code")
    out = claude_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    read, grep, cat = results
    assert DENIED in read
    assert f"PreToolUse:Grep hook error: [{world.root}/bin/offprompt guard]: {BLOCKED}" in grep
    assert f"PreToolUse:Bash hook error: [{world.root}/bin/offprompt guard]: {BLOCKED}" in cat
    assert_kept_out(world, out)


def test_claude_code_lets_everyday_commands_through(make_world: MakeWorld, canary: str) -> None:
    """The control: with the same guard, `cat README.md` runs and its output reaches the
    model."""
    world, model = make(make_world, "anthropic")
    model.calls = [("Bash", {"command": "cat README.md", "description": "Read the readme"})]
    env = guarded_project(world, "claude-code")
    out = claude_run(world, env)
    (result,) = model.outputs()
    assert README in result
    assert BLOCKED not in result
    assert_kept_out(world, out)


# -- Codex -----------------------------------------------------------------------------------


def codex_run(world: World, env: dict[str, str]) -> str:
    codex = tool_or_skip("codex")
    host_env = {**world.codex(), "PATH": env["PATH"]}
    argv = [codex, "exec", "--skip-git-repo-check", *TRUST, "Check."]
    done = run(argv, host_env, world.project, timeout=90)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_codex_runs_the_installed_guard(make_world: MakeWorld, canary: str) -> None:
    """`codex exec` with the hook `offprompt init` put in .codex/hooks.json: the shell tool's
    `cat .env` is blocked with the guard's reason; the value is in no request to the model."""
    world, model = make(make_world, "openai")
    model.calls = [("exec_command", {"cmd": "cat .env"})]
    env = guarded_project(world, "codex")
    out = codex_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    (result,) = results
    assert BLOCKED in result
    assert "offprompt keys .env" in result
    assert_kept_out(world, out)


def test_codex_lets_everyday_commands_through(make_world: MakeWorld, canary: str) -> None:
    """The control: with the same hook, `cat README.md` runs and its output reaches the model."""
    world, model = make(make_world, "openai")
    model.calls = [("exec_command", {"cmd": "cat README.md"})]
    env = guarded_project(world, "codex")
    out = codex_run(world, env)
    (result,) = model.outputs()
    assert README in result
    assert BLOCKED not in result
    assert_kept_out(world, out)
