"""Windsurf: only a user config, `~/.codeium/windsurf/mcp_config.json` (`mcpServers`).

Found when `windsurf` is on PATH or `~/.codeium/windsurf` exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.hosts.interface import Machine, Presence, ServerCommand, found_by
from offprompt.hosts.json_agent import JsonAgent


class Windsurf(JsonAgent):
    """Entry: `{"command": …, "args": [...]}`."""

    name = "windsurf"
    title = "Windsurf"
    unguarded = "Windsurf's Cascade hooks are not installed by offprompt yet"
    section = "mcpServers"
    project_file = None
    no_project_reason = (
        "Windsurf has no project config; `offprompt init --global --agent windsurf` adds"
        " offprompt to its user config"
    )

    def user_file(self, machine: Machine) -> Path:
        return machine.home / ".codeium" / "windsurf" / "mcp_config.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("windsurf",), (machine.home / ".codeium" / "windsurf",))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"command": server.command, "args": list(server.args)}
