"""DESIGN §14's lists for tool events, in Claude Code's and Codex's shapes: Grep over a folder
holding a protected file, Write/Edit of the files holding the guard and the mask, other MCP
servers' code, input too large to read whole; and the tools that read no file let through."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_guard import claude_event, codex_event, project, run_guard

import offprompt
from offprompt.guard import hook

__all__ = ["project"]  # the fixture: a .env and a written config/service.json, no git


def code(event: dict[str, object]) -> int:
    """The guard's exit code for `event`, run in this process."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        return hook.main(stdin=json.dumps(event).encode(), deadline=None)


INSTALLED = os.path.join(os.path.dirname(offprompt.__file__), "guard", "decide.py")

BLOCKED = [
    # Grep over a folder that holds a protected file rg would read (no git: nothing ignored).
    ("Grep", {"pattern": "KEY"}),
    ("Grep", {"pattern": "KEY", "path": "."}),
    ("Grep", {"pattern": "KEY", "path": "config"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": "*.json"}),
    # Write or Edit of the files that hold the guard or the mask.
    ("Write", {"file_path": ".claude/settings.local.json", "content": "{}"}),
    ("Edit", {"file_path": ".claude/settings.json", "old_string": "a", "new_string": "b"}),
    ("Write", {"file_path": "~/.claude/settings.json", "content": "{}"}),
    ("MultiEdit", {"file_path": ".codex/hooks.json", "edits": []}),
    ("Write", {"file_path": ".codex/config.toml", "content": ""}),
    ("Edit", {"file_path": INSTALLED, "old_string": "a", "new_string": "b"}),
    # Another MCP server's code or command, read as code.
    ("mcp__jupyter__execute", {"code": "print(open('.env').read())"}),
    ("mcp__db__query", {"sql": "select pg_read_file('config/service.json')"}),
    ("mcp__win__run", {"commandLine": "type .env"}),
    ("mcp__py__run", {"script": "from dotenv import load_dotenv; load_dotenv()"}),
    ("mcp__repl__eval", {"expression": "require('fs').readFileSync('.env', 'utf8')"}),
    # A name search is let through for its names, not for a file tool's or code's input.
    ("mcp__filesystem__read_text_file", {"path": ".env"}),
    ("mcp__filesystem__search_files", {"path": ".", "pattern": "x", "command": "cat .env"}),
    ("mcp__fs__search_files", {"path": ".", "pattern": "x", "script": "cat .env"}),
]

PASSED = [
    ("Grep", {"pattern": "KEY", "path": "src"}),
    ("Grep", {"pattern": "KEY", "path": ".", "glob": "*.py"}),
    ("Write", {"file_path": ".gitignore", "content": ".env\n.env.local\n"}),
    ("Edit", {"file_path": ".gitignore", "old_string": "x", "new_string": ".env"}),
    ("Write", {"file_path": "src/notes.md", "content": "the key is in .env"}),
    ("Write", {"file_path": ".claude/agents/reviewer.md", "content": "review"}),
    ("TodoWrite", {"todos": [{"content": "cat .env", "status": "pending"}]}),
    ("WebSearch", {"query": "python-dotenv load .env"}),
    ("AskUserQuestion", {"questions": [{"question": "Add .env to .gitignore?"}]}),
    ("update_plan", {"plan": [{"step": "read .env", "status": "pending"}]}),
    ("mcp__jupyter__execute", {"code": "import os\nprint(1 + 1)"}),
    ("mcp__db__query", {"sql": "select count(*) from users"}),
    # Another MCP server's search for file names: it returns names, never a file's bytes.
    ("mcp__filesystem__search_files", {"path": ".", "pattern": ".env"}),
    ("mcp__fs__search_files", {"path": "config", "pattern": "service.json"}),
    ("mcp__filesystem__directory_tree", {"path": "."}),
    ("mcp__filesystem__get_file_info", {"path": ".env"}),
]


def _cases(cases: list[tuple[str, dict[str, object]]]) -> list[object]:
    return [
        pytest.param(shape, tool, tool_input, id=f"{shape}: {tool} {json.dumps(tool_input)[:50]}")
        for shape in ("claude-code", "codex")
        for tool, tool_input in cases
    ]


def _event(shape: str, project: Path, tool: str, tool_input: dict[str, object]) -> object:
    return (claude_event if shape == "claude-code" else codex_event)(project)(tool, tool_input)


@pytest.mark.parametrize(("shape", "tool", "tool_input"), _cases(BLOCKED))
def test_a_listed_tool_call_is_blocked(
    project: Path, shape: str, tool: str, tool_input: dict[str, object]
) -> None:
    """DESIGN §14's block list, in each host's event shape."""
    assert 2 == code(_event(shape, project, tool, tool_input))


@pytest.mark.parametrize(("shape", "tool", "tool_input"), _cases(PASSED))
def test_a_listed_everyday_tool_call_is_let_through(
    project: Path, shape: str, tool: str, tool_input: dict[str, object]
) -> None:
    """DESIGN §14's never-block list, in each host's event shape."""
    assert 0 == code(_event(shape, project, tool, tool_input))


def test_the_user_settings_under_claude_config_dir_are_not_written(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`$CLAUDE_CONFIG_DIR/settings.json` holds the mask's credentials: a Write is blocked."""
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    write = {"file_path": str(tmp_path / "cc" / "settings.json"), "content": "{}"}

    assert 2 == code(claude_event(project)("Write", write))


def test_an_input_too_large_to_read_whole_is_blocked_in_time(project: Path) -> None:
    """A 4 MiB Write of a file no rule protects: the guard cannot read it whole, so it blocks,
    and within the second DESIGN §14 allows."""
    event = claude_event(project)("Write", {"file_path": "notes.md", "content": "x" * (4 << 20)})
    started = time.monotonic()
    done = run_guard(event)

    assert 2 == done.returncode
    assert b"too large" in done.stderr
    assert time.monotonic() - started < 1.5  # the interpreter's own start included


def test_grep_over_a_repository_that_ignores_the_files_is_let_through(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """rg skips what git ignores: Grep over a repository whose .gitignore names .env and the
    written file's folder opens neither, so it passes; the same Grep with the file unignored is
    blocked (test_a_listed_tool_call_is_blocked)."""
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/bin", "/bin", os.environ["PATH"]]))
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text(".env\nconfig/\n")

    assert 0 == code(claude_event(project)("Grep", {"pattern": "KEY", "path": "."}))
