"""`offprompt agents` is the doctor (DESIGN §9): for each place offprompt is declared, whether the
command it names runs here, what the agent still waits for from the person, and what keeps the
values from the model there. Facts only; cli/doctor.py prints them.

Commands are checked by running them with `--version` (the server's `… serve` and the guard's
`… guard` with their last word swapped), all at once, each killed after its time limit.
Declarations are read through the `Agent` interface and guard_install; what a host still waits
for (approval, trust) is its own `Agent.waits`, read from its files as its version records it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from offprompt.agents import command as server_command
from offprompt.agents import files, guard_install, hook_wrapper
from offprompt.agents.interface import (
    SCOPES,
    SERVER_NAME,
    Agent,
    Hook,
    Machine,
    Presence,
    Scope,
    Wait,
)
from offprompt.agents.mask.interface import MaskPlace, MaskState
from offprompt.agents.mask.uncovered import open_dotenv, open_line
from offprompt.agents.version_check import TIMEOUT, Check, Probe, run_checks
from offprompt.configedit import jsonc
from offprompt.errors import ConfigError

__all__ = [
    "INSTALL",
    "TIMEOUT",
    "AgentReport",
    "Check",
    "Finding",
    "Protection",
    "Wait",
    "examine",
]

Protection = Literal["masked", "guarded", "nothing"]
# Where a check's `why` goes on to say how a teammate installs offprompt (_with_install_line).
INSTALL = "; install offprompt"
FindingKind = Literal["server", "guard"]


@dataclass(frozen=True)
class Finding:
    """One declaration: the server entry (`command` its words) or the guard hook (`command` the
    hook's command string as the single word), with what was found about it. `blocked` says why
    the agent will not run it although it is declared (the person turned it off)."""

    kind: FindingKind
    scope: Scope
    path: Path
    command: tuple[str, ...] | None
    check: Check
    waits: tuple[Wait, ...] = ()
    blocked: str | None = None
    # A guard's hook events that hold it (Claude Code's PreToolUse and PreSkillShellCommand).
    events: tuple[str, ...] = ()

    @property
    def works(self) -> bool:
        """False when it would not work: its command does not run, or the agent will not run it."""
        return self.check.ok is not False and self.blocked is None and self.command is not None

    @property
    def fails_open(self) -> bool:
        """A guard hook an older init wrote (a bare `… offprompt guard`): it works while
        offprompt starts, but lets calls through when it cannot (guard_install.fails_closed)."""
        if self.kind != "guard" or not self.command:
            return False
        return not guard_install.fails_closed(self.command[0])

    @property
    def active(self) -> bool:
        """It works now, checked, with nothing left to wait for."""
        return self.works and self.check.ok is True and not self.waits


@dataclass(frozen=True)
class AgentReport:
    """Everything `offprompt agents` says about one agent."""

    agent: Agent
    presence: Presence
    servers: tuple[Finding, ...]
    guards: tuple[Finding, ...]
    problems: tuple[str, ...]
    protection: Protection
    protection_why: str
    # What the agent's own settings allow that undoes the guard or the mask (Agent.warnings):
    # said, not `broken`, since everything declared still runs.
    warnings: tuple[str, ...] = ()

    @property
    def broken(self) -> bool:
        """Something declared would not work, or a config could not be read."""
        return bool(self.problems) or not all(f.works for f in (*self.servers, *self.guards))


def examine(
    agents: Sequence[Agent],
    machine: Machine,
    folder: Path,
    *,
    timeout: float = TIMEOUT,
    mask_record: Path | None = None,
) -> list[AgentReport]:
    """The doctor's facts for each of `agents`, for the project `folder` and the user configs;
    with `mask_record` (mask.json, beside the journal) also what each agent's mask does there."""
    # $HOME holds user configs, not a project's: a .mcp.json there is not a project declaration.
    at_home = folder == machine.home.resolve()
    scopes = tuple(s for s in SCOPES if s == "user" or not at_home)
    found: list[tuple[Agent, Presence, list[_Pending], list[str]]] = []
    for agent in agents:
        pending: list[_Pending] = []
        problems: list[str] = []
        for scope in scopes:
            try:
                declared = agent.declaration(scope, machine, folder)
            except ConfigError as e:
                problems.append(str(e))
            else:
                if declared is not None:
                    plan = _server_plan(declared.command, scope, machine, folder)
                    pending.append(_Pending("server", scope, declared.path, declared.command, plan))
            try:
                hooks = _guard_hooks(agent, scope, machine, folder)
            except ConfigError as e:
                problems.append(str(e))
                continue
            for hook in hooks:
                plan = _guard_plan(hook.command, scope, machine, folder)
                pending.append(_Pending("guard", scope, hook.path, (hook.command,), plan, hook))
        pending = _with_install_line(pending)
        found.append((agent, agent.presence(machine), pending, _unique(problems)))
    wanted = [p.plan for _, _, items, _ in found for p in items if isinstance(p.plan, Probe)]
    results = run_checks(wanted, machine, timeout=timeout)
    reports = []
    for agent, presence, items, problems in found:
        waits = agent.waits(machine, folder)
        findings: dict[Finding, list[str]] = {}
        for item in items:
            check = results[item.plan] if isinstance(item.plan, Probe) else item.plan
            try:
                said, blocked = waits.about(item.kind, item.scope, item.hook)
            except ConfigError as e:
                problems.append(str(e))
                said, blocked = (), None
            finding = Finding(item.kind, item.scope, item.path, item.command, check, said, blocked)
            # One hook under several events (Cursor's three) is one finding when all is alike.
            events = findings.setdefault(finding, [])
            if item.hook is not None and item.hook.event not in events:
                events.append(item.hook.event)
        merged = [dataclasses.replace(f, events=tuple(e)) for f, e in findings.items()]
        servers = tuple(f for f in merged if f.kind == "server")
        guards = tuple(f for f in merged if f.kind == "guard")
        protection, why = _protection(agent, guards, machine)
        opened: tuple[str, ...] = ()
        if agent.mask is not None and mask_record is not None and not at_home:
            place = MaskPlace(folder, machine, mask_record)
            state = agent.mask.check(place)
            protection, why = _with_mask(state, protection, why)
            if state is not None and state.kind == "masked" and state.holds:
                opened = tuple(open_line(f, agent.title) for f in open_dotenv(place))
        try:
            warnings = (
                *agent.warnings(machine, folder),
                *_missing_events(agent, guards, machine, folder),
                *opened,
            )
        except ConfigError as e:
            problems.append(str(e))
            warnings = ()
        reports.append(
            AgentReport(
                agent,
                presence,
                servers,
                guards,
                tuple(_unique(problems)),
                protection,
                why,
                warnings,
            )
        )
    return reports


def _with_install_line(pending: list[_Pending]) -> list[_Pending]:
    """A team's files (project scope) naming a program this machine lacks: the teammate has
    not installed offprompt (issue 46), so the line says how, naming the source `init --shared`
    recorded (the hook's, or a uvx `--from`), else offprompt's README (DESIGN §9)."""
    shared = [p for p in pending if p.scope == "project" and p.command]
    sources = (_source_of(p) for p in shared)
    source = next((s for s in sources if s is not None), None)
    how = (
        f"{INSTALL}: `pipx install {source}`" if source else f"{INSTALL} (see the offprompt README)"
    )
    return [
        dataclasses.replace(p, plan=Check(False, p.plan.why + how))
        if p in shared and isinstance(p.plan, Check) and p.plan.why.endswith("is not on PATH")
        else p
        for p in pending
    ]


def _source_of(item: _Pending) -> str | None:
    words = item.command or ()
    if item.kind == "guard":
        try:
            split = shlex.split(words[0])
        except ValueError:
            return None
        recorded = hook_wrapper.recorded_source(split)
        if recorded is not None:
            return server_command.shareable_source(recorded)
        words = guard_install.guard_argv(words[0]) or ()
    return server_command.shareable_source(server_command.from_source(tuple(words)))


# --- running the commands ----------------------------------------------------------------------


# --- what to run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Pending:
    kind: FindingKind
    scope: Scope
    path: Path
    command: tuple[str, ...] | None
    plan: Probe | Check  # what to run, or the answer already known
    hook: Hook | None = None


def _server_plan(
    words: tuple[str, ...] | None, scope: Scope, machine: Machine, folder: Path
) -> Probe | Check:
    """The argv that checks a server command (`… serve` → `… --version`), or why none runs."""
    if not words:
        return Check(False, f"the {SERVER_NAME!r} entry has no command and args offprompt can read")
    if words[-1] != "serve" or not _names_offprompt(words[:-1]):
        return Check(
            None,
            "not checked: it is not `… offprompt … serve`, so offprompt does not run it here",
        )
    return _plan(words[:-1], scope, machine, folder)


def _guard_plan(command: str, scope: Scope, machine: Machine, folder: Path) -> Probe | Check:
    """The argv that checks the guard's program (`… guard` → `… --version`)."""
    words = guard_install.guard_argv(command)
    if words is None:
        return Check(None, "not checked: offprompt cannot tell which program this hook runs")
    return _plan(words[:-1], scope, machine, folder)


def _plan(words: tuple[str, ...], scope: Scope, machine: Machine, folder: Path) -> Probe | Check:
    program, why = _resolve(words[0], machine, folder)
    if program is None:
        return Check(False, why)
    ran = (str(program), *words[1:], "--version")
    if scope != "project":
        # The person's own configs: run as the agent would, in the project.
        return Probe(ran, folder)
    # A project's shared files may come from anyone who can push to it, and the agent asks the
    # person before running what they name: offprompt runs only the plain shapes init writes
    # there, from the home folder (so no project config of uv's steers it), nothing else.
    refused = _unshared(words, program, folder)
    if refused is not None:
        return Check(
            None,
            f"not run: {refused}, and a file the project shares names it; check it yourself"
            f" with `{shlex.join((*words, '--version'))}`",
        )
    return Probe(ran, machine.home)


# The programs a shared file's command may start for the check: offprompt itself, or the tool
# runners init writes for a team (`uvx offprompt serve`, `uv tool run …`, `pipx run …`).
_SHARED_PROGRAMS = ("offprompt", "uvx", "uv", "pipx")


def _unshared(words: tuple[str, ...], program: Path, folder: Path) -> str | None:
    """Why offprompt does not run this command from a project's shared file, or None."""
    if program.is_relative_to(folder):
        return f"{words[0]} is inside the project"
    name = program.name.lower().removesuffix(".exe")
    if name not in _SHARED_PROGRAMS:
        return f"{words[0]} is not offprompt, uvx, uv or pipx"
    if name == "uv" and tuple(words[1:3]) != ("tool", "run"):
        return "uv runs it only as `uv tool run`"
    for word in words[1:]:
        if any(c in word for c in "/\\") or word.startswith((".", "~")):
            return f"{word} names a path or an address"
    # Only the exact shapes init writes: any option (`--from`, `--with`, `--spec`, `--index`)
    # or another package name would have the runner fetch and run a package the file chose.
    runner = _SHARED_SHAPES[name]
    given = words[1:]
    if tuple(given[: len(runner)]) != runner or len(given) != len(runner) + (name != "offprompt"):
        return f"`{shlex.join(words)}` is not a shape offprompt init writes"
    if name != "offprompt" and not _OFFPROMPT_PACKAGE.fullmatch(given[-1]):
        return f"{given[-1]} is not the offprompt package"
    return None


# What each shared program is given before the package name; `offprompt` itself takes nothing.
_SHARED_SHAPES: dict[str, tuple[str, ...]] = {
    "offprompt": (), "uvx": (), "uv": ("tool", "run"), "pipx": ("run",),
}  # fmt: skip
# `offprompt`, or it pinned to a release (`offprompt==1.2.0`, `offprompt@1.2.0`).
_OFFPROMPT_PACKAGE = re.compile(r"offprompt(?:(?:==|@)[0-9][0-9A-Za-z.+!-]*)?", re.IGNORECASE)


def _resolve(word: str, machine: Machine, folder: Path) -> tuple[Path | None, str]:
    """The program `word` names, as the agent would find it (the project is its folder), or
    None and why not."""
    if os.sep in word or (os.altsep and os.altsep in word):
        path = Path(word).expanduser()
        path = path if path.is_absolute() else folder / path
        if not path.exists():
            return None, f"{word} does not exist"
        if not path.is_file():
            return None, f"{word} is not a file"
        if not os.access(path, os.X_OK):
            return None, f"{word} is not executable"
        return Path(os.path.abspath(path)), ""
    found = machine.which(word)
    if found is None:
        return None, f"`{word}` is not on PATH"
    return Path(os.path.abspath(found)), ""


def _names_offprompt(words: Sequence[str]) -> bool:
    return any("offprompt" in w for w in words)


def _guard_hooks(agent: Agent, scope: Scope, machine: Machine, folder: Path) -> list[Hook]:
    """Our hooks in `agent`'s guard file for `scope` (guard_install decides which are ours)."""
    if guard_install.guarded(agent, scope, machine, folder) is None:
        return []
    gf = agent.guard_file(scope, machine, folder)
    if gf is None:
        return []
    text = files.read_text(gf.path, gf.shown) or ""
    try:
        root = jsonc.parse(text).root.value
    except jsonc.JsoncError as e:
        raise ConfigError(
            f"{gf.shown} is not valid JSON ({e}); fix it, then run this again. Nothing was changed."
        ) from None
    hooks: list[Hook] = []
    table = root.get("hooks") if isinstance(root, dict) else None
    for event in gf.events:
        groups = table.get(event) if isinstance(table, dict) else None
        for g, group in enumerate(groups if isinstance(groups, list) else []):
            if not isinstance(group, dict):
                continue
            handlers = group.get("hooks") if gf.flat is None else [group]
            for h, handler in enumerate(handlers if isinstance(handlers, list) else []):
                command = handler.get("command") if isinstance(handler, dict) else None
                if isinstance(command, str) and guard_install.guard_argv(command) is not None:
                    hooks.append(Hook(gf.path, event, g, h, group, command))
    return hooks


def _missing_events(
    agent: Agent, guards: Sequence[Finding], machine: Machine, folder: Path
) -> tuple[str, ...]:
    """A guard file missing our hook under an event the installed host knows (Claude Code
    upgraded to 2.1.332 after init: a skill's shell commands pass no guard). The host's version
    is asked only when an event is missing."""
    held: dict[tuple[Scope, Path], set[str]] = {}
    for f in guards:
        held.setdefault((f.scope, f.path), set()).update(f.events)
    out: list[str] = []
    for (scope, path), events in held.items():
        gf = agent.guard_file(scope, machine, folder)
        missing = [e for e in gf.events if e not in events] if gf is not None else []
        if scope == "project":  # a team's files leave these out on purpose (install_guard)
            missing = [e for e in missing if e not in agent.version_events]
        if not missing:
            continue
        unknown = agent.unknown_events(machine, folder)
        out.extend(
            f"the guard in {machine.shown(path)} is not under {event}, which this"
            f" {agent.title} runs calls through: run `offprompt init` again to add it"
            for event in missing
            if event not in unknown
        )
    return tuple(_unique(out))


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- what the agent waits for ------------------------------------------------------------------


# --- what keeps the values from the model ------------------------------------------------------


def _with_mask(found: MaskState | None, protection: Protection, why: str) -> tuple[Protection, str]:
    """The mask (DESIGN §15) over what the guard gives: a mask that holds makes it `masked`,
    both said; a denial (Codex masks no file) is said before the guard's line, never `masked`."""
    if found is None:
        return protection, why
    if found.kind == "denied":
        return protection, f"{found.why}; {why}"
    if found.holds:
        return "masked", f"{found.why}; {why}" if protection == "guarded" else found.why
    return protection, f"{why}; the mask does not hold: {found.why}"


def _protection(
    agent: Agent, guards: Sequence[Finding], machine: Machine
) -> tuple[Protection, str]:
    active = [g for g in guards if g.active]
    if active:
        holding = dict.fromkeys(machine.shown(g.path) for g in active)
        return "guarded", "guarded by " + ", ".join(holding)
    if agent.unguarded:
        return "nothing", agent.unguarded
    for guard in guards:
        where = machine.shown(guard.path)
        if guard.blocked is not None:
            return "nothing", f"the guard in {where} is off: {guard.blocked}"
        if guard.check.ok is False:
            return "nothing", f"the guard in {where} cannot start: {guard.check.why}"
        if guard.waits:
            return "nothing", f"the guard in {where} does not run yet: {guard.waits[0].detail}"
    if guards:
        return "nothing", f"the guard in {machine.shown(guards[0].path)}: {guards[0].check.why}"
    return "nothing", "no guard is declared: run `offprompt init` to add it"
