"""VS Code's facts (offprompt.agents.vscode sets it up): its client names, the tools of its
agent, and its hooks' dialect. VS Code's own hooks speak Claude Code's shape; the Copilot
runtime's (VS Code's Copilot harness, and Copilot CLI, which reads the same user hooks) send
`toolName`/`toolArgs`, read here in Claude Code's terms (the guard's), and take
`permissionDecision` on stdout as their answer.
"""

from __future__ import annotations

import _json
from _collections_abc import Mapping

from offprompt import jsonread

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]

# json.dumps' escaping of a str (ensure_ascii), from json's C half.
_string = _json.encode_basestring_ascii

# The Copilot runtime's tool names in Claude Code's.
_COPILOT_TOOLS = {
    "bash": "Bash", "powershell": "Bash", "view": "Read", "create": "Write", "edit": "Edit",
    "grep": "Grep", "glob": "Glob",
}  # fmt: skip


def _claims(event: Mapping[str, object]) -> bool:
    return "toolName" in event


def _normalise(event: Mapping[str, object]) -> dict[str, object]:
    args = event.get("toolArgs")
    if isinstance(args, str):
        args = jsonread.loads(args) if args.strip() else {}
    tool = event.get("toolName")
    if not isinstance(tool, str) or not isinstance(args, Mapping):
        raise ValueError("a Copilot event without toolName or toolArgs")
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": _COPILOT_TOOLS.get(tool, tool),
        "tool_input": dict(args),
        "cwd": event.get("cwd"),
    }


def _deny(why: str) -> str:
    return f'{{"permissionDecision": "deny", "permissionDecisionReason": {_string(why)}}}'


HOST: Host = {
    "name": "vscode",
    "title": "VS Code",
    "clients": {
        "Visual Studio Code": "VS Code",
        "Visual Studio Code - Insiders": "VS Code Insiders",
    },
    "tools": {
        "run_in_terminal": "shell",
        "file_search": "listing",  # a search for file names
        "grep_search": "search",  # Gemini CLI's too
    },
    "before_tool": ("PreToolUse",),
    # The hooks file init writes, the project's and the Copilot runtime's user one.
    "guard_files": ("/.github/hooks/offprompt.json", "/.copilot/hooks/offprompt.json"),
    "dialect": {"claims": _claims, "normalise": _normalise, "deny": _deny, "allow": None},
}
