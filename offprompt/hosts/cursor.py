"""Cursor: `.cursor/mcp.json` in the project, `~/.cursor/mcp.json` for the user (`mcpServers`).

Found when `cursor` (the editor's shell command) or `cursor-agent` is on PATH, or `~/.cursor`
exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.hosts.interface import Machine, Presence, ServerCommand, found_by
from offprompt.hosts.json_agent import JsonAgent


class Cursor(JsonAgent):
    """Entry: `{"command": …, "args": [...]}`; Cursor takes a server with a command as stdio."""

    name = "cursor"
    title = "Cursor"
    # .cursorignore (which already covers .env) keeps files from Cursor's own reads but, as
    # Cursor says, not from its terminal or MCP tools; its hooks are not installed yet.
    unguarded = "offprompt does not install Cursor's hooks (.cursor/hooks.json) yet"
    section = "mcpServers"
    project_file = ".cursor/mcp.json"
    project_folder = ".cursor"

    def user_file(self, machine: Machine) -> Path:
        return machine.home / ".cursor" / "mcp.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("cursor", "cursor-agent"), (machine.home / ".cursor",))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"command": server.command, "args": list(server.args)}
