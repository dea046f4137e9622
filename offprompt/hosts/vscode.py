"""VS Code (Copilot agent mode): `.vscode/mcp.json` in the project, `mcp.json` in the user
profile folder (`~/.config/Code/User`, `~/Library/Application Support/Code/User`,
`%APPDATA%\\Code\\User`); servers sit under `servers`, not `mcpServers`.

Found when `code` is on PATH or that user folder exists. (VS Code Insiders is not handled.)
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.hosts.interface import Machine, Presence, ServerCommand, found_by
from offprompt.hosts.json_agent import JsonAgent


class VsCode(JsonAgent):
    """Entry: `{"type": "stdio", "command": …, "args": [...]}` (VS Code's documented shape)."""

    name = "vscode"
    title = "VS Code"
    unguarded = "VS Code's agent hooks are a preview feature offprompt does not install yet"
    section = "servers"
    project_file = ".vscode/mcp.json"
    project_folder = ".vscode"

    def _user_dir(self, machine: Machine) -> Path:
        return machine.app_data() / "Code" / "User"

    def user_file(self, machine: Machine) -> Path:
        return self._user_dir(machine) / "mcp.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("code",), (self._user_dir(machine),))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"type": "stdio", "command": server.command, "args": list(server.args)}
