"""What the hook decides (DESIGN §14): does one tool event (Claude Code's and Codex's
`PreToolUse`, Gemini CLI's `BeforeTool`, the others once events.py has mapped them) read, print,
copy, overwrite or send a protected file? TOOLS says, per tool name, which reader reads that
tool's input; a tool not in it takes DEFAULT. Adding a tool is one row.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping

from offprompt.guard import commands, search
from offprompt.guard.check import Check
from offprompt.guard.protected import Protected

# `typing` costs the hook's start-up time (tests/guard/test_hook_imports.py): types for mypy only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import TypeAlias

    # Reads one tool's input: the protected file it would expose, or None.
    Reader: TypeAlias = Callable[[Check, Mapping[str, object]], str | None]

__all__ = ["DEFAULT", "TOOLS", "decide", "reader"]

# The events that come before a tool runs: Claude Code's and Codex's, and Gemini CLI's.
_BEFORE_TOOL = ("PreToolUse", "BeforeTool")
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$")


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def _command(tool_input: Mapping[str, object]) -> object:
    return tool_input.get("command", tool_input.get("cmd"))  # Codex's exec_command: `cmd`


# --- the readers: one per way a tool's input names files --------------------------------------


def _shell(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A shell tool's command (commands.py): a script, or a list of words (`bash -c SCRIPT`)."""
    command = _command(tool_input)
    if isinstance(command, list):
        if not all(isinstance(c, str) for c in command):
            raise ValueError("command is not a list of strings")
        words = [str(c) for c in command]
        shell = len(words) >= 3 and commands.base(words[0]) in commands.SHELLS
        if shell and words[1] in ("-c", "-lc"):
            return commands.script(check, words[2])
        return commands.script(check, " ".join(_quote(w) for w in words))
    if isinstance(command, str):
        return commands.script(check, command)
    raise ValueError("a shell tool without a command")


def _command_first(read: Reader) -> Reader:
    """`read`, unless the input holds a command (`command` or `cmd`, text or a list of words):
    then it is read as a shell tool's, whatever the tool's name."""

    def first(check: Check, tool_input: Mapping[str, object]) -> str | None:
        if isinstance(_command(tool_input), str | list):
            return _shell(check, tool_input)
        return read(check, tool_input)

    return first


def _patch(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Codex's apply_patch: the files its headers add, update, delete or move to."""
    command = _command(tool_input)
    text = command if isinstance(command, str) else tool_input.get("input", "")
    for line in str(text).splitlines():
        m = _PATCH_HEADER.match(line.strip())
        if m:
            hit = check.path(m.group(1) or m.group(2))
            if hit is not None:
                return hit
    return None


def _listing(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A tool that lists names: it never opens a file."""
    return None


@_command_first
def _search(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A search tool given a folder: every file it would open under it (search.py)."""
    return search.tool(check, tool_input)


@_command_first
def _many_files(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Gemini CLI's read_many_files: its `include` and `paths` are globs or names."""
    for key in ("include", "paths"):
        for text in _strings(tool_input.get(key)):
            hit = check.path(text, glob=True)
            if hit is not None:
                return hit
    return None


@_command_first
def _grep(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Claude Code's Grep: its `path` (the Copilot runtime's `paths`) and `glob`."""
    for key in ("path", "paths", "glob"):
        for value in _strings(tool_input.get(key)):
            hit = check.path(value, glob=key == "glob" or any(c in value for c in "*?["))
            if hit is not None:
                return hit
    return None


@_command_first
def _file_tool(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A file tool: every string of its input is a file's name (`pattern`, `glob`: a glob)."""
    for key, value in tool_input.items():
        for text in _strings(value):
            hit = check.path(text, glob=key in ("pattern", "glob"))
            if hit is not None:
                return hit
    return None


@_command_first
def _any_name(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Any other tool (an MCP file server's `read_file`, WebFetch's `file://`): any string of
    its input that is itself a protected file's name."""
    for value in tool_input.values():
        for text in _strings(value):
            hit = check.path(text)
            if hit is not None:
                return hit
    return None


# --- the table ---------------------------------------------------------------------------------

# The row of every tool not in TOOLS: another MCP server's (`mcp__fs__read_file`, Cursor's and
# Windsurf's `mcp:NAME`), a host's tool not named here.
DEFAULT: Reader = _any_name

# offprompt's own MCP tools (DESIGN §14: never blocked): they take a file's name and return key
# names and states, never a value. As the hosts name them: `mcp__offprompt__secret_status`
# (Claude Code, Codex), `offprompt__secret_status`, `offprompt.secret_status`, `offprompt/…`,
# `offprompt:…`. Their row is None: nothing of the event is read.
_OWN_TOOLS = {
    f"{prefix}offprompt{sep}{name}": None
    for prefix in ("", "mcp__")
    for sep in ("__", ".", "/", ":")
    for name in ("collect_secret", "await_secret", "cancel_secret", "secret_status")
}

# Tool name → the reader of its input (None: let through unread). Events.py maps the Copilot
# runtime's, Cursor's and Windsurf's tools to these names first.
TOOLS: dict[str, Reader | None] = {
    # Claude Code (and the Copilot runtime's, mapped)
    "Bash": _shell,
    "Read": _file_tool,
    "Edit": _file_tool,
    "Write": _file_tool,
    "MultiEdit": _file_tool,
    "NotebookEdit": _file_tool,
    "Grep": _grep,
    "Glob": _listing,
    "LS": _listing,
    "WebFetch": _any_name,
    "TodoWrite": _any_name,
    "Task": _any_name,
    # Codex
    "shell": _shell,
    "local_shell": _shell,
    "exec_command": _shell,
    "unified_exec": _shell,
    "apply_patch": _patch,
    # Gemini CLI (grep_search: VS Code's too)
    "run_shell_command": _shell,
    "read_file": _any_name,
    "read_many_files": _many_files,
    "glob": _listing,
    "list_directory": _listing,
    "grep_search": _search,
    # VS Code
    "run_in_terminal": _shell,
    **_OWN_TOOLS,
}


def reader(tool: str) -> Reader | None:
    """The reader of `tool`'s input: its row in TOOLS, else DEFAULT."""
    return TOOLS.get(tool, DEFAULT)


def decide(event: Mapping[str, object], protected: Protected, home: str) -> str | None:
    """The protected file this tool call would expose, or None to let it through.

    `event` is the hook's JSON (`tool_name`, `tool_input`, `cwd`); ValueError/TypeError or
    ShellSyntax when it is not a tool event the rules understand.
    """
    if event.get("hook_event_name", "PreToolUse") not in _BEFORE_TOOL:
        return None
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, Mapping):
        raise ValueError("not a tool event")
    read = reader(tool)
    if read is None:
        return None
    cwd = event.get("cwd")
    # Codex's `workdir`, Gemini CLI's `dir_path` (the shell's folder, or the one searched).
    workdir = tool_input.get("workdir") or tool_input.get("cwd") or tool_input.get("dir_path")
    base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd()
    if isinstance(workdir, str) and workdir:
        base = os.path.join(base, workdir)
    return read(Check(base, home, protected, [base]), tool_input)


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
