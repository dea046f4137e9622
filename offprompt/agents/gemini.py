"""Gemini CLI: `.gemini/settings.json` in the project, `~/.gemini/settings.json` for the user
(`mcpServers`; the files may hold comments, which are kept).

Found when `gemini` is on PATH or `~/.gemini` exists; its folder trust is read from its settings
and trustedFolders.json (`Gemini.waits`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from offprompt.agents import host_waits
from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.interface import (
    Agent,
    GuardFile,
    Hook,
    HostWaits,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    Wait,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import JsonAgent, at_least
from offprompt.hosts import gemini as facts

# Gemini's `timeout` is per tool call, in milliseconds: longer than offprompt's 300 s wait for the
# person, with room for the page to open. A longer one the person set is kept.
TIMEOUT_MS = 600_000


class Gemini(JsonAgent):
    """Entry: `{"command": …, "args": [...], "timeout": 600000}`."""

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    guard_note = "Gemini CLI runs a project's hooks only once you trust the folder"
    guard_note_project_only = True
    section = "mcpServers"
    project_file = ".gemini/settings.json"
    project_folder = ".gemini"

    def waits(self, machine: Machine, folder: Path) -> HostWaits:
        return _GeminiWaits(self, machine, folder)

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


# What Gemini CLI 0.61 waits for -------------------------------------------------------------


class _GeminiWaits(HostWaits):
    """Its folder trust: no MCP server and no hook runs in a folder it does not trust."""

    def __init__(self, agent: Agent, machine: Machine, folder: Path) -> None:
        self.agent, self.machine, self.folder = agent, machine, folder
        self._trust: tuple[bool | None, str] | None = None

    def about(
        self, kind: str, scope: Scope, hook: Hook | None = None
    ) -> tuple[tuple[Wait, ...], str | None]:
        if self._trust is None:
            self._trust = _gemini_trust(self.agent, self.machine, self.folder)
        trusted, why = self._trust
        if trusted is True:
            return (), None
        if trusted is False:
            return (
                (),
                f"Gemini CLI does not trust this folder ({why}), so it runs no MCP server"
                " and no hook here; trust it with `/permissions trust` in Gemini CLI",
            )
        return (
            Wait(
                "folder-trust",
                "Gemini CLI runs no MCP server and no hook here, yours included, until you trust"
                " this folder: trust it when Gemini CLI asks",
            ),
        ), None


def _gemini_trust(agent: Agent, machine: Machine, folder: Path) -> tuple[bool | None, str]:
    """Whether Gemini CLI 0.61 trusts `folder` (None: it will ask), and what decides it:
    GEMINI_CLI_TRUST_WORKSPACE, `security.folderTrust.enabled: false` in the user settings, or
    the longest rule of trustedFolders.json (beside the user settings, or
    GEMINI_CLI_TRUSTED_FOLDERS_PATH) whose folder holds this one (TRUST_PARENT: the rule's
    parent folder)."""
    env = machine.environ
    if env.get("GEMINI_RESTRICTED_MODE") == "true":
        return False, "GEMINI_RESTRICTED_MODE=true"
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        said = env["GEMINI_CLI_TRUST_WORKSPACE"]
        return said == "true", f"GEMINI_CLI_TRUST_WORKSPACE={said}"
    user = agent.location("user", machine, folder).path
    if user is None:
        return None, ""
    security = host_waits.json_file(user, machine).get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return True, "folder trust is off in its settings"
    rules_path = machine.env_path("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or (
        user.parent / "trustedFolders.json"
    )
    rules = host_waits.json_file(rules_path, machine)
    here = Path(os.path.realpath(folder))
    best: tuple[int, object] = (-1, None)
    for rule, level in rules.items():
        where = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        effective = Path(os.path.realpath(where))
        if (here == effective or effective in here.parents) and len(rule) > best[0]:
            best = (len(rule), level)
    shown = machine.shown(rules_path)
    if best[1] == "DO_NOT_TRUST":
        return False, f"DO_NOT_TRUST in {shown}"
    if best[1] in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True, f"{best[1]} in {shown}"
    return None, ""
