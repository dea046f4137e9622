"""The seam between `offprompt init`/`remove`/`agents` and each agent's config files.

One `Agent` per host (claude_code.py, codex.py, …); the values they return are frozen dataclasses,
among them the guard's hook file (`GuardFile`), which guard_install.py edits; `Agent.mask` names
the host's mask (agents/mask/interface.py), None where it has none.
"""

from __future__ import annotations

import shlex
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from offprompt.agents.hook_wrapper import Answer
from offprompt.agents.machine import Machine

if TYPE_CHECKING:
    # Annotations only: the masks' package runs the hosts, whose settings go through files.py,
    # which takes this module's types.
    from offprompt.agents.mask.interface import HostMask

__all__ = [
    "SCOPES",
    "SERVER_NAME",
    "Agent",
    "Change",
    "ConfigChange",
    "Declaration",
    "GuardFile",
    "Hook",
    "HostWaits",
    "Location",
    "Machine",
    "Presence",
    "Scope",
    "ServerCommand",
    "Wait",
    "WaitKind",
]

# The key of our entry in every agent's config (DESIGN §9).
SERVER_NAME = "offprompt"

# "local": the agent's personal scope for one project (Claude Code: the project's entry in
# ~/.claude.json and .claude/settings.local.json), nothing a teammate gets from git; "project":
# the project's own files, shared through git; "user": the person's user configs (every project).
Scope = Literal["local", "project", "user"]
SCOPES: tuple[Scope, ...] = ("local", "project", "user")

# added/updated/unchanged (init), removed/absent (remove), unsupported (the agent has no config
# for that scope), failed (the file could not be read, understood or written; nothing changed).
ConfigChange = Literal[
    "added", "updated", "unchanged", "removed", "absent", "unsupported", "failed"
]


@dataclass(frozen=True)
class ServerCommand:
    """The command an agent runs to start `offprompt serve`."""

    command: str
    args: tuple[str, ...]

    def argv(self) -> tuple[str, ...]:
        return (self.command, *self.args)

    def __str__(self) -> str:
        return shlex.join(self.argv())


@dataclass(frozen=True)
class Presence:
    """Whether an agent seems installed, and the evidence (`claude on PATH`, `~/.codex exists`)."""

    found: bool
    evidence: str


@dataclass(frozen=True)
class Location:
    """The config file an agent reads for a scope, or why it has none (`path` None)."""

    scope: Scope
    path: Path | None
    why_not: str | None = None


@dataclass(frozen=True)
class Declaration:
    """offprompt declared in one config file, with the command found there (None if unreadable)."""

    agent: str
    scope: Scope
    path: Path
    command: tuple[str, ...] | None


@dataclass(frozen=True)
class Change:
    """What `init` or `remove` did to one agent's config, with a sentence for the person."""

    agent: str
    scope: Scope
    path: Path | None
    outcome: ConfigChange
    detail: str

    @property
    def failed(self) -> bool:
        return self.outcome == "failed"


@dataclass(frozen=True)
class GuardFile:
    """One host's settings file for the guard: where; the hook `events` it goes under
    (`PreToolUse`; Gemini CLI's `BeforeTool`; Cursor's three `before…` events); the shape of
    one entry; whether it takes Claude Code's deny rules; and `prune`, the folder init made for
    it, which remove takes out again when nothing else is left in it.

    Entries are nested (`{"matcher": …, "hooks": [{"type": "command", "command": …}]}`, the
    Claude Code shape) unless `flat` gives a flat entry's keys in order, the command's key
    holding None (Cursor: `(("command", None), ("failClosed", True))`). `version` is a top-level
    `"version"` the file must carry (Cursor's and Copilot's hook files).

    DESIGN §9 "Hooks fail closed": `hook` gives a nested entry's hook its other fields, the
    host's time limit and failure mode where it has them (Claude Code: `timeout`,
    `onFailure`); a flat entry carries them in `flat`. `answer` is how the host takes
    "blocked" (exit 2, or also Cursor's or Copilot's deny on stdout), which the command's
    wrapper gives when the guard cannot run; `shared`: the project's own files (a team's), whose
    wrapper, where offprompt is not installed, blocks only a call naming a dotenv file.
    """

    path: Path
    shown: str
    deny: bool = False
    matcher: str | None = None
    events: tuple[str, ...] = ("PreToolUse",)
    flat: tuple[tuple[str, object], ...] | None = None
    version: int | None = None
    prune: Path | None = None
    hook: tuple[tuple[str, object], ...] = ()
    answer: Answer = "exit"
    shared: bool = False

    @property
    def paths(self) -> tuple[tuple[str, str], ...]:
        """Where each event's list of entries sits in the file: `("hooks", event)`."""
        return tuple(("hooks", event) for event in self.events)

    def entry(self, command: str) -> dict[str, object]:
        """Our entry, running `command`."""
        if self.flat is not None:
            return {k: command if v is None else v for k, v in self.flat}
        hook = {"type": "command", "command": command, **dict(self.hook)}
        if self.matcher is None:
            return {"hooks": [hook]}
        return {"matcher": self.matcher, "hooks": [hook]}


def guard_file_for(
    scope: Scope,
    machine: Machine,
    project: Path | None,
    *,
    user: Path | None,
    in_project: str | None,
    local: str | None = None,
    user_prune: Path | None = None,
    deny: bool = False,
    matcher: str | None = None,
    events: tuple[str, ...] = ("PreToolUse",),
    flat: tuple[tuple[str, object], ...] | None = None,
    version: int | None = None,
    hook: tuple[tuple[str, object], ...] = (),
    answer: Answer = "exit",
) -> GuardFile | None:
    """An agent's hook file for `scope`: `user` for the user scope, `in_project` (a path with
    `/`) under the project for the project scope and `local` for the personal one, whose first
    folder remove prunes; None where the agent has none."""
    inside = local if scope == "local" else in_project
    if scope == "user":
        if user is None:
            return None
        path, prune = user, user_prune
    elif project is None or inside is None:
        return None
    else:
        path = project.joinpath(*inside.split("/"))
        prune = project / inside.split("/")[0]
    return GuardFile(
        path,
        machine.shown(path),
        deny=deny,
        matcher=matcher,
        events=events,
        flat=flat,
        version=version,
        prune=prune,
        hook=hook,
        answer=answer,
        shared=scope == "project",
    )


WaitKind = Literal["approval", "folder-trust", "hook-trust"]


@dataclass(frozen=True)
class Wait:
    """Something the agent still waits for from the person before offprompt works there."""

    kind: WaitKind
    detail: str


@dataclass(frozen=True)
class Hook:
    """One of our hooks in a guard file: its command and where it sits (for Codex's trust)."""

    path: Path
    event: str
    group: int
    handler: int
    entry: Mapping[str, Any]
    command: str


class HostWaits:
    """What one agent still waits for from the person in one folder (DESIGN §9), read from the
    files where that host's version records it, once per agent (`Agent.waits`): a host that
    asks for nothing keeps this one."""

    def about(
        self, kind: str, scope: Scope, hook: Hook | None = None
    ) -> tuple[tuple[Wait, ...], str | None]:
        """The waits for one declaration (`kind` server or guard, the guard's `hook`) and,
        when the agent will not run it, why not. ConfigError when the agent's file is
        unreadable."""
        return (), None


class Agent(ABC):
    """One agent host: where it keeps MCP servers, and how to add or take out ours.

    `project` is the project folder for the project and local scopes (ignored for the user
    scope). Methods never raise for a config they cannot handle: `install`/`remove` answer a
    `failed` Change, `declaration` raises ConfigError so `offprompt agents` can say which file
    is unreadable.
    """

    name: ClassVar[str]  # claude-code, codex, cursor, vscode, gemini, windsurf, zed
    title: ClassVar[str]  # Claude Code, Codex, …
    # Said after "added …" for the project scope, when the agent needs a step from the person.
    project_note: ClassVar[str] = ""
    # Why the guard (DESIGN §14) is not installed for this agent; "" when it is supported.
    unguarded: ClassVar[str] = ""
    guard_note: ClassVar[str] = ""  # said after "added the guard …", like project_note
    guard_note_project_only: ClassVar[bool] = False  # the note is about project hooks only
    guard_update_note: ClassVar[str] = ""  # said after "updated the guard …"
    # What a team must pass on once `init --shared` wrote this agent's hook (said, one line).
    team_note: ClassVar[str] = ""
    # Hook events only some versions of the host know (older ones refuse to start with them):
    # left out of a team's shared files, which every teammate's version must read.
    version_events: ClassVar[tuple[str, ...]] = ()
    # Why the agent has no personal scope for a project (its `location("local")` says so, and
    # init falls back to the user config); "" for an agent that has one.
    no_local_reason: ClassVar[str] = ""
    # The host's mask (DESIGN §15, agents/mask/), or None for a host offprompt cannot mask.
    mask: ClassVar[HostMask | None] = None

    @property
    def no_local(self) -> str:
        """The sentence for an agent without a personal project scope."""
        return self.no_local_reason or f"{self.title} has no personal project scope"

    @abstractmethod
    def presence(self, machine: Machine) -> Presence:
        """Whether the agent is on this machine: its program on PATH or its user folder exists."""

    @abstractmethod
    def location(self, scope: Scope, machine: Machine, project: Path | None) -> Location:
        """The config file for `scope`."""

    @abstractmethod
    def install(
        self, scope: Scope, machine: Machine, project: Path | None, server: ServerCommand
    ) -> Change:
        """Declare offprompt (or bring our entry up to date), keeping everything else."""

    @abstractmethod
    def remove(self, scope: Scope, machine: Machine, project: Path | None) -> Change:
        """Take our entry out, keeping everything else."""

    @abstractmethod
    def declaration(
        self, scope: Scope, machine: Machine, project: Path | None
    ) -> Declaration | None:
        """Our entry in the config for `scope`, or None. ConfigError when it cannot be read."""

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        """The settings file that takes the guard's hook for `scope`; None when unsupported."""
        return None

    def waits(self, machine: Machine, folder: Path) -> HostWaits:
        """What the agent still waits for from the person in `folder` (its approval of a
        server, its trust of the folder or of the hook), for `offprompt agents`."""
        return HostWaits()

    def unknown_events(self, machine: Machine, folder: Path | None) -> tuple[str, ...]:
        """The events of `guard_file` the host installed here does not know (asked of its
        version): init leaves them out, since a host may reject a name it does not know;
        `remove` and `agents` still read every event."""
        return ()

    def warnings(self, machine: Machine, folder: Path) -> tuple[str, ...]:
        """What in the agent's own settings for `folder` lets the values reach the model although
        offprompt is installed (a permission mode that lets it change its own settings unasked,
        a setting that makes it ignore the mask), for `offprompt agents`: said, never a failure.
        ConfigError when a settings file cannot be read."""
        return ()

    def private_files(self, scope: Scope, project: Path | None) -> tuple[Path, ...]:
        """Files inside the project that `scope` writes and git must never add (Claude Code's
        settings.local.json); init makes git ignore them first."""
        return ()


def describe(agent: Agent, outcome: ConfigChange, scope: Scope, shown: str) -> str:
    """The words `init`/`remove` print for `outcome` on the config file `shown`."""
    words = {
        "added": f"added offprompt to {shown}",
        "updated": f"updated offprompt in {shown}",
        "unchanged": f"already there in {shown}",
        "removed": f"removed offprompt from {shown}",
        "absent": f"not declared in {shown}",
    }.get(outcome, outcome)
    if outcome == "added" and scope == "project" and agent.project_note:
        words += f" ({agent.project_note})"
    if outcome in ("added", "updated", "unchanged", "removed") and scope == "local":
        words += f" ({agent.title}'s local scope: this project, for you only)"
    return words


def found_by(machine: Machine, programs: tuple[str, ...], folders: tuple[Path, ...]) -> Presence:
    """The usual rule: any of `programs` on PATH, or any of `folders` exists."""
    for program in programs:
        where = machine.which(program)
        if where:
            return Presence(True, f"{program} on PATH: {where}")
    for folder in folders:
        if folder.is_dir():
            return Presence(True, f"{machine.shown(folder)} exists")
    looked = [f"{p} on PATH" for p in programs] + [machine.shown(f) for f in folders]
    return Presence(False, "no " + ", no ".join(looked))
