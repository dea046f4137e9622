"""What the hook decides (DESIGN §14): does one tool event (Claude Code's and Codex's
`PreToolUse`, Gemini CLI's `BeforeTool`, the others once events.py has mapped them) read, print,
copy, overwrite or send a protected file? File tools by their paths, shell tools by commands.py,
search tools by search.py.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping

from offprompt.guard import commands, search
from offprompt.guard.check import Check
from offprompt.guard.protected import Protected

__all__ = ["decide"]

_FILE_KEYS = (
    "file_path", "notebook_path", "path", "file", "filename", "paths", "files", "filePath",
)  # fmt: skip
# The events that come before a tool runs: Claude Code's and Codex's, and Gemini CLI's.
_BEFORE_TOOL = ("PreToolUse", "BeforeTool")
# Claude Code's, Codex's, Gemini CLI's and VS Code's shell tools.
_SHELL_TOOLS = (
    "Bash", "shell", "local_shell", "exec_command", "unified_exec", "run_shell_command",
    "run_in_terminal",
)  # fmt: skip
# Tools that list names and never open a file: Claude Code's, and Gemini CLI's.
_LISTING_TOOLS = ("Glob", "LS", "glob", "list_directory")
# offprompt's own MCP tools (DESIGN §14: never blocked): they take a file's name and return key
# names and states, never a value. As the hosts name them: `mcp__offprompt__secret_status`
# (Claude Code, Codex), `offprompt__secret_status`, `offprompt.secret_status`.
_OWN_TOOLS = re.compile(
    r"(?:mcp__)?offprompt(?:__|\.|/|:)(?:collect_secret|await_secret|cancel_secret|secret_status)"
)
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
    if _OWN_TOOLS.fullmatch(tool):
        return None
    cwd = event.get("cwd")
    # Codex's `workdir`, Gemini CLI's `dir_path` (the shell's folder, or the one searched).
    workdir = tool_input.get("workdir") or tool_input.get("cwd") or tool_input.get("dir_path")
    base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd()
    if isinstance(workdir, str) and workdir:
        base = os.path.join(base, workdir)
    check = Check(base, home, protected, [base])
    command = tool_input.get("command", tool_input.get("cmd"))
    if tool in _SHELL_TOOLS or (
        tool not in ("apply_patch", *_LISTING_TOOLS) and isinstance(command, str | list)
    ):
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
    if tool == "apply_patch":
        text = command if isinstance(command, str) else tool_input.get("input", "")
        for line in str(text).splitlines():
            m = _PATCH_HEADER.match(line.strip())
            if m:
                hit = check.path(m.group(1) or m.group(2))
                if hit is not None:
                    return hit
        return None
    if tool in _LISTING_TOOLS:
        return None  # they list names; they never open a file
    if tool == "grep_search":
        return search.tool(check, tool_input)
    if tool == "read_many_files":
        for key in ("include", "paths"):
            for text in _strings(tool_input.get(key)):
                hit = check.path(text, glob=True)
                if hit is not None:
                    return hit
        return None
    if tool == "Grep":
        # Claude Code's `path`, the Copilot runtime's `paths`; both take a `glob`.
        for key in ("path", "paths", "glob"):
            for value in _strings(tool_input.get(key)):
                hit = check.path(value, glob=key == "glob" or any(c in value for c in "*?["))
                if hit is not None:
                    return hit
        return None
    for key, value in tool_input.items():
        if key in _FILE_KEYS or tool in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit"):
            for text in _strings(value):
                hit = check.path(text, glob=key in ("pattern", "glob"))
                if hit is not None:
                    return hit
        else:
            # Other tools (an MCP file server's `read_file`, WebFetch's `file://`): any string
            # that is itself a protected file's name.
            for text in _strings(value):
                hit = check.path(text)
                if hit is not None:
                    return hit
    return None


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
