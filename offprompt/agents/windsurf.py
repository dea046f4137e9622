"""Windsurf: only a user config, `~/.codeium/windsurf/mcp_config.json` (`mcpServers`); the
guard in `hooks.json` beside it (Cascade hooks, docs.windsurf.com/windsurf/cascade/hooks).

Found when `windsurf` is on PATH or `~/.codeium/windsurf` exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

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
from offprompt.hosts import windsurf as facts

# Cascade's hooks before it reads or writes a file, runs a command or calls an MCP tool: exit 2
# blocks and Cascade shows the model stderr; any other exit lets the action go on.
GUARD_EVENTS = ("pre_read_code", "pre_write_code", "pre_run_command", "pre_mcp_tool_use")
# `show_output`: the person sees the guard's reason in Cascade too.
GUARD_ENTRY = (("command", None), ("show_output", True))


class Windsurf(JsonAgent):
    """Entry: `{"command": …, "args": [...]}`."""

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    section = "mcpServers"
    project_file = None
    no_project_reason = (
        "Windsurf has no project config; `offprompt init --global --agent windsurf` adds"
        " offprompt to its user config"
    )

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # Like its MCP servers, only for the user: every workspace gets the hook.
        return guard_file_for(
            scope,
            machine,
            project,
            user=machine.home / ".codeium" / "windsurf" / "hooks.json",
            in_project=None,
            events=GUARD_EVENTS,
            flat=GUARD_ENTRY,
        )

    def user_file(self, machine: Machine) -> Path:
        return machine.home / ".codeium" / "windsurf" / "mcp_config.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("windsurf",), (machine.home / ".codeium" / "windsurf",))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"command": server.command, "args": list(server.args)}
