"""Zed: `context_servers` in `.zed/settings.json` (project) or the user `settings.json`
(`~/.config/zed`, `$XDG_CONFIG_HOME/zed` on Linux, `%APPDATA%\\Zed` on Windows). Both files are
JSON with comments; the comments are kept (jsonc edits the text, it never re-serializes it).

Found when `zed` or `zeditor` (some Linux packages) is on PATH, or the user config folder exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from offprompt.agents.interface import Machine, Presence, ServerCommand, found_by
from offprompt.agents.json_agent import JsonAgent, at_least
from offprompt.hosts import zed as facts

# Zed's per-server `timeout` is for tool calls, in seconds (default 60): offprompt waits up to
# 300 s for the person. A longer one the person set is kept.
TIMEOUT_SEC = 600


class Zed(JsonAgent):
    """Entry: `{"source": "custom", "command": …, "args": [...], "timeout": 600}`.

    The flat shape with a string `command` and required `args`. Zed versions that tag servers by
    `source` need `"source": "custom"`; newer ones read servers untagged and ignore it, so it is
    written for both. (The older nested `"command": {"path": …}` shape is not written.)
    """

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    # Zed's `private_files` (default `**/.env*`, which settings can only extend) keeps those
    # files from its agent's read tool; its terminal tool has no hook and no such rule.
    unguarded = (
        "Zed has no hooks; its own private_files setting keeps .env* from its agent's file"
        " reads, not from its terminal"
    )
    section = "context_servers"
    project_file = ".zed/settings.json"
    project_folder = ".zed"

    def _user_dir(self, machine: Machine) -> Path:
        if machine.platform == "win32":
            return machine.app_data() / "Zed"
        if machine.platform == "darwin":
            return machine.home / ".config" / "zed"
        return machine.config_home() / "zed"

    def user_file(self, machine: Machine) -> Path:
        return self._user_dir(machine) / "settings.json"

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("zed", "zeditor"), (self._user_dir(machine),))

    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        return {
            "source": "custom",
            "command": server.command,
            "args": list(server.args),
            "timeout": at_least(existing, "timeout", TIMEOUT_SEC),
        }
