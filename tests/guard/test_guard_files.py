"""Every file an agent host's guard hook is installed in is one the guard keeps a write tool
from changing (DESIGN §14): an Edit that takes the hook out would take the guard away. The
files come from the agents' own declarations (`Agent.guard_file`, each scope), so a host whose
hooks file its facts module (offprompt/hosts/) does not name fails here."""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from offprompt.agents import AGENTS, SCOPES, Machine
from offprompt.guard import hook


def guard_files(home: Path, project: Path) -> Iterator[tuple[str, str, Path]]:
    machine = Machine(home=home, environ=dict(os.environ), platform="linux")
    for agent in AGENTS:
        for scope in SCOPES:
            found = agent.guard_file(scope, machine, None if scope == "user" else project)
            if found is not None and found.path is not None:
                yield agent.name, scope, found.path


def answer(project: Path, tool: str, tool_input: dict[str, object]) -> tuple[int, str]:
    """The guard's exit code and stderr for one of Claude Code's tool events, run here."""
    event = {
        "session_id": "0b8e6f7a-1111-2222-3333-444455556666",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
    }
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = hook.main(stdin=json.dumps(event).encode(), deadline=None)
    return code, err.getvalue()


def test_every_hosts_guard_file_is_kept_from_a_write_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Write and Edit of each agent's hooks file, by its path in the project or in HOME (as
    init writes it, and as `~/…`), are blocked; a file beside it is not."""
    home, project = tmp_path / "home", tmp_path / "project"
    project.mkdir()
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    found = list(guard_files(home, project))
    assert {"claude-code", "codex", "cursor", "gemini", "vscode", "windsurf"} <= {
        name for name, _, _ in found
    }
    let_through: list[str] = []
    for name, scope, path in found:
        shown = f"~/{path.relative_to(home)}" if path.is_relative_to(home) else str(path)
        for text in dict.fromkeys((str(path), shown)):
            for tool, tool_input in (
                ("Write", {"file_path": text, "content": "{}"}),
                ("Edit", {"file_path": text, "old_string": "a", "new_string": "b"}),
            ):
                code, err = answer(project, tool, tool_input)
                if code != 2 or "blocked" not in err:
                    let_through.append(f"{name} {scope}: {tool} {text}")
    assert [] == let_through
    beside = project / "notes.json"
    assert (0, "") == answer(project, "Write", {"file_path": str(beside), "content": "{}"})
