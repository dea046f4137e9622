"""Claude Code: its local scope (the project's entry in `~/.claude.json`, hooks and deny rules in
`.claude/settings.local.json`), `.mcp.json` in the project, top-level `mcpServers` of
`~/.claude.json` for the user.

Found when `claude` is on PATH or its folder exists (`$CLAUDE_CONFIG_DIR`, else `~/.claude`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.interface import (
    GuardFile,
    Location,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import JsonAgent
from offprompt.agents.mask.claude_code import ClaudeCodeMask
from offprompt.agents.mask.interface import HostMask

# The personal settings file Claude Code keeps in the project (never meant to be committed).
LOCAL_SETTINGS = ".claude/settings.local.json"


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

    name = "claude-code"
    title = "Claude Code"
    section = "mcpServers"
    project_file = ".mcp.json"
    project_note = "Claude Code asks you to approve it the next time it starts in this project"
    mask: ClassVar[HostMask | None] = ClaudeCodeMask()

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
            # Its hook schema: `timeout` in seconds; `onFailure: "block"` makes a hook that
            # could not start, timed out or exited other than 0 or 2 count as exit 2.
            hook=(("timeout", HOST_LIMIT), ("onFailure", "block")),
        )

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
