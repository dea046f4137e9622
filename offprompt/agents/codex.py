"""Codex: a `[mcp_servers.offprompt]` table in `.codex/config.toml` (project; Codex reads it only
in a project you trusted) or `$CODEX_HOME/config.toml` (user; `~/.codex` by default).

Found when `codex` is on PATH or the Codex home folder exists. What it still waits for (its
folder trust, its trust of the hook in /hooks) is read from its user config (`Codex.waits`).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from offprompt.agents import files, host_waits
from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.interface import (
    SERVER_NAME,
    Agent,
    Change,
    Declaration,
    GuardFile,
    Hook,
    HostWaits,
    Location,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    Wait,
    describe,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import at_least, declared_command
from offprompt.agents.mask import codex_override
from offprompt.agents.mask.codex import PROFILE as MASK_PROFILE
from offprompt.agents.mask.codex import CodexMask
from offprompt.agents.mask.interface import HostMask
from offprompt.configedit import jsonc, tomltable
from offprompt.errors import ConfigError
from offprompt.hosts import codex as facts

# Codex gives a stdio server only HOME, LANG, LC_ALL, LOGNAME, PATH, SHELL, TERM and USER
# (reference/hosts-observed.md). Without these offprompt would think a Linux desktop is headless
# and never open the browser, and would ignore the person's OFFPROMPT_* settings. CODESPACES
# feeds the sandbox check (DESIGN §5); XDG_STATE_HOME and XDG_CACHE_HOME keep the journal and the
# cloudflared cache where `offprompt fingerprints` run from the person's shell looks for them.
# `env_vars` takes exact names (no patterns), so each OFFPROMPT_* variable of DESIGN §10 (and of
# README's Environment table) is listed.
ENV_VARS = (
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "BROWSER",
    "SSH_CONNECTION",
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "CODESPACES",
    "XDG_STATE_HOME",
    "XDG_CACHE_HOME",
    "OFFPROMPT_SANDBOX",
    "OFFPROMPT_TUNNEL",
    "OFFPROMPT_CLOUDFLARED",
    "OFFPROMPT_STATE_DIR",
    "OFFPROMPT_CACHE_DIR",
    "OFFPROMPT_TTL",
    "OFFPROMPT_AWAIT_SECONDS",
    "OFFPROMPT_ELICIT_WAIT_MS",
    "OFFPROMPT_DIALOG_WAIT_MS",
    "OFFPROMPT_LOG",
    "OFFPROMPT_CHECK",  # `off` must reach the server: the person's way to send no key anywhere
    "OFFPROMPT_CHECK_BASE",
    "OFFPROMPT_PORT",  # one fixed port for one `ssh -L`: a random one would break the forward
    "OFFPROMPT_CLOUDFLARED_BASE",
)

# Codex may end a tool call after `tool_timeout_sec` (documented default 60 s; 0.169 was seen
# waiting the whole 300 s while offprompt sent progress). offprompt waits up to 300 s for the
# person, so give it twice that either way. A longer timeout the person set is kept.
TOOL_TIMEOUT_SEC = 600

_TABLE = ("mcp_servers", SERVER_NAME)
_COMMENTS = (
    "Added by `offprompt init`; `offprompt remove` takes it out.",
    "tool_timeout_sec outlasts offprompt's 300 s wait; env_vars let it open your browser.",
)
# What a team must pass on (`init --shared` says it too): Codex runs a project's hook only once
# each person trusts it, and `codex exec` runs none that is not trusted.
TEAM_TRUST = (
    "Each teammate: trust the offprompt guard hook in Codex's /hooks (.codex/hooks.json);"
    " `codex exec` runs no untrusted hook, so until then Codex is not guarded."
)
# The hook's name on Codex's /hooks screen (otherwise "Unnamed hook" and a long sh script):
# what a teammate reviews says what it is in its first words. Shared hooks only: a changed
# definition waits for trust again, and the personal hook would run unguarded meanwhile.
STATUS = "offprompt guard: keeps .env files and what offprompt wrote from the model"


def codex_home(machine: Machine) -> Path:
    """Codex's home folder: $CODEX_HOME, else ~/.codex."""
    return machine.env_path("CODEX_HOME") or machine.home / ".codex"


def user_config(machine: Machine) -> Path:
    """The person's Codex config, for every project."""
    return codex_home(machine) / "config.toml"


def project_config(project: Path) -> Path:
    """The project's Codex config, which Codex reads once the person trusts the project."""
    return project / ".codex" / "config.toml"


_MASK = CodexMask(project_config, user_config)


class Codex(Agent):
    """Entry: `command`, `args`, `tool_timeout_sec = 600` and `env_vars = [...]` as above.

    The table is edited as text (tomllib only reads): an existing table has its keys changed in
    place, a new one is appended at the end; the result must read back with tomllib as exactly
    the intended settings, or nothing is written.
    """

    name = facts.HOST["name"]
    title = facts.HOST["title"]
    # Codex masks no file: its mask denies them (agents/mask/codex.py).
    mask: ClassVar[HostMask | None] = _MASK
    project_note = "Codex reads it once you trust this project"

    # Codex runs a hook only after the person reviewed and trusted it (its /hooks screen).
    guard_note = "Codex runs it once you trust it in /hooks"
    # Codex's trust is for a hook's exact definition (command and timeout): a changed one waits.
    guard_update_note = "Codex runs the changed hook only once you trust it again in /hooks"
    team_note = TEAM_TRUST

    def waits(self, machine: Machine, folder: Path) -> HostWaits:
        return _CodexWaits(self, machine, folder)

    def warnings(self, machine: Machine, folder: Path) -> tuple[str, ...]:
        # In a masked project: what undoes the mask and no config here shows (the command
        # line), and where Codex started in a subfolder leaves it (codex_override.py).
        try:
            masked = _MASK.denied(folder) is not None
        except ConfigError:
            return ()  # the mask's own line says what is wrong with the file
        if not masked:
            return ()
        below = codex_override.from_subfolders(folder, machine, MASK_PROFILE)
        also = f"; {' and '.join(below)} makes it ignore the profile there" if below else ""
        return (
            codex_override.COMMAND_LINE,
            "Codex started in a subfolder leaves this folder's files open: the profile's entries"
            f" are relative to the folder Codex starts in{also}",
        )

    def guard_file(self, scope: Scope, machine: Machine, project: Path | None) -> GuardFile | None:
        # hooks.json beside config.toml: the same PreToolUse shape as Claude Code's, and a
        # file of its own, so config.toml's tables stay as they are.
        return guard_file_for(
            scope,
            machine,
            project,
            user=self._home(machine) / "hooks.json",
            in_project=".codex/hooks.json",
            # `timeout` in seconds (default 600). Codex has no failure setting: a hook that
            # fails or times out lets the call through, so the wrapper and the guard's own
            # deadline must block first.
            hook=(("timeout", HOST_LIMIT),)
            + ((("statusMessage", STATUS),) if scope == "project" else ()),
        )

    def _home(self, machine: Machine) -> Path:
        return codex_home(machine)

    def presence(self, machine: Machine) -> Presence:
        return found_by(machine, ("codex",), (self._home(machine),))

    def location(self, scope: Scope, machine: Machine, project: Path | None) -> Location:
        if scope == "user":
            return Location(scope, user_config(machine))
        if scope == "local":
            # Codex's config layers are system, user and the project's .codex/ (0.169).
            return Location(scope, None, self.no_local)
        if project is None:
            return Location(scope, None, "no project folder was given")
        return Location(scope, project_config(project))

    def entry(self, server: ServerCommand, existing: Mapping[str, object] | None) -> dict[str, Any]:
        names = existing.get("env_vars") if existing is not None else None
        if names is None:
            names = []
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(
                "env_vars of [mcp_servers.offprompt] is not a list of names; fix it, then run"
                " this again. Nothing was changed."
            )
        return {
            "command": server.command,
            "args": list(server.args),
            "tool_timeout_sec": at_least(existing, "tool_timeout_sec", TOOL_TIMEOUT_SEC),
            # The person's own names first, ours after: nothing they added is lost.
            "env_vars": names + [n for n in ENV_VARS if n not in names],
        }

    def install(
        self, scope: Scope, machine: Machine, project: Path | None, server: ServerCommand
    ) -> Change:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return Change(self.name, scope, None, "unsupported", loc.why_not or "")
        shown = machine.shown(loc.path)

        def transform(text: str | None) -> files.Edit:
            before = text or ""
            data = files.toml_object(before, shown)
            current = _entry(data, shown)
            desired = self.entry(server, current)
            if current is not None and all(
                k in current and jsonc.same(current[k], v) for k, v in desired.items()
            ):
                return files.Edit(text, "unchanged")
            try:
                comments = (*_COMMENTS, TEAM_TRUST) if scope == "project" else _COMMENTS
                new = tomltable.set_keys(before, _TABLE, list(desired.items()), comments)
            except tomltable.TomlScanError as e:
                raise _cannot_edit(shown, str(e), desired) from None
            expected = copy.deepcopy(data)
            expected.setdefault("mcp_servers", {})[SERVER_NAME] = {**(current or {}), **desired}
            _check(new, expected, shown, desired)
            return files.Edit(new, "added" if current is None else "updated")

        try:
            inside = project if scope != "user" else None
            outcome = files.update(loc.path, shown, transform, project=inside)
        except ConfigError as e:
            return Change(self.name, scope, loc.path, "failed", str(e))
        return Change(self.name, scope, loc.path, outcome, describe(self, outcome, scope, shown))

    def remove(self, scope: Scope, machine: Machine, project: Path | None) -> Change:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return Change(self.name, scope, None, "unsupported", loc.why_not or "")
        shown = machine.shown(loc.path)

        def transform(text: str | None) -> files.Edit:
            if text is None:
                return files.Edit(text, "absent")
            data = files.toml_object(text, shown)
            if _entry(data, shown) is None:
                return files.Edit(text, "absent")
            try:
                new = tomltable.remove_table(text, _TABLE)
            except tomltable.TomlScanError as e:
                raise _cannot_edit(shown, str(e), None) from None
            expected = copy.deepcopy(data)
            del expected["mcp_servers"][SERVER_NAME]
            if not expected["mcp_servers"] and "mcp_servers" not in _load_or_empty(new):
                # Our header made [mcp_servers] exist implicitly; an explicit one stays.
                del expected["mcp_servers"]
            _check(new, expected, shown, None)
            return files.Edit(new if new.strip() else None, "removed")

        prune = project / ".codex" if scope == "project" and project is not None else None
        try:
            inside = project if scope != "user" else None
            outcome = files.update(loc.path, shown, transform, prune, project=inside)
        except ConfigError as e:
            return Change(self.name, scope, loc.path, "failed", str(e))
        if outcome == "absent" and not loc.path.exists():
            return Change(self.name, scope, loc.path, outcome, f"no config at {shown}")
        return Change(self.name, scope, loc.path, outcome, describe(self, outcome, scope, shown))

    def declaration(
        self, scope: Scope, machine: Machine, project: Path | None
    ) -> Declaration | None:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return None
        shown = machine.shown(loc.path)
        text = files.read_text(loc.path, shown)
        if text is None:
            return None
        entry = _entry(files.toml_object(text, shown), shown)
        if entry is None:
            return None
        return Declaration(self.name, scope, loc.path, declared_command(entry))


def _load_or_empty(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _entry(data: Mapping[str, Any], shown: str) -> dict[str, Any] | None:
    servers = data.get("mcp_servers")
    if servers is None:
        return None
    if not isinstance(servers, dict):
        raise ConfigError(f"mcp_servers in {shown} is not a table; nothing was changed.")
    entry = servers.get(SERVER_NAME)
    if entry is not None and not isinstance(entry, dict):
        raise ConfigError(f"mcp_servers.offprompt in {shown} is not a table; nothing was changed.")
    return entry


def _cannot_edit(shown: str, why: str, desired: Mapping[str, object] | None) -> ConfigError:
    hint = ""
    if desired is not None:
        lines = [f"{k} = {tomltable.dumps(v)}" for k, v in desired.items()]
        hint = " Add this by hand: [mcp_servers.offprompt] " + "; ".join(lines)
    return ConfigError(
        f"offprompt could not edit {shown} without changing other settings ({why}); nothing was"
        f" changed.{hint}"
    )


def _check(
    new: str, expected: Mapping[str, Any], shown: str, desired: Mapping[str, object] | None
) -> None:
    """Refuse an edit unless the new text reads back as exactly the intended settings."""
    try:
        got = tomllib.loads(new)
    except tomllib.TOMLDecodeError as e:
        raise _cannot_edit(shown, f"the result would not be valid TOML: {e}", desired) from None
    if not jsonc.same(got, expected):
        raise _cannot_edit(shown, "the result did not read back as intended", desired)


# What Codex 0.169 waits for -----------------------------------------------------------------


class _CodexWaits(HostWaits):
    """Its folder trust (for .codex/), and its trust of each hook in /hooks."""

    def __init__(self, agent: Agent, machine: Machine, folder: Path) -> None:
        self.agent, self.machine, self.folder = agent, machine, folder
        self._config: dict[str, Any] | None = None

    def about(
        self, kind: str, scope: Scope, hook: Hook | None = None
    ) -> tuple[tuple[Wait, ...], str | None]:
        config = self._config if self._config is not None else self._read_config()
        self._config = config
        waits: list[Wait] = []
        if scope == "project":
            trust = _codex_trust(config, self.folder)
            if trust == "untrusted":
                return (), (
                    "you told Codex not to trust this folder, so it ignores .codex/ here; set"
                    f' trust_level = "trusted" under [projects."{self.folder}"] in'
                    f" {self._shown()} or trust it when Codex asks"
                )
            if trust != "trusted":
                waits.append(
                    Wait(
                        "folder-trust",
                        "Codex ignores .codex/ until you trust this folder: choose Trust when"
                        " Codex asks",
                    )
                )
        if hook is not None:
            state = _codex_hook_state(config, hook)
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

    def _path(self) -> Path | None:
        return self.agent.location("user", self.machine, self.folder).path

    def _shown(self) -> str:
        path = self._path()
        return self.machine.shown(path) if path is not None else "Codex's config.toml"

    def _read_config(self) -> dict[str, Any]:
        path = self._path()
        if path is None:
            return {}
        shown = self.machine.shown(path)
        text = files.read_text(path, shown)
        if text is None:
            return {}
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(
                f"{shown} is not valid TOML ({e}); fix it, then run this again. Nothing was"
                " changed."
            ) from None


def _codex_trust(config: Mapping[str, Any], folder: Path) -> str | None:
    """`trust_level` of the project in Codex's config.toml, or None when it has none."""
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return None
    levels = [projects.get(key) for key in host_waits.project_keys(folder)]
    found = [p.get("trust_level") for p in levels if isinstance(p, dict)]
    if "trusted" in found:
        return "trusted"
    return "untrusted" if "untrusted" in found else None


def _codex_hook_state(config: Mapping[str, Any], hook: Hook) -> str:
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


def codex_hook_hash(hook: Hook) -> str:
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
