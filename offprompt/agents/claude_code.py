"""Claude Code: `.mcp.json` in the project, top-level `mcpServers` of `~/.claude.json` for the user.

Found when `claude` is on PATH or its folder exists (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
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


class ClaudeCode(JsonAgent):
    """Entry: `{"type": "stdio", "command": …, "args": [...]}` (what `claude mcp add` writes).

    No timeout: Claude Code waits for MCP tool calls far longer than offprompt's 300 s.
    """

    name = "claude-code"
    title = "Claude Code"
    section = "mcpServers"
    project_file = ".mcp.json"
    project_note = "Claude Code asks you to approve it the next time it starts in this project"

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # settings.json, not .mcp.json: hooks and permissions live there (project or user).
        return guard_file_for(
            scope,
            machine,
            project,
            user=self._config_dir(machine) / "settings.json",
            in_project=".claude/settings.json",
            deny=True,
            matcher="*",
            # Its hook schema: `timeout` in seconds; `onFailure: "block"` makes a hook that
            # could not start, timed out or exited other than 0 or 2 count as exit 2.
            hook=(("timeout", HOST_LIMIT), ("onFailure", "block")),
        )

    def _config_dir(self, machine: Machine) -> Path:
        return machine.env_path("CLAUDE_CONFIG_DIR") or machine.home / ".claude"

    def user_file(self, machine: Machine) -> Path:
        # User-scope servers live in the top-level `mcpServers` of .claude.json, which sits in
        # $HOME — or inside $CLAUDE_CONFIG_DIR when that is set.
        custom = machine.env_path("CLAUDE_CONFIG_DIR")
        return (custom or machine.home) / ".claude.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("claude",), (self._config_dir(machine),))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {"type": "stdio", "command": server.command, "args": list(server.args)}
