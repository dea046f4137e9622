"""Codex: a `[mcp_servers.offprompt]` table in `.codex/config.toml` (project; Codex reads it only
in a project you trusted) or `$CODEX_HOME/config.toml` (user; `~/.codex` by default).

Found when `codex` is on PATH or the Codex home folder exists.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from offprompt.agents import files
from offprompt.agents.hook_wrapper import HOST_LIMIT
from offprompt.agents.interface import (
    SERVER_NAME,
    Agent,
    Change,
    Declaration,
    GuardFile,
    Location,
    Machine,
    Presence,
    Scope,
    ServerCommand,
    describe,
    found_by,
    guard_file_for,
)
from offprompt.agents.json_agent import at_least, declared_command
from offprompt.agents.mask.codex import CodexMask
from offprompt.agents.mask.interface import HostMask
from offprompt.configedit import jsonc, tomltable
from offprompt.errors import ConfigError

# Codex gives a stdio server only HOME, LANG, LC_ALL, LOGNAME, PATH, SHELL, TERM and USER
# (reference/hosts-observed.md). Without these offprompt would think a Linux desktop is headless
# and never open the browser, and would ignore the person's OFFPROMPT_* settings. CODESPACES
# feeds the sandbox check (DESIGN §5); XDG_STATE_HOME and XDG_CACHE_HOME keep the journal and the
# cloudflared cache where `offprompt fingerprints` run from the person's shell looks for them.
# `env_vars` takes exact names (no patterns), so each OFFPROMPT_* variable of DESIGN §10 is listed.
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
    "OFFPROMPT_LOG",
    "OFFPROMPT_CHECK",  # `off` must reach the server: the person's way to send no key anywhere
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


def codex_home(machine: Machine) -> Path:
    """Codex's home folder: $CODEX_HOME, else ~/.codex."""
    return machine.env_path("CODEX_HOME") or machine.home / ".codex"


def user_config(machine: Machine) -> Path:
    """The person's Codex config, for every project."""
    return codex_home(machine) / "config.toml"


def project_config(project: Path) -> Path:
    """The project's Codex config, which Codex reads once the person trusts the project."""
    return project / ".codex" / "config.toml"


class Codex(Agent):
    """Entry: `command`, `args`, `tool_timeout_sec = 600` and `env_vars = [...]` as above.

    The table is edited as text (tomllib only reads): an existing table has its keys changed in
    place, a new one is appended at the end; the result must read back with tomllib as exactly
    the intended settings, or nothing is written.
    """

    name = "codex"
    title = "Codex"
    # Codex masks no file: its mask denies them (agents/mask/codex.py).
    mask: ClassVar[HostMask | None] = CodexMask(project_config, user_config)
    project_note = "Codex reads it once you trust this project"

    # Codex runs a hook only after the person reviewed and trusted it (its /hooks screen).
    guard_note = "Codex runs it once you trust it in /hooks"
    # Codex's trust is for a hook's exact definition (command and timeout): a changed one waits.
    guard_update_note = "Codex runs the changed hook only once you trust it again in /hooks"

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
            hook=(("timeout", HOST_LIMIT),),
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
                new = tomltable.set_keys(before, _TABLE, list(desired.items()), _COMMENTS)
            except tomltable.TomlScanError as e:
                raise _cannot_edit(shown, str(e), desired) from None
            expected = copy.deepcopy(data)
            expected.setdefault("mcp_servers", {})[SERVER_NAME] = {**(current or {}), **desired}
            _check(new, expected, shown, desired)
            return files.Edit(new, "added" if current is None else "updated")

        try:
            outcome = files.update(loc.path, shown, transform)
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
            outcome = files.update(loc.path, shown, transform, prune)
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
