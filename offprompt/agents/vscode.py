"""VS Code (Copilot agent mode): `.vscode/mcp.json` in the project, `mcp.json` in the user
profile folder (`~/.config/Code/User`, `~/Library/Application Support/Code/User`,
`%APPDATA%\\Code\\User`); servers sit under `servers`, not `mcpServers`. The guard: a hook file of
offprompt's own, `.github/hooks/offprompt.json` (`~/.copilot/hooks/offprompt.json` for the user).

Found when `code` is on PATH or that user folder exists. (VS Code Insiders is not handled.)
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
from offprompt.hosts import vscode as facts

# The Copilot hook format (`"version": 1`, `preToolUse`, `bash`), which both of VS Code's agent
# harnesses read from `.github/hooks/*.json`: its own Local one maps it to its `PreToolUse`
# (code.visualstudio.com/docs/agent-customization/hooks), the Copilot one runs it as Copilot
# CLI does (docs.github.com/en/copilot/reference/hooks-reference). No matcher: every tool.
GUARD_EVENTS = ("preToolUse",)
# `timeoutSec`: seconds (Copilot's default is 30), said here so it stays above the guard's own
# deadline.
GUARD_ENTRY = (("type", "command"), ("bash", None), ("timeoutSec", HOST_LIMIT))


class VsCode(JsonAgent):
    """Entry: `{"type": "stdio", "command": …, "args": [...]}` (VS Code's documented shape)."""

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    guard_note = "VS Code runs workspace hooks with chat.useHooks on, in a trusted workspace"
    guard_note_project_only = True
    section = "servers"
    project_file = ".vscode/mcp.json"
    project_folder = ".vscode"

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # remove takes out the folders init made for the file, if they hold nothing else.
        return guard_file_for(
            scope,
            machine,
            project,
            user=machine.home / ".copilot" / "hooks" / "offprompt.json",
            user_prune=machine.home / ".copilot",
            in_project=".github/hooks/offprompt.json",
            events=GUARD_EVENTS,
            flat=GUARD_ENTRY,
            version=1,
            answer="copilot",
        )

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
