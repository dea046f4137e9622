"""Gemini CLI: `.gemini/settings.json` in the project, `~/.gemini/settings.json` for the user
(`mcpServers`; the files may hold comments, which are kept).

Found when `gemini` is on PATH or `~/.gemini` exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.hosts.interface import Machine, Presence, ServerCommand, found_by
from offprompt.hosts.json_agent import JsonAgent, at_least

# Gemini's `timeout` is per tool call, in milliseconds: longer than offprompt's 300 s wait for the
# person, with room for the page to open. A longer one the person set is kept.
TIMEOUT_MS = 600_000


class Gemini(JsonAgent):
    """Entry: `{"command": …, "args": [...], "timeout": 600000}`."""

    name = "gemini"
    title = "Gemini CLI"
    unguarded = "Gemini CLI's BeforeTool hooks are not installed by offprompt yet"
    section = "mcpServers"
    project_file = ".gemini/settings.json"
    project_folder = ".gemini"

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
