"""Cursor's facts (offprompt.agents.cursor sets it up): its client name, and its hooks' dialect:
`beforeShellExecution`, `beforeReadFile`, `beforeMCPExecution` and `preToolUse` read in Claude
Code's terms (the guard's), answered with `permission` on stdout (Cursor's hooks are
fail-closed, and an empty answer may count as a failure).
"""

from __future__ import annotations

import _json
from _collections_abc import Mapping

from offprompt import jsonread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["ALLOW", "HOST"]

# json.dumps' escaping of a str (ensure_ascii), from json's C half.
_string = _json.encode_basestring_ascii

# Cursor's hook events the guard answers, in Cursor's terms.
_EVENTS = ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution", "preToolUse")


def _claims(event: Mapping[str, object]) -> bool:
    """Cursor marks its events (`cursor_version`, `workspace_roots`); one that does not come
    before a tool gets no answer in Cursor's terms."""
    cursor = "cursor_version" in event or "workspace_roots" in event
    return cursor and event.get("hook_event_name") in _EVENTS


def _normalise(event: Mapping[str, object]) -> dict[str, object]:
    name = event.get("hook_event_name")
    roots = event.get("workspace_roots")
    cwd = event.get("cwd")
    if not isinstance(cwd, str) and isinstance(roots, list) and roots:
        cwd = roots[0]
    tool_input: dict[str, object]
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
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": cwd,
    }


def _deny(why: str) -> str:
    said = _string(why)
    return f'{{"permission": "deny", "user_message": {said}, "agent_message": {said}}}'


# json.dumps({"permission": "allow"}), written out (tests/guard/test_guard_fast.py holds the two
# alike).
ALLOW = '{"permission": "allow"}'

HOST: Host = {
    "name": "cursor",
    "title": "Cursor",
    "clients": {"cursor-vscode": "Cursor"},
    # Its hooks file, the project's and the user's (~/.cursor): the guard's hook is there.
    "guard_files": ("/.cursor/hooks.json",),
    "dialect": {"claims": _claims, "normalise": _normalise, "deny": _deny, "allow": ALLOW},
}
