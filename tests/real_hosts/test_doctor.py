"""What `offprompt agents` says a host waits for is what the real host decides: Claude Code
2.1.328's approval of the project's `.mcp.json` server (`claude mcp list`) and Codex 0.171.0's
trust of the guard's hook and of the folder (its app-server's `hooks/list`), for the same
files in a temporary HOME."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers import tool_or_skip

from offprompt.agents import Machine, ServerCommand, get, guard_install
from offprompt.agents.codex import codex_hook_hash
from offprompt.agents.doctor import AgentReport, examine
from offprompt.agents.host_waits import Hook

pytestmark = pytest.mark.real_hosts

TRUSTED = {"hasTrustDialogAccepted": True}
ENABLED = {"enabledMcpjsonServers": ["offprompt"]}
ALL = {"enableAllProjectMcpServers": True}
DISABLED = {"disabledMcpjsonServers": ["offprompt"]}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, dict[str, str], ServerCommand]:
    """A HOME, a project (a git work tree, as most are), the environment, and the command of
    an `offprompt` that answers `--version`, outside the project."""
    home, project, bin_dir = tmp_path / "home", tmp_path / "project", tmp_path / "bin"
    for folder in (home, project / ".git", bin_dir):
        folder.mkdir(parents=True)
    program = bin_dir / "offprompt"
    program.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "offprompt, version 1" && exit 0\n'
                       "exit 64\n")  # fmt: skip
    program.chmod(0o755)
    env = {"HOME": str(home), "PATH": f"{bin_dir}:/usr/bin:/bin", "LANG": "C.UTF-8"}
    return home, project, env, ServerCommand(str(program), ("serve",))


def report(name: str, home: Path, project: Path, env: dict[str, str]) -> AgentReport:
    machine = Machine(home=home, environ=env, platform="linux")
    (found,) = examine([get(name)], machine, project)
    return found


def declare(
    name: str, home: Path, project: Path, env: dict[str, str], server: ServerCommand
) -> None:
    """What `offprompt init --agent NAME` writes in the project, server and guard."""
    machine = Machine(home=home, environ=env, platform="linux")
    agent = get(name)
    assert not agent.install("project", machine, project, server).failed
    assert not guard_install.install_guard(agent, "project", machine, project, server).failed


# -- Claude Code ---------------------------------------------------------------------------------

CLAUDE = [
    ("nothing recorded", None, {}),
    ("trusted, not approved", TRUSTED, {}),
    ("approved in settings.local.json", TRUSTED, {"local": ENABLED}),
    ("approved for all in .claude/settings.json", TRUSTED, {"project": ALL}),
    ("legacy approval", {**TRUSTED, **ENABLED}, {}),
    ("user settings approve untrusted", None, {"user": ENABLED}),
    ("local approval without trust", None, {"local": ENABLED}),
    ("project approval without trust", None, {"project": ENABLED}),
    ("declined locally", TRUSTED, {"local": {**DISABLED, **ENABLED}}),
    ("declined in ~/.claude.json", {**TRUSTED, **DISABLED}, {"user": ALL}),
]


@pytest.mark.parametrize(("entry", "files"), [c[1:] for c in CLAUDE], ids=[c[0] for c in CLAUDE])
def test_claude_code_approval_is_what_claude_mcp_list_says(
    world: tuple[Path, Path, dict[str, str], ServerCommand],
    entry: dict[str, Any] | None,
    files: dict[str, Any],
) -> None:
    """Pending approval ↔ the doctor's approval wait; not listed (declined) ↔ blocked."""
    claude = tool_or_skip("claude")
    home, project, env, server = world
    declare("claude-code", home, project, env, server)
    seed: dict[str, Any] = {"hasCompletedOnboarding": True}
    if entry is not None:
        seed["projects"] = {str(project): entry}
    (home / ".claude.json").write_text(json.dumps(seed))
    places = {
        "user": home / ".claude" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }
    for where, content in files.items():
        places[where].parent.mkdir(parents=True, exist_ok=True)
        old = json.loads(places[where].read_text()) if places[where].exists() else {}
        places[where].write_text(json.dumps({**old, **content}))

    found = report("claude-code", home, project, env)
    listed = subprocess.run(
        [claude, "mcp", "list"], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    line = next((s for s in listed.stdout.splitlines() if s.startswith("offprompt:")), None)

    (server_finding,) = found.servers
    host = "declined" if line is None else "pending" if "Pending approval" in line else "approved"
    ours = (
        "declined"
        if server_finding.blocked is not None
        else "pending"
        if any(w.kind == "approval" for w in server_finding.waits)
        else "approved"
    )
    assert host == ours, listed.stdout + listed.stderr


# -- Codex -----------------------------------------------------------------------------------------


def hooks_list(codex: str, project: Path, env: dict[str, str]) -> list[dict[str, Any]]:
    """Codex's own view of the project's hooks: its app-server's `hooks/list`."""
    proc = subprocess.Popen(
        [codex, "app-server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=project,
        env=env,
        text=True,
        start_new_session=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:

        def call(id_: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
            assert proc.stdin is not None
            assert proc.stdout is not None
            proc.stdin.write(json.dumps({"id": id_, "method": method, "params": params}) + "\n")
            proc.stdin.flush()
            while True:
                line = proc.stdout.readline()
                assert line, "codex app-server closed its output"
                message = json.loads(line)
                if message.get("id") == id_:
                    result: dict[str, Any] = message["result"]
                    return result

        call(1, "initialize", {"clientInfo": {"name": "offprompt-tests", "version": "1"}})
        proc.stdin.write(json.dumps({"method": "initialized"}) + "\n")
        proc.stdin.flush()
        listed = call(2, "hooks/list", {"cwds": [str(project)]})
        return [hook for entry in listed["data"] for hook in entry["hooks"]]
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=5)
        proc.stdout.close()


@pytest.mark.parametrize("record", ["none", "trusted", "changed", "off", "folder untrusted"])
def test_codex_hook_trust_is_what_codex_reports(
    world: tuple[Path, Path, dict[str, str], ServerCommand], record: str
) -> None:
    """untrusted / trusted / modified / disabled, and a folder Codex ignores, as Codex sees them."""
    codex = tool_or_skip("codex")
    home, project, env, server = world
    env = {**env, "CODEX_HOME": str(home / ".codex")}
    (home / ".codex").mkdir()
    declare("codex", home, project, env, server)
    hooks_file = project / ".codex" / "hooks.json"
    group = json.loads(hooks_file.read_text())["hooks"]["PreToolUse"][0]
    digest = codex_hook_hash(
        Hook(hooks_file, "PreToolUse", 0, 0, group, group["hooks"][0]["command"])
    )
    key = f"{hooks_file}:pre_tool_use:0:0"
    state = {
        "none": "",
        "trusted": f'trusted_hash = "{digest}"',
        "changed": 'trusted_hash = "sha256:0000"',
        "off": f'trusted_hash = "{digest}"\nenabled = false',
        "folder untrusted": "",
    }[record]
    trust = "" if record == "folder untrusted" else (
        f'[projects.{json.dumps(str(project))}]\ntrust_level = "trusted"\n'
    )  # fmt: skip
    config = trust + (f'[hooks.state."{key}"]\n{state}\n' if state else "")
    (home / ".codex" / "config.toml").write_text(config)

    found = report("codex", home, project, env)
    seen = hooks_list(codex, project, env)

    (guard,) = found.guards
    if record == "folder untrusted":
        assert [] == seen  # Codex does not even read the project's hooks
        assert "folder-trust" in [w.kind for w in guard.waits]
        return
    (hook,) = seen
    assert (key, digest) == (hook["key"], hook["currentHash"])
    ours = (
        "disabled"
        if guard.blocked is not None
        else "modified"
        if any("changed since" in w.detail for w in guard.waits)
        else "untrusted"
        if guard.waits
        else "trusted"
    )
    host = "disabled" if not hook["enabled"] else hook["trustStatus"]
    assert host == ours


# -- Gemini CLI ------------------------------------------------------------------------------------

GEMINI = [
    ("no rule", {}, {}),
    ("the folder trusted", {"{p}": "TRUST_FOLDER"}, {}),
    ("a parent trusted", {"{up}": "TRUST_FOLDER"}, {}),
    ("trusted as the parent of a sibling", {"{up}/other": "TRUST_PARENT"}, {}),
    ("the folder declined", {"{p}": "DO_NOT_TRUST"}, {}),
    ("the longest rule wins", {"{up}": "TRUST_FOLDER", "{p}": "DO_NOT_TRUST"}, {}),
    ("the longest rule wins the other way", {"{up}": "DO_NOT_TRUST", "{p}": "TRUST_FOLDER"}, {}),
    ("folder trust off", {}, {"security": {"folderTrust": {"enabled": False}}}),
]


@pytest.mark.parametrize(("rules", "settings"), [c[1:] for c in GEMINI], ids=[c[0] for c in GEMINI])
def test_gemini_folder_trust_is_what_gemini_mcp_list_says(
    world: tuple[Path, Path, dict[str, str], ServerCommand],
    rules: dict[str, str],
    settings: dict[str, Any],
) -> None:
    """Disabled in `gemini mcp list` (on stderr; an untrusted folder) ↔ the doctor's wait or
    decline."""
    gemini, node = tool_or_skip("gemini"), tool_or_skip("node24")
    home, project, env, server = world
    env = {**env, "PATH": f"{Path(node).parent}:{env['PATH']}", "GEMINI_API_KEY": "dummy"}
    machine = Machine(home=home, environ=env, platform="linux")
    assert not get("gemini").install("user", machine, project, server).failed
    user = home / ".gemini" / "settings.json"
    auth = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    merged = {**json.loads(user.read_text()), **auth}
    merged["security"] = {**auth["security"], **settings.get("security", {})}
    user.write_text(json.dumps(merged))
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({k.format(p=project, up=project.parent): v for k, v in rules.items()})
    )

    found = report("gemini", home, project, env)
    listed = subprocess.run(
        [gemini, "mcp", "list"], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )
    lines = [s for s in (listed.stdout + listed.stderr).splitlines() if "offprompt:" in s]
    assert len(lines) == 1, listed.stdout + listed.stderr
    line = lines[0]

    (server_finding,) = found.servers
    ours = server_finding.blocked is None and not server_finding.waits
    assert ("Disabled" not in line) == ours, listed.stdout + listed.stderr
