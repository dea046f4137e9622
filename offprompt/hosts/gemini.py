"""Gemini CLI's facts (offprompt.agents.gemini sets it up): its client name, its tools and its
hook event before a tool (`BeforeTool`, in Claude Code's shape otherwise)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]

HOST: Host = {
    "name": "gemini",
    "title": "Gemini CLI",
    "clients": {"gemini-cli-mcp-client": "Gemini CLI"},
    "tools": {
        "run_shell_command": "shell",
        "read_file": "any",
        "read_many_files": "many",
        "glob": "listing",
        "list_directory": "listing",
        "grep_search": "search",
    },
    "before_tool": ("BeforeTool",),
    # Its settings (the project's and ~/.gemini's) hold the guard's hook.
    "guard_files": ("/.gemini/settings.json",),
}
