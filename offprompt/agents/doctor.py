"""`offprompt agents` is the doctor (DESIGN §9): for each place offprompt is declared, whether the
command it names runs here, what the agent still waits for from the person, and what keeps the
values from the model there. Facts only; cli_agents.py prints them.

Commands are checked by running them with `--version` (the server's `… serve` and the guard's
`… guard` with their last word swapped), all at once, each killed after its time limit.
Declarations are read through the `Agent` interface and guard_install; what Claude Code and
Codex keep about approval and trust is read from their own files, as those versions record it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from offprompt import disk
from offprompt.agents import files, guard_install
from offprompt.agents.interface import SCOPES, SERVER_NAME, Agent, Machine, Presence, Scope
from offprompt.configedit import jsonc
from offprompt.errors import ConfigError

__all__ = [
    "TIMEOUT",
    "AgentReport",
    "Check",
    "Finding",
    "Protection",
    "Wait",
    "codex_hook_hash",
    "examine",
    "run_checks",
]

# How long a declared command has to answer `--version` (DESIGN §9).
TIMEOUT = 5.0
# At most this many checks run at once (seven agents, two declarations each, mostly the same).
_WORKERS = 8
# What is kept of a program's answer: its first line, this long at most.
_SHOWN = 120

Protection = Literal["masked", "guarded", "nothing"]
WaitKind = Literal["approval", "folder-trust", "hook-trust"]
FindingKind = Literal["server", "guard"]


@dataclass(frozen=True)
class Check:
    """Whether a declared command runs here: `ok` True (answered `--version`), False (it does
    not run: missing, not executable, failed, hung) or None (not run, `why` says why)."""

    ok: bool | None
    why: str
    ran: tuple[str, ...] | None = None
    version: str | None = None


@dataclass(frozen=True)
class Wait:
    """Something the agent still waits for from the person before offprompt works there."""

    kind: WaitKind
    detail: str


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

    @property
    def works(self) -> bool:
        """False when it would not work: its command does not run, or the agent will not run it."""
        return self.check.ok is not False and self.blocked is None and self.command is not None

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
) -> list[AgentReport]:
    """The doctor's facts for each of `agents`, for the project `folder` and the user configs."""
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
        found.append((agent, agent.presence(machine), pending, _unique(problems)))
    wanted = [p.plan for _, _, items, _ in found for p in items if isinstance(p.plan, tuple)]
    results = run_checks(wanted, machine, folder, timeout=timeout)
    reports = []
    for agent, presence, items, problems in found:
        waits = _Waits(agent, machine, folder)
        findings = []
        for item in items:
            check = results[item.plan] if isinstance(item.plan, tuple) else item.plan
            try:
                said, blocked = waits.about(item)
            except ConfigError as e:
                problems.append(str(e))
                said, blocked = (), None
            findings.append(
                Finding(item.kind, item.scope, item.path, item.command, check, said, blocked)
            )
        servers = tuple(f for f in findings if f.kind == "server")
        guards = tuple(f for f in findings if f.kind == "guard")
        protection, why = _protection(agent, guards, machine)
        reports.append(
            AgentReport(agent, presence, servers, guards, tuple(_unique(problems)), protection, why)
        )
    return reports


# --- running the commands ----------------------------------------------------------------------


def run_checks(
    argvs: Iterable[tuple[str, ...]],
    machine: Machine,
    cwd: Path,
    *,
    timeout: float = TIMEOUT,
) -> dict[tuple[str, ...], Check]:
    """Run each distinct argv (at once, in `cwd`, with the machine's environment) and say
    whether it answered: exit 0 within `timeout` seconds. A program still running then is
    killed with everything it started."""
    distinct = list(dict.fromkeys(argvs))
    if not distinct:
        return {}
    where = cwd if cwd.is_dir() else machine.home
    env = dict(machine.environ)
    with ThreadPoolExecutor(max_workers=min(_WORKERS, len(distinct))) as pool:
        checks = pool.map(lambda argv: _run(argv, where, env, timeout), distinct)
        return dict(zip(distinct, checks, strict=True))


def _run(argv: tuple[str, ...], cwd: Path, env: Mapping[str, str], timeout: float) -> Check:
    shown = shlex.join(argv)
    try:
        # Its own session, so a timeout kills whatever it started too (uvx starts a Python).
        proc = subprocess.Popen(  # noqa: S603 - the program a config names, checked by _resolve
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
        )
    except OSError as e:
        return Check(False, f"`{shown}` could not start ({disk.reason(e)})", argv)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        answered = proc.poll() is not None  # it exited; something it left holds the pipes
        _kill_group(proc)
        out, err = _drain(proc)
        if not answered:
            return Check(False, f"`{shown}` did not answer within {timeout:g} s", argv)
    if proc.returncode != 0:
        said = _last_line(err) or _last_line(out)
        why = f"`{shown}` exited with {_exit_status(proc.returncode)}"
        return Check(False, f"{why}: {said}" if said else why, argv)
    version = _first_line(out) or _first_line(err)
    return Check(True, f"answers `{shown}`", argv, version)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        proc.kill()


def _drain(proc: subprocess.Popen[bytes]) -> tuple[bytes, bytes]:
    try:
        return proc.communicate(timeout=1)
    except subprocess.TimeoutExpired:
        # A process outside the group still holds the pipes: stop reading, keep nothing.
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=1)
        return b"", b""


def _exit_status(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


def _first_line(data: bytes) -> str:
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            return _clip(line.strip())
    return ""


def _last_line(data: bytes) -> str:
    lines = [s.strip() for s in data.decode("utf-8", "replace").splitlines() if s.strip()]
    return _clip(lines[-1]) if lines else ""


def _clip(text: str) -> str:
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


# --- what to run -------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Hook:
    """One of our hooks in a guard file: its command and where it sits (for Codex's trust)."""

    path: Path
    event: str
    group: int
    handler: int
    entry: Mapping[str, Any]
    command: str


@dataclass(frozen=True)
class _Pending:
    kind: FindingKind
    scope: Scope
    path: Path
    command: tuple[str, ...] | None
    plan: tuple[str, ...] | Check  # the argv to run, or the answer already known
    hook: _Hook | None = None


def _server_plan(
    words: tuple[str, ...] | None, scope: Scope, machine: Machine, folder: Path
) -> tuple[str, ...] | Check:
    """The argv that checks a server command (`… serve` → `… --version`), or why none runs."""
    if not words:
        return Check(False, f"the {SERVER_NAME!r} entry has no command and args offprompt can read")
    if words[-1] != "serve" or not _names_offprompt(words[:-1]):
        return Check(
            None,
            "not checked: it is not `… offprompt … serve`, so offprompt does not run it here",
        )
    return _plan(words[:-1], scope, machine, folder)


def _guard_plan(
    command: str, scope: Scope, machine: Machine, folder: Path
) -> tuple[str, ...] | Check:
    """The argv that checks the guard's program (`… guard` → `… --version`)."""
    words = guard_install.guard_argv(command)
    if words is None:
        return Check(None, "not checked: offprompt cannot tell which program this hook runs")
    return _plan(words[:-1], scope, machine, folder)


def _plan(
    words: tuple[str, ...], scope: Scope, machine: Machine, folder: Path
) -> tuple[str, ...] | Check:
    program, why = _resolve(words[0], machine, folder)
    if program is None:
        return Check(False, why)
    if scope == "project" and program.is_relative_to(folder):
        # A project's own files may come from anyone who can push to it: offprompt does not
        # start a program they name from inside the project before the person has.
        return Check(
            None,
            f"not run: {words[0]} is inside the project and a file the project shares names it;"
            f" check it yourself with `{shlex.join((*words, '--version'))}`",
        )
    return (str(program), *words[1:], "--version")


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


def _guard_hooks(agent: Agent, scope: Scope, machine: Machine, folder: Path) -> list[_Hook]:
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
        raise ConfigError(f"{gf.shown} is not valid JSON ({e}); fix it.") from None
    hooks: list[_Hook] = []
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
                    hooks.append(_Hook(gf.path, event, g, h, group, command))
    return hooks


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# --- what the agent waits for ------------------------------------------------------------------


class _Waits:
    """What one agent still waits for, read once per agent from its own files."""

    def __init__(self, agent: Agent, machine: Machine, folder: Path) -> None:
        self.agent, self.machine, self.folder = agent, machine, folder
        self._claude: _ClaudeState | None = None
        self._codex: dict[str, Any] | None = None

    def about(self, item: _Pending) -> tuple[tuple[Wait, ...], str | None]:
        """The waits for one declaration and, when the agent will not run it, why not."""
        if self.agent.name == "claude-code":
            return self._claude_code(item)
        if self.agent.name == "codex":
            return self._codex_about(item)
        return (), None

    # Claude Code 2.1.328 ---------------------------------------------------------------------

    def _claude_code(self, item: _Pending) -> tuple[tuple[Wait, ...], str | None]:
        if item.kind != "server" or item.scope == "user":
            # Its trust dialog comes before anything runs in the folder, so it is said once,
            # on the server; user servers are Claude Code's own, the same in every folder.
            return (), None
        state = self._claude or _claude_state(self.agent, self.machine, self.folder)
        self._claude = state
        waits: list[Wait] = []
        if not state.trusted:
            waits.append(
                Wait(
                    "folder-trust",
                    "Claude Code asks whether you trust this folder when it starts here:"
                    " answer yes",
                )
            )
        if item.scope == "project":
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

    # Codex 0.169 -----------------------------------------------------------------------------

    def _codex_about(self, item: _Pending) -> tuple[tuple[Wait, ...], str | None]:
        config = self._codex if self._codex is not None else self._codex_config()
        self._codex = config
        waits: list[Wait] = []
        if item.scope == "project":
            trust = _codex_trust(config, self.folder)
            if trust == "untrusted":
                return (), (
                    "you told Codex not to trust this folder, so it ignores .codex/ here; set"
                    f' trust_level = "trusted" under [projects."{self.folder}"] in'
                    f" {self._codex_shown()} or trust it when Codex asks"
                )
            if trust != "trusted":
                waits.append(
                    Wait(
                        "folder-trust",
                        "Codex ignores .codex/ until you trust this folder: choose Trust when"
                        " Codex asks",
                    )
                )
        if item.hook is not None:
            state = _codex_hook_state(config, item.hook)
            if state == "disabled":
                return tuple(waits), "you turned this hook off in Codex's /hooks; turn it on there"
            if state == "untrusted":
                waits.append(
                    Wait("hook-trust", "Codex runs it only once you trust it: open /hooks in Codex")
                )
            elif state == "modified":
                waits.append(
                    Wait(
                        "hook-trust",
                        "it changed since you trusted it, so Codex skips it: trust it again in"
                        " /hooks",
                    )
                )
        return tuple(waits), None

    def _codex_path(self) -> Path | None:
        return self.agent.location("user", self.machine, self.folder).path

    def _codex_shown(self) -> str:
        path = self._codex_path()
        return self.machine.shown(path) if path is not None else "Codex's config.toml"

    def _codex_config(self) -> dict[str, Any]:
        path = self._codex_path()
        if path is None:
            return {}
        shown = self.machine.shown(path)
        text = files.read_text(path, shown)
        if text is None:
            return {}
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"{shown} is not valid TOML ({e}); fix it.") from None


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
    config = _json_file(user_json, machine) if user_json is not None else {}
    projects = config.get("projects")
    projects = projects if isinstance(projects, dict) else {}
    entries = [projects.get(key) for key in _project_keys(folder)]
    legacy = [e for e in entries if isinstance(e, dict)]
    trusted = any(e.get("hasTrustDialogAccepted") is True for e in legacy)
    user_settings = agent.guard_file("user", machine, folder)
    sources: list[tuple[str, dict[str, Any], bool]] = []
    if user_settings is not None:
        sources.append(
            (user_settings.shown, _json_file(user_settings.path, machine), True),
        )
    for name in ("settings.json", "settings.local.json"):
        path = folder / ".claude" / name
        sources.append((machine.shown(path), _json_file(path, machine), False))
    shown_json = machine.shown(user_json) if user_json is not None else "~/.claude.json"
    sources.extend((shown_json, entry, False) for entry in legacy)
    rejected = next(
        (where for where, s, _ in sources if _names(s.get("disabledMcpjsonServers"))), None
    )
    approved = any(
        (always or trusted)
        and (s.get("enableAllProjectMcpServers") is True or _names(s.get("enabledMcpjsonServers")))
        for _, s, always in sources
    )
    return _ClaudeState(trusted, approved, rejected)


def _names(value: object) -> bool:
    return isinstance(value, list) and SERVER_NAME in value


def _json_file(path: Path, machine: Machine) -> dict[str, Any]:
    shown = machine.shown(path)
    text = files.read_text(path, shown)
    if text is None or not text.strip():
        return {}
    try:
        value = jsonc.parse(text).root.value
    except jsonc.JsoncError as e:
        raise ConfigError(f"{shown} is not valid JSON ({e}); fix it.") from None
    return value if isinstance(value, dict) else {}


def _project_keys(folder: Path) -> list[str]:
    """The folder, and the git work tree holding it: where agents record a project's trust."""
    keys = [str(folder)]
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            keys.append(str(parent))
            break
    return _unique(keys)


def _codex_trust(config: Mapping[str, Any], folder: Path) -> str | None:
    """`trust_level` of the project in Codex's config.toml, or None when it has none."""
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return None
    levels = [projects.get(key) for key in _project_keys(folder)]
    found = [p.get("trust_level") for p in levels if isinstance(p, dict)]
    if "trusted" in found:
        return "trusted"
    return "untrusted" if "untrusted" in found else None


def _codex_hook_state(config: Mapping[str, Any], hook: _Hook) -> str:
    """trusted, untrusted, modified (trusted once, changed since) or disabled, as Codex 0.169
    records it: `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` in the user config,
    with `trusted_hash` the hash of the hook's definition and `enabled = false` for a hook
    turned off."""
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    key = f"{hook.path}:{_snake(hook.event)}:{hook.group}:{hook.handler}"
    state = states.get(key) if isinstance(states, dict) else None
    state = state if isinstance(state, dict) else {}
    if state.get("enabled") is False:
        return "disabled"
    trusted = state.get("trusted_hash")
    if not isinstance(trusted, str):
        return "untrusted"
    return "trusted" if trusted == codex_hook_hash(hook) else "modified"


def codex_hook_hash(hook: _Hook) -> str:
    """Codex's hash of one hook's definition (codex-rs/hooks discovery `command_hook_hash`):
    sha256 of the compact, key-sorted JSON of the event's snake-case name, the group's matcher
    and the one handler with its timeout (600 when unset, at least 1) and `async`; absent
    optional fields are left out."""
    handler = hook.entry if "hooks" not in hook.entry else hook.entry["hooks"][hook.handler]
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    timeout = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else 600
    normalized: dict[str, Any] = {
        "type": "command",
        "command": hook.command,
        "timeout": max(timeout, 1),
        "async": handler.get("async") is True,
    }
    status = handler.get("statusMessage")
    if isinstance(status, str):
        normalized["statusMessage"] = status
    identity: dict[str, Any] = {"event_name": _snake(hook.event), "hooks": [normalized]}
    matcher = hook.entry.get("matcher")
    if isinstance(matcher, str):
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


# --- what keeps the values from the model ------------------------------------------------------


def _protection(
    agent: Agent, guards: Sequence[Finding], machine: Machine
) -> tuple[Protection, str]:
    # The mask (DESIGN §15) is not built yet: nothing is ever `masked` today.
    active = [g for g in guards if g.active]
    if active:
        return "guarded", "guarded by " + ", ".join(machine.shown(g.path) for g in active)
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
