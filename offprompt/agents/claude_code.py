"""Claude Code: its local scope (the project's entry in `~/.claude.json`, hooks and deny rules in
`.claude/settings.local.json`), `.mcp.json` in the project, top-level `mcpServers` of
`~/.claude.json` for the user.

Found when `claude` is on PATH or its folder exists (`$CLAUDE_CONFIG_DIR`, else `~/.claude`). Its
folder trust and approval of a project server are read from its own files (`ClaudeCode.waits`).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.host_waits import json_file, names_us, project_keys
from offprompt.agents.interface import (
    SERVER_NAME,
    Agent,
    GuardFile,
    Hook,
    HostWaits,
    Location,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    Wait,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import JsonAgent
from offprompt.agents.mask import claude_switches
from offprompt.agents.mask.claude_code import ClaudeCodeMask
from offprompt.agents.mask.interface import HostMask
from offprompt.agents.version_check import Probe, run_checks
from offprompt.hosts import claude_code as facts

# The personal settings file Claude Code keeps in the project (never meant to be committed).
LOCAL_SETTINGS = ".claude/settings.local.json"
# The permission mode (`permissions.defaultMode`, Claude Code 2.1.328's settings schema) in which
# it runs every tool call, its own settings' edits included, without asking.
BYPASS = "bypassPermissions"
# Claude Code 2.1.332 runs a skill's shell commands through this event, which PreToolUse never
# sees; versions before it reject the name at start (reference/hosts-observed.md, DESIGN §14).
SKILL_EVENT = "PreSkillShellCommand"
SKILL_EVENT_SINCE = (2, 1, 332)
# Where Claude Code reads the managed (machine-wide) settings, which outrank every other file:
# `managed-settings.json` and the drop-ins of `managed-settings.d/` (its binary, 2.1.332).
MANAGED_FOLDERS = {
    "linux": Path("/etc/claude-code"),
    "darwin": Path("/Library/Application Support/ClaudeCode"),
    "win32": Path("C:/Program Files/ClaudeCode"),
}
# Claude Code 2.1.337's managed switch that stops local (stdio) MCP servers, and the managed
# allowlist that admits one anyway (an entry `{"serverName": …}` or `{"serverCommand": […]}`).
LOCAL_OFF = "disableLocalMcpServers"
ALLOWED = "allowedMcpServers"
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def version(answer: str | None) -> tuple[int, int, int] | None:
    """The version in `claude --version`'s first line ("2.1.332 (Claude Code)"), or None."""
    found = _VERSION.search(answer or "")
    return None if found is None else (int(found[1]), int(found[2]), int(found[3]))


def project_key(folder: Path) -> str:
    """The key of `folder`'s entry in `projects` of ~/.claude.json, as Claude Code 2.1.328 makes
    it (observed with `claude mcp add -s local`): the real path of the git repository's main
    working tree that holds the folder (a linked worktree counts as its main one), else the
    folder's own real path."""
    real = Path(os.path.realpath(folder))
    for probe in (real, *real.parents):
        dot_git = probe / ".git"
        if dot_git.is_dir():
            return str(probe)
        if dot_git.is_file():
            return str(_main_tree(dot_git) or probe)
    return str(real)


def _main_tree(dot_git: Path) -> Path | None:
    """The main working tree of the worktree whose `.git` file is `dot_git`, or None."""
    try:
        first = dot_git.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, UnicodeDecodeError, IndexError):
        return None
    if not first.startswith("gitdir:"):
        return None
    gitdir = Path(first.removeprefix("gitdir:").strip())
    if not gitdir.is_absolute():
        gitdir = dot_git.parent / gitdir
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    common_dir = Path(os.path.realpath(gitdir / common))
    return common_dir.parent if common_dir.name == ".git" else None


class ClaudeCode(JsonAgent):
    """Entry: `{"type": "stdio", "command": …, "args": [...]}` (what `claude mcp add` writes).

    No timeout: Claude Code waits for MCP tool calls far longer than offprompt's 300 s.
    """

    name = facts.HOST["name"]
    version_events = (SKILL_EVENT,)
    title = facts.HOST["title"]
    section = "mcpServers"
    project_file = ".mcp.json"
    project_note = "Claude Code asks you to approve it the next time it starts in this project"
    mask: ClassVar[HostMask | None] = ClaudeCodeMask()

    def waits(self, machine: Machine, folder: Path) -> HostWaits:
        return _ClaudeWaits(self, machine, folder)

    def location(self, scope: Scope, machine: Machine, project: Path | None) -> Location:
        if scope == "local":
            if project is None:
                return Location(scope, None, "no project folder was given")
            return Location(scope, self.user_file(machine))
        return super().location(scope, machine, project)

    def section_path(self, scope: Scope, project: Path | None) -> tuple[str, ...]:
        if scope == "local" and project is not None:
            return ("projects", project_key(project), self.section)
        return (self.section,)

    def lock_file(self, path: Path) -> Path | None:
        # Claude Code rewrites .claude.json whole, under this lock (proper-lockfile's folder).
        return path.with_name(path.name + ".lock") if path.name == ".claude.json" else None

    def new_mode(self, scope: Scope) -> int:
        # Claude Code keeps .claude.json (which holds its sign-in state) at 0600.
        return 0o600 if scope in ("local", "user") else 0o666

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # settings.json, not .mcp.json: hooks and permissions live there (project or user), and
        # the personal settings.local.json for the local scope.
        return guard_file_for(
            scope,
            machine,
            project,
            user=self._config_dir(machine) / "settings.json",
            in_project=".claude/settings.json",
            local=LOCAL_SETTINGS,
            deny=True,
            matcher="*",
            events=("PreToolUse", SKILL_EVENT),
            # Its hook schema: `timeout` in seconds; `onFailure: "block"` makes a hook that
            # could not start, timed out or exited other than 0 or 2 count as exit 2.
            hook=(("timeout", HOST_LIMIT), ("onFailure", "block")),
            # A block also answers in JSON, so the model reads the reason, not the script.
            answer="claude",
        )

    def unknown_events(self, machine: Machine, folder: Path | None) -> tuple[str, ...]:
        # Asked of the `claude` on PATH; none there, or a version it does not say: left out, as
        # an older host would refuse to start with it.
        program = machine.which("claude")
        if program is None:
            return (SKILL_EVENT,)
        probe = Probe((program, "--version"), folder or machine.home)
        check = run_checks([probe], machine)[probe]
        found = version(check.version) if check.ok else None
        return () if found is not None and found >= SKILL_EVENT_SINCE else (SKILL_EVENT,)

    def warnings(self, machine: Machine, folder: Path) -> tuple[str, ...]:
        return (*self._mode_warnings(machine, folder), *self._mask_warnings(machine, folder))

    def _mask_warnings(self, machine: Machine, folder: Path) -> tuple[str, ...]:
        # DESIGN §15 "what masked means per session": only where the sandbox is on here.
        local = folder.joinpath(*LOCAL_SETTINGS.split("/"))
        sandbox = json_file(local, machine).get("sandbox")
        if not isinstance(sandbox, dict) or sandbox.get("enabled") is not True:
            return ()
        layers = (
            *_managed_files(machine.platform),
            local,
            folder / ".claude" / "settings.json",
            self._config_dir(machine) / "settings.json",
        )

        def read(path: Path) -> dict[str, Any]:
            return json_file(path, machine)

        return (
            *claude_switches.socket_warnings(layers, read, machine.shown),
            claude_switches.COMMAND_LINE,
            claude_switches.START_FOLDER,
        )

    def _mode_warnings(self, machine: Machine, folder: Path) -> tuple[str, ...]:
        # DESIGN §15 "the guard cannot be written away": in bypassPermissions mode Claude Code
        # writes its own settings without asking (its Write tool on settings.local.json turns
        # off the hook and the sandbox). The managed settings outrank the rest; among the
        # others the most specific file that sets a mode decides it.
        for path in (
            *_managed_files(machine.platform),
            folder.joinpath(*LOCAL_SETTINGS.split("/")),
            folder / ".claude" / "settings.json",
            self._config_dir(machine) / "settings.json",
        ):
            perms = json_file(path, machine).get("permissions")
            mode = perms.get("defaultMode") if isinstance(perms, dict) else None
            if mode is None:
                continue
            if mode != BYPASS:
                return ()
            managed = path.parent in _managed_folders(machine.platform)
            fix = (
                "whoever manages this machine can set another mode there"
                if managed
                else 'set another mode there ("default" or "acceptEdits")'
            )
            return (
                f'{machine.shown(path)} sets permissions.defaultMode to "{BYPASS}": Claude Code'
                " then changes its own settings without asking you, so it can turn the guard"
                f" and the mask off; {fix}",
            )
        return ()

    def private_files(self, scope: Scope, project: Path | None) -> tuple[Path, ...]:
        if scope == "local" and project is not None:
            return (project.joinpath(*LOCAL_SETTINGS.split("/")),)
        return ()

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


def _local_servers_off(machine: Machine) -> str | None:
    """Claude Code 2.1.337's managed `disableLocalMcpServers` (its settings schema): set in any
    managed settings file, a local (stdio) server starts only when the `allowedMcpServers` of
    the managed file read last that sets one admits it. The person's own files cannot set it."""
    files = [(path, json_file(path, machine)) for path in _managed_files(machine.platform)]
    switch = next((p for p, data in files if data.get(LOCAL_OFF) is True), None)
    if switch is None:
        return None
    allowed: list[object] = next(
        (d[ALLOWED] for _, d in files if isinstance(d.get(ALLOWED), list)), []
    )
    if any(isinstance(e, dict) and e.get("serverName") == SERVER_NAME for e in allowed):
        return None
    entry = json.dumps({"serverName": SERVER_NAME})
    return (
        f"{machine.shown(switch)} sets {LOCAL_OFF}: Claude Code starts no local MCP server,"
        f" offprompt included, unless the managed {ALLOWED} admits it; whoever manages this"
        f" machine can add {entry} to {ALLOWED} there"
    )


def _managed_folders(platform: str) -> tuple[Path, ...]:
    folder = MANAGED_FOLDERS.get(platform)
    return () if folder is None else (folder, folder / "managed-settings.d")


def _managed_files(platform: str) -> tuple[Path, ...]:
    """The managed settings files, the drop-ins (read after the main file) last first, as a
    later drop-in wins."""
    folder = MANAGED_FOLDERS.get(platform)
    if folder is None:
        return ()
    try:
        drop_ins = sorted((folder / "managed-settings.d").glob("*.json"), reverse=True)
    except OSError:
        drop_ins = []
    return (*drop_ins, folder / "managed-settings.json")


# What Claude Code 2.1.328 waits for --------------------------------------------------------


class _ClaudeWaits(HostWaits):
    """Its folder trust, and its approval of a server from the project's .mcp.json."""

    def __init__(self, agent: Agent, machine: Machine, folder: Path) -> None:
        self.agent, self.machine, self.folder = agent, machine, folder
        self._state: _ClaudeState | None = None

    def about(
        self, kind: str, scope: Scope, hook: Hook | None = None
    ) -> tuple[tuple[Wait, ...], str | None]:
        if kind == "server":
            # An administrator's switch outranks every choice of the person's (2.1.337).
            stopped = _local_servers_off(self.machine)
            if stopped is not None:
                return (), stopped
        if kind != "server" or scope == "user":
            # Its trust dialog comes before anything runs in the folder, so it is said once,
            # on the server; user servers are Claude Code's own, the same in every folder.
            return (), None
        state = self._state or _claude_state(self.agent, self.machine, self.folder)
        self._state = state
        waits: list[Wait] = []
        if not state.trusted:
            waits.append(
                Wait(
                    "folder-trust",
                    "Claude Code asks whether you trust this folder when it starts here:"
                    " answer yes",
                )
            )
        if scope == "project":
            if state.rejected is not None:
                return tuple(waits), (
                    f"you declined offprompt in Claude Code (disabledMcpjsonServers in"
                    f" {state.rejected}); run `claude mcp reset-project-choices` here, then"
                    " approve it"
                )
            if not state.approved:
                waits.append(
                    Wait(
                        "approval",
                        "Claude Code asks you to approve offprompt, a server from .mcp.json,"
                        " when it starts here: approve it",
                    )
                )
        return tuple(waits), None


@dataclass(frozen=True)
class _ClaudeState:
    trusted: bool
    approved: bool
    rejected: str | None  # the file that declines offprompt


def _claude_state(agent: Agent, machine: Machine, folder: Path) -> _ClaudeState:
    """Folder trust and the approval of the project's .mcp.json `offprompt`, as Claude Code
    2.1.328 decides them (checked against `claude mcp list`; tests/real_hosts/test_doctor.py).

    Trust is `projects[<folder>].hasTrustDialogAccepted` in ~/.claude.json (the folder or the
    git work tree holding it; a parent folder's trust does not count). Approval: a
    `disabledMcpjsonServers` naming it in any settings file or the legacy project entry
    declines it; `enabledMcpjsonServers` or `enableAllProjectMcpServers` approves it from the
    user settings always, and from the project's settings, its settings.local.json or the legacy
    project entry only in a trusted folder.
    """
    user_json = agent.location("user", machine, folder).path
    config = json_file(user_json, machine) if user_json is not None else {}
    projects = config.get("projects")
    projects = projects if isinstance(projects, dict) else {}
    entries = [projects.get(key) for key in project_keys(folder)]
    legacy = [e for e in entries if isinstance(e, dict)]
    trusted = any(e.get("hasTrustDialogAccepted") is True for e in legacy)
    user_settings = agent.guard_file("user", machine, folder)
    sources: list[tuple[str, dict[str, Any], bool]] = []
    if user_settings is not None:
        sources.append(
            (user_settings.shown, json_file(user_settings.path, machine), True),
        )
    for name in ("settings.json", "settings.local.json"):
        path = folder / ".claude" / name
        sources.append((machine.shown(path), json_file(path, machine), False))
    shown_json = machine.shown(user_json) if user_json is not None else "~/.claude.json"
    sources.extend((shown_json, entry, False) for entry in legacy)
    rejected = next(
        (where for where, s, _ in sources if names_us(s.get("disabledMcpjsonServers"))), None
    )
    approved = any(
        (always or trusted)
        and (
            s.get("enableAllProjectMcpServers") is True or names_us(s.get("enabledMcpjsonServers"))
        )
        for _, s, always in sources
    )
    return _ClaudeState(trusted, approved, rejected)
