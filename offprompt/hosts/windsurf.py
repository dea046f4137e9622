"""Windsurf's facts (offprompt.agents.windsurf sets it up): its client names, and its hooks'
dialect (`agent_action_name`, `tool_info`) read in Claude Code's terms (the guard's); it takes
the exit code alone as its answer.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]


def _claims(event: Mapping[str, object]) -> bool:
    return "agent_action_name" in event


def _normalise(event: Mapping[str, object]) -> dict[str, object]:
    action = event.get("agent_action_name")
    info = event.get("tool_info")
    if not isinstance(info, Mapping):
        raise ValueError("a Windsurf event without tool_info")
    cwd = info.get("cwd")
    tool_input: dict[str, object]
    if action == "pre_run_command":
        tool, tool_input = "Bash", {"command": info.get("command_line")}
    elif action in ("pre_read_code", "pre_write_code"):
        path = info.get("file_path")
        if not isinstance(path, str):
            raise ValueError("a Windsurf file event without file_path")
        if action == "pre_read_code" and os.path.isdir(path):
            # Cascade reads a folder whole: like a search of it (Gemini CLI's and VS Code's
            # tool of that name).
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
    return {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": cwd,
    }


def _deny(why: str) -> None:
    return None


HOST: Host = {
    "name": "windsurf",
    "title": "Windsurf",
    "clients": {"windsurf-client": "Windsurf", "windsurf": "Windsurf"},
    # Its user hooks file holds the guard's hook (it has no project one init writes).
    "guard_files": ("/.codeium/windsurf/hooks.json",),
    "dialect": {"claims": _claims, "normalise": _normalise, "deny": _deny, "allow": None},
}
