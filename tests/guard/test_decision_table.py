"""The guard's decision table (offprompt/guard/decide.py): every row is taken by an event of its
tool and decides as its tool's tests say, and a tool the table does not name takes the default."""

import os
from collections.abc import Mapping
from pathlib import Path

import pytest
from test_guard import claude_event, written_project

from offprompt.guard import decide, disk
from offprompt.guard.check import Check
from offprompt.guard.protected import Protected

# One event's input per row of decide.tools(), and what the guard says of it in the project of
# test_guard.written_project (a written .env, the journal's config/service.json): the protected
# file it would expose, or None. `{p}` is the project's folder.
PATCH = "*** Begin Patch\n*** Update File: .env\n@@\n-A=1\n+A=2\n*** End Patch\n"
ROWS: dict[str, tuple[dict[str, object], str | None]] = {
    # Claude Code
    "Bash": ({"command": "cat .env"}, ".env"),
    "Read": ({"file_path": "{p}/.env"}, ".env"),
    "Edit": ({"file_path": ".env", "old_string": "A=1", "new_string": "A=2"}, ".env"),
    "Write": ({"file_path": ".env.local", "content": "A=1\n"}, ".env.local"),
    "MultiEdit": (
        {"file_path": "config/service.json", "edits": [{"old_string": "a", "new_string": "b"}]},
        "config/service.json",
    ),
    "NotebookEdit": ({"notebook_path": ".env", "new_source": "x"}, ".env"),
    "Grep": ({"pattern": "KEY", "path": ".env"}, ".env"),
    "Glob": ({"pattern": "**/.env*"}, None),
    "LS": ({"path": "{p}"}, None),
    "WebFetch": ({"url": "file://.env", "prompt": "summarise"}, ".env"),
    "TodoWrite": ({"todos": [{"content": "never read .env", "status": "pending"}]}, None),
    "WebSearch": ({"query": "cat .env"}, None),
    "AskUserQuestion": ({"questions": [{"question": "Read .env?", "options": []}]}, None),
    "ExitPlanMode": ({"plan": "1. cat .env"}, None),
    "Task": ({"prompt": "check whether the .env file has the keys", "description": "x"}, None),
    # Codex
    "shell": ({"command": ["bash", "-lc", "cat .env"]}, ".env"),
    "local_shell": ({"command": ["cat", "config/service.json"]}, "config/service.json"),
    "exec_command": ({"cmd": "head -1 .env"}, ".env"),
    "unified_exec": ({"command": "ls -la"}, None),
    "apply_patch": ({"input": PATCH}, ".env"),
    "update_plan": ({"plan": [{"step": "cat .env", "status": "pending"}]}, None),
    "web_search": ({"query": ".env"}, None),
    # Gemini CLI
    "run_shell_command": ({"command": "cat ../.env", "dir_path": "src"}, ".env"),
    "read_file": ({"file_path": "{p}/config/service.json"}, "{p}/config/service.json"),
    "read_many_files": ({"paths": ["config/*.json"]}, "config/*.json"),
    "glob": ({"pattern": ".env*"}, None),
    "list_directory": ({"dir_path": "."}, None),
    "grep_search": ({"pattern": "OPENAI", "dir_path": "."}, ".env"),
    # VS Code
    "run_in_terminal": ({"command": "source .env && echo $OPENAI_API_KEY"}, ".env"),
    "file_search": ({"query": "**/.env*"}, None),
}
# offprompt's own tools, in every spelling the hosts use: never read, never blocked.
OWN = [
    f"{prefix}offprompt{sep}{tool}"
    for prefix in ("", "mcp__")
    for sep in ("__", ".", "/", ":")
    for tool in ("collect_secret", "await_secret", "cancel_secret", "secret_status")
]
for name in OWN:
    ROWS[name] = ({"path": ".env", "names": ["OPENAI_API_KEY"]}, None)


@pytest.fixture
def project(tmp_path: Path, canary: str) -> Path:
    return written_project(tmp_path, canary)


def _decide(project: Path, tool: str, tool_input: dict[str, object]) -> str | None:
    filled = {k: _fill(v, project) for k, v in tool_input.items()}
    event = claude_event(project)(tool, filled)
    protected = Protected(disk.journal_files(os.environ))
    return decide.decide(event, protected, str(project.parent / "home"))


def _fill(value: object, project: Path) -> object:
    if isinstance(value, str):
        return value.replace("{p}", str(project))
    if isinstance(value, list):
        return [_fill(v, project) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, project) for k, v in value.items()}
    return value


def test_every_row_of_the_table_has_an_event() -> None:
    """Each tool the table names has its event here, and each event here is a row's."""
    assert sorted(decide.tools()) == sorted(ROWS)


@pytest.mark.parametrize("tool", sorted(ROWS))
def test_a_row_decides_as_its_tool_should(project: Path, tool: str, canary: str) -> None:
    """The event of each row is decided as that tool's reading of its input says."""
    tool_input, expected = ROWS[tool]
    exposed = _fill(expected, project)

    assert exposed == _decide(project, tool, tool_input)
    assert canary not in str(exposed)


@pytest.mark.parametrize("tool", sorted(t for t, r in decide.tools().items() if r is not None))
def test_an_event_takes_the_row_of_its_tool(
    project: Path, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reader that reads an event's input is its tool's row, given the event's input."""
    row = decide.tools()[tool]
    assert row is not None
    seen: list[Mapping[str, object]] = []

    def spy(check: Check, tool_input: Mapping[str, object]) -> str | None:
        seen.append(tool_input)
        return row(check, tool_input)

    monkeypatch.setitem(decide.tools(), tool, spy)
    tool_input, expected = ROWS[tool]

    assert _fill(expected, project) == _decide(project, tool, tool_input)
    assert [_fill(tool_input, project)] == seen


@pytest.mark.parametrize("tool", OWN)
def test_offprompt_s_own_tools_are_let_through_unread(
    project: Path, tool: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """offprompt's own tools have no reader: nothing of their input is read, not even the
    shell's `command` (DESIGN §14: never blocked)."""
    monkeypatch.setattr(decide, "DEFAULT", _never)

    assert decide.tools()[tool] is None
    assert None is _decide(project, tool, {"command": "cat .env", "path": ".env"})


def _never(check: Check, tool_input: Mapping[str, object]) -> str | None:
    raise AssertionError("read")


@pytest.mark.parametrize(
    ("tool", "tool_input", "expected"),
    [
        ("SomeFutureTool", {"file": ".env"}, ".env"),
        ("SomeFutureTool", {"notes": "mentions .env in passing"}, None),
        ("mcp__fs__read_file", {"path": "{p}/config/service.json"}, "{p}/config/service.json"),
        ("mcp:run", {"command": "cat .env"}, ".env"),
        ("read", {"path": "README.md"}, None),
    ],
)
def test_an_unknown_tool_takes_the_default_row(
    project: Path,
    tool: str,
    tool_input: dict[str, object],
    expected: str | None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A tool the table does not name (a new host's, another MCP server's) is read by DEFAULT:
    a command as a shell's, else any string of its input that names a protected file."""
    assert tool not in decide.tools()
    assert decide.DEFAULT is decide.reader(tool)
    seen: list[str] = []
    default = decide.DEFAULT

    def spy(check: Check, given: Mapping[str, object]) -> str | None:
        seen.append(tool)
        return default(check, given)

    monkeypatch.setattr(decide, "DEFAULT", spy)

    assert _fill(expected, project) == _decide(project, tool, tool_input)
    assert [tool] == seen
