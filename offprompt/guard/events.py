"""The hosts' hook events in the guard's terms (decide.py reads Claude Code's shape:
`tool_name`, `tool_input`, `cwd`), and the guard's answer in each host's dialect.

Claude Code, Codex, Gemini CLI (`BeforeTool`) and VS Code's own hooks send that shape already;
Cursor (`beforeShellExecution`, `beforeReadFile`, `beforeMCPExecution`), the Copilot runtime
(`toolName`/`toolArgs`) and Windsurf (`agent_action_name`, `tool_info`) are mapped. Imports only
what the hook already has (os, sys), for its speed: JSON is read by jsonread.py, and
written by `json`, loaded for a block or a Cursor event only.
"""

from __future__ import annotations

import _json
import os
import sys
from _collections_abc import Mapping

from offprompt.guard import jsonread

# json.dumps' escaping of a str (ensure_ascii), from json's C half.
_string = _json.encode_basestring_ascii

__all__ = ["answer", "deny_json", "dialect", "normalise"]


# Cursor's hook events and what each one is in the terms `decide` reads.
_CURSOR_EVENTS = ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution", "preToolUse")
# The Copilot runtime's tool names (VS Code's Copilot harness, Copilot CLI) in Claude Code's.
_COPILOT_TOOLS = {
    "bash": "Bash", "powershell": "Bash", "view": "Read", "create": "Write", "edit": "Edit",
    "grep": "Grep", "glob": "Glob",
}  # fmt: skip


def normalise(dialect: str, event: Mapping[str, object]) -> dict[str, object]:
    """The event of `dialect` (what `dialect()` says of it) in the terms `decide` reads
    (`tool_name`, `tool_input`, `cwd`). ValueError when the event lacks its dialect's fields."""
    if dialect == "windsurf":
        return _windsurf(event)
    if dialect == "cursor":
        return _cursor(event)
    if dialect == "copilot":
        args = event.get("toolArgs")
        if isinstance(args, str):
            args = jsonread.loads(args) if args.strip() else {}
        tool = event.get("toolName")
        if not isinstance(tool, str) or not isinstance(args, Mapping):
            raise ValueError("a Copilot event without toolName or toolArgs")
        tool = _COPILOT_TOOLS.get(tool, tool)
        return _before(tool, dict(args), event.get("cwd"))
    return dict(event)


def _cursor(event: Mapping[str, object]) -> dict[str, object]:
    name = event.get("hook_event_name")
    roots = event.get("workspace_roots")
    cwd = event.get("cwd")
    if not isinstance(cwd, str) and isinstance(roots, list) and roots:
        cwd = roots[0]
    if name == "beforeShellExecution":
        tool, tool_input = "Bash", {"command": event.get("command")}
    elif name == "beforeReadFile":
        attachments = event.get("attachments")
        paths = [
            a.get("file_path", a.get("filePath"))
            for a in (attachments if isinstance(attachments, list) else [])
            if isinstance(a, Mapping)
        ]
        tool, tool_input = "Read", {"file_path": event.get("file_path"), "paths": paths}
    elif name == "beforeMCPExecution":
        raw = event.get("tool_input")
        try:
            parsed = jsonread.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            parsed = {"input": raw}
        tool = f"mcp:{event.get('tool_name')}"
        tool_input = dict(parsed) if isinstance(parsed, Mapping) else {"input": parsed}
    else:  # preToolUse
        given = event.get("tool_input")
        tool_input = dict(given) if isinstance(given, Mapping) else {}
        tool = str(event.get("tool_name"))
        if tool == "Shell":
            tool = "Bash"
            tool_input.setdefault("workdir", tool_input.get("working_directory"))
    return _before(tool, tool_input, cwd)


def _before(tool: str, tool_input: dict[str, object], cwd: object) -> dict[str, object]:
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": cwd,
    }


def _windsurf(event: Mapping[str, object]) -> dict[str, object]:
    action = event.get("agent_action_name")
    info = event.get("tool_info")
    if not isinstance(info, Mapping):
        raise ValueError("a Windsurf event without tool_info")
    cwd = info.get("cwd")
    if action == "pre_run_command":
        tool, tool_input = "Bash", {"command": info.get("command_line")}
    elif action in ("pre_read_code", "pre_write_code"):
        path = info.get("file_path")
        if not isinstance(path, str):
            raise ValueError("a Windsurf file event without file_path")
        if action == "pre_read_code" and os.path.isdir(path):
            # Cascade reads a folder whole: like a search of it.
            tool, tool_input = "grep_search", {"dir_path": path}
        else:
            tool, tool_input = (
                ("Read" if action == "pre_read_code" else "Write"),
                {"file_path": path},
            )
    elif action == "pre_mcp_tool_use":
        given = info.get("mcp_tool_arguments")
        tool = f"mcp:{info.get('mcp_tool_name')}"
        tool_input = dict(given) if isinstance(given, Mapping) else {"input": given}
    else:
        return {"hook_event_name": str(action)}  # not a call before a tool: let it be
    return _before(tool, tool_input, cwd)


def dialect(event: Mapping[str, object]) -> str:
    """Which host's dialect `event` is in, by its marks: `windsurf`, `cursor`, `copilot`
    (`toolName`/`toolArgs`), else `claude` (Claude Code, Codex, Gemini CLI, VS Code's own, and
    Cursor's events that do not come before a tool, which get no answer in Cursor's terms)."""
    if "agent_action_name" in event:
        return "windsurf"
    cursor = "cursor_version" in event or "workspace_roots" in event
    if cursor and event.get("hook_event_name") in _CURSOR_EVENTS:
        return "cursor"
    return "copilot" if "toolName" in event else "claude"


def deny_json(dialect: str, why: str) -> str | None:
    """The deny a host of `dialect` reads on stdout beside exit 2, or None (exit 2 is all).

    Written as `json.dumps` writes it, with json's own C escaping of a string, without loading
    json: the deadline's handler writes it too, whatever the guard was importing then."""
    said = _string(why)
    if dialect == "cursor":
        return f'{{"permission": "deny", "user_message": {said}, "agent_message": {said}}}'
    if dialect == "copilot":
        return f'{{"permissionDecision": "deny", "permissionDecisionReason": {said}}}'
    return None


# json.dumps({"permission": "allow"}), written out (tests/guard/test_guard_fast.py holds the two
# alike).
_CURSOR_ALLOW = '{"permission": "allow"}'


def answer(dialect: str, why: str | None) -> int:
    """Exit 2 with `why` on stderr to block (exit 2 blocks even when stderr is gone), 0 to let
    the call through; Cursor reads `permission` from stdout (its hooks are fail-closed, and an
    empty answer may count as a failure), the Copilot runtime `permissionDecision`."""
    if why is not None:
        out = deny_json(dialect, why)
    else:
        out = _CURSOR_ALLOW if dialect == "cursor" else None
    # try/except rather than contextlib.suppress: contextlib costs the hook's start-up time.
    try:
        if out is not None:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        if why is not None:
            sys.stderr.write(why + "\n")
            sys.stderr.flush()
    except Exception:  # noqa: S110 - a closed stdout or stderr: the exit code still answers
        pass
    return 0 if why is None else 2
