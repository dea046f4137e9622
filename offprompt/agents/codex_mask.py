"""Codex's side of `init --mask` (DESIGN §15): Codex 0.169 masks environment variables only, not a
file's bytes, so offprompt denies the files instead, with a permissions profile in the project's
`.codex/config.toml` whose `deny` entries its bubblewrap sandbox enforces for every command:

    default_permissions = "offprompt"
    [permissions.offprompt]
    description = "…"
    extends = ":workspace"
    [permissions.offprompt.filesystem.":workspace_roots"]
    ".env" = "deny"

Measured in real Codex 0.169 (tests/real_hosts/test_codex_mask.py): honoured from the project's
file once the person trusts the project (a user-level profile would also loosen folders never
trusted, so it goes nowhere else); a deny on a file not yet there mounts an empty one; a custom
profile ignores `[sandbox_workspace_write] network_access`, so a person who had network on keeps
it through `[permissions.offprompt.network] enabled = true`; a sandbox chosen on Codex's command
line replaces the profile. The app the agent runs cannot read the file either: denied, not masked.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from offprompt.agents import files
from offprompt.agents.codex import load
from offprompt.configedit import tomltable
from offprompt.errors import ConfigError
from offprompt.guard.protected import DOTENV_NAMES

__all__ = ["PROFILE", "add", "config_path", "denied", "network_on", "turn_off", "turn_on"]

PROFILE = "offprompt"
_TOP = f'default_permissions = "{PROFILE}"'
_DESCRIPTION = "offprompt: the values it writes are denied to every command (offprompt init --mask)"
_ROOTS = ":workspace_roots"


def config_path(project: Path) -> Path:
    return project / ".codex" / "config.toml"


def _quoted(key: str) -> str:
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _block(names: Iterable[str], network: bool, eol: str) -> str:
    lines = [
        f"[permissions.{PROFILE}]",
        f"description = {_quoted(_DESCRIPTION)}",
        'extends = ":workspace"',
        "",
        f'[permissions.{PROFILE}.filesystem."{_ROOTS}"]',
        *(f'{_quoted(n)} = "deny"' for n in sorted(set(names))),
    ]
    if network:
        lines += ["", f"[permissions.{PROFILE}.network]", "enabled = true"]
    return eol.join(lines) + eol


def _ours(data: dict[str, Any]) -> dict[str, Any] | None:
    perms = data.get("permissions")
    mine = perms.get(PROFILE) if isinstance(perms, dict) else None
    return mine if isinstance(mine, dict) else None


def denied(project: Path) -> tuple[str, ...] | None:
    """The paths (relative to the project) our profile denies, or None when it is not there
    or not the one Codex uses. ConfigError when the file cannot be read."""
    path = config_path(project)
    text = files.read_text(path, str(path))
    if text is None:
        return None
    data = load(text, str(path))
    mine = _ours(data)
    if mine is None or data.get("default_permissions") != PROFILE:
        return None
    fs = mine.get("filesystem")
    roots = fs.get(_ROOTS) if isinstance(fs, dict) else None
    if not isinstance(roots, dict):
        return ()
    return tuple(sorted(k for k, v in roots.items() if v == "deny"))


def turn_on(project: Path, written: Iterable[str], network: bool, shown: str) -> None:
    """Deny the usual dotenv names and `written` (paths relative to the project, `/`-separated)
    to Codex's commands, keeping what the profile denied already. ConfigError, nothing changed,
    when the project chose another profile."""
    path = config_path(project)

    def transform(text: str | None) -> files.Edit:
        base = text or ""
        data = load(base, shown)
        chosen = data.get("default_permissions")
        if chosen not in (None, PROFILE):
            raise ConfigError(
                f"{shown} already makes Codex use its permissions profile {chosen!r}; offprompt"
                f' will not replace it. Add `".env" = "deny"` under its filesystem'
                f' ":workspace_roots" by hand, or take it out and run this again. Nothing was'
                " changed."
            )
        eol = "\r\n" if "\r\n" in base else "\n"
        names = {*DOTENV_NAMES, *written, *denied_in(data)}
        new = tomltable.remove_table(base, ("permissions", PROFILE))
        if chosen is None:
            new = _TOP + eol + (eol if new.strip() else "") + new
        # One blank line above the profile, which remove_table takes back out with it.
        if new.strip():
            new += eol if new.endswith(eol) else eol * 2
        new += _block(names, network, eol)
        got = load(new, shown)
        if got.get("default_permissions") != PROFILE or set(denied_in(got)) != names:
            raise ConfigError(f"offprompt could not edit {shown} safely; nothing was changed.")
        return files.Edit(text, "unchanged") if new == text else files.Edit(new, "updated")

    files.update(path, shown, transform)


def denied_in(data: dict[str, Any]) -> list[str]:
    mine = _ours(data) or {}
    fs = mine.get("filesystem")
    roots = fs.get(_ROOTS) if isinstance(fs, dict) else None
    return [k for k, v in roots.items() if v == "deny"] if isinstance(roots, dict) else []


def network_on(project: Path, codex_home: Path) -> bool:
    """Whether Codex's workspace sandbox has network for this project now (our profile's, or
    `[sandbox_workspace_write] network_access` in the project's or the user's config), so the
    profile keeps it: a custom profile ignores that setting."""
    for path in (config_path(project), codex_home / "config.toml"):
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        mine = _ours(data) or {}
        net = mine.get("network")
        if isinstance(net, dict) and net.get("enabled") is True:
            return True
        sww = data.get("sandbox_workspace_write")
        if isinstance(sww, dict) and sww.get("network_access") is True:
            return True
    return False


def add(project: Path, rel: str, codex_home: Path) -> bool:
    """After a write of `rel` in a project Codex denies files in: deny it too. False when the
    project has no profile of ours (nothing to keep). ConfigError."""
    have = denied(project)
    if have is None:
        return False
    if rel not in have:
        path = config_path(project)
        turn_on(project, [rel], network_on(project, codex_home), str(path))
    return True


def turn_off(project: Path, shown: str) -> bool:
    """Take our profile and the `default_permissions` line init put first back out; False when
    there was nothing of ours."""
    path = config_path(project)
    removed = [False]

    def transform(text: str | None) -> files.Edit:
        if text is None or _ours(load(text, shown)) is None:
            return files.Edit(text, "absent")
        eol = "\r\n" if "\r\n" in text else "\n"
        new = tomltable.remove_table(text, ("permissions", PROFILE))
        for top in (_TOP + eol + eol, _TOP + eol):
            if new.startswith(top):
                new = new[len(top) :]
                break
        removed[0] = True
        return files.Edit(new if new.strip() else None, "removed")

    files.update(path, shown, transform, path.parent)
    return removed[0]
