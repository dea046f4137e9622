"""Cursor: `.cursor/mcp.json` in the project, `~/.cursor/mcp.json` for the user (`mcpServers`);
the guard in `hooks.json` beside it.

Found when `cursor` (the editor's shell command) or `cursor-agent` is on PATH, or `~/.cursor`
exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.interface import (
    GuardFile,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import JsonAgent
from offprompt.hosts import cursor as facts

# Cursor's hook events before its agent runs a shell command, reads a file for the model, or
# calls an MCP tool (cursor.com/docs/hooks). `.cursorignore` keeps files from Cursor's own reads
# but, Cursor says, not from its terminal or MCP tools, so the hook covers all three.
GUARD_EVENTS = ("beforeShellExecution", "beforeReadFile", "beforeMCPExecution")
# Cursor's hook entries are flat; its hooks let a call through when they crash or time out
# unless `failClosed` is set; `timeout` is in seconds.
GUARD_ENTRY = (("command", None), ("failClosed", True), ("timeout", HOST_LIMIT))


class Cursor(JsonAgent):
    """Entry: `{"command": …, "args": [...]}`; Cursor takes a server with a command as stdio."""

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    guard_note = "Cursor runs a project's hooks in a workspace you trust"
    guard_note_project_only = True
    section = "mcpServers"
    project_file = ".cursor/mcp.json"
    project_folder = ".cursor"

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        return guard_file_for(
            scope,
            machine,
            project,
            user=machine.home / ".cursor" / "hooks.json",
            in_project=".cursor/hooks.json",
            events=GUARD_EVENTS,
            flat=GUARD_ENTRY,
            version=1,
            answer="cursor",
        )

    def user_file(self, machine: Machine) -> Path:
        return machine.home / ".cursor" / "mcp.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("cursor", "cursor-agent"), (machine.home / ".cursor",))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"command": server.command, "args": list(server.args)}
