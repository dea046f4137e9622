"""Gemini CLI: `.gemini/settings.json` in the project, `~/.gemini/settings.json` for the user
(`mcpServers`; the files may hold comments, which are kept).

Found when `gemini` is on PATH or `~/.gemini` exists.
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
from offprompt.agents.json_agent import JsonAgent, at_least

# Gemini's `timeout` is per tool call, in milliseconds: longer than offprompt's 300 s wait for the
# person, with room for the page to open. A longer one the person set is kept.
TIMEOUT_MS = 600_000


class Gemini(JsonAgent):
    """Entry: `{"command": …, "args": [...], "timeout": 600000}`."""

    name = "gemini"
    title = "Gemini CLI"
    guard_note = "Gemini CLI runs a project's hooks only once you trust the folder"
    guard_note_project_only = True
    section = "mcpServers"
    project_file = ".gemini/settings.json"
    project_folder = ".gemini"

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # The same settings.json as the server: its `hooks.BeforeTool` (matcher: a regex over
        # tool names; "*" is every tool). Exit 2 blocks the call, stderr is the reason.
        return guard_file_for(
            scope,
            machine,
            project,
            user=self.user_file(machine),
            in_project=".gemini/settings.json",
            matcher="*",
            events=("BeforeTool",),
            # `timeout` in milliseconds (default 60000); a timed-out hook lets the call through.
            hook=(("timeout", HOST_LIMIT * 1000),),
        )

    def user_file(self, machine: Machine) -> Path:
        return machine.home / ".gemini" / "settings.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("gemini",), (machine.home / ".gemini",))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {
            "command": server.command,
            "args": list(server.args),
            "timeout": at_least(existing, "timeout", TIMEOUT_MS),
        }
