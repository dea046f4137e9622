"""Codex's mask (DESIGN §15): Codex 0.171 masks environment variables only, not a
file's bytes, so offprompt denies the files instead, with a permissions profile in the project's
`.codex/config.toml` whose `deny` entries its bubblewrap sandbox enforces for every command:

    default_permissions = "offprompt"
    [permissions.offprompt]
    description = "…"
    extends = ":workspace"
    [permissions.offprompt.filesystem]
    glob_scan_max_depth = 6
    [permissions.offprompt.filesystem.":workspace_roots"]
    ".env" = "deny"
    "**/.env" = "deny"

Measured in real Codex 0.169 and 0.171 (tests/real_hosts/test_codex_mask.py): honoured from the
project's file once the person trusts the project (a user-level profile would also loosen folders
never trusted, so it goes nowhere else); a deny on a file not yet there mounts an empty one; a
custom profile ignores `[sandbox_workspace_write] network_access`, so a person who had network on
keeps it through `[permissions.offprompt.network] enabled = true`; a sandbox chosen on Codex's
command line replaces the profile (codex_override.py says what else does). Entries under
`:workspace_roots` are relative to the folder Codex is started in, not to the config's project. The
app the agent runs cannot read the file either: denied, not masked. The undo records of masked
writes live in the state dir, outside every workspace root: an absolute entry in the profile's
`filesystem` table denies that folder (tests/real_hosts/test_codex_mask_undo.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, ClassVar

from offprompt.agents import files, gitignore
from offprompt.agents.machine import Machine
from offprompt.agents.mask import codex_override
from offprompt.agents.mask.claude_folders import undo_folder
from offprompt.agents.mask.interface import HostMask, MaskKind, MaskPlace, MaskState, Said, Written
from offprompt.configedit import tomltable
from offprompt.errors import ConfigError
from offprompt.guard.protected import DOTENV_NAMES, LOCAL_PATTERN

__all__ = ["PROFILE", "CodexMask"]

PROFILE = "offprompt"
_TOP = f'default_permissions = "{PROFILE}"'
_DESCRIPTION = "offprompt: the values it writes are denied to every command (offprompt init --mask)"
_ROOTS = ":workspace_roots"
# Codex reads its profile once, at start (reference/hosts-observed.md): a dotenv file made later
# in a subfolder (`apps/web/.env`) or a write's staging copy would be open until it restarts. So
# the usual dotenv names (the guard's list) are denied at every depth by glob, and offprompt's
# staging folders (`.offprompt-<hex>/`, and the older `.<name>.offprompt-<hex>.tmp` files) too.
# Codex 0.169 takes `deny` globs; on Linux it expands `**` by a scan whose depth the profile
# must cap (`glob_scan_max_depth`, else it warns), so deeper than this is not covered.
GLOBS = (
    *(f"**/{name}" for name in (*DOTENV_NAMES, LOCAL_PATTERN)),
    "**/.offprompt-*",
    "**/.offprompt-*/**",
    "**/.*.offprompt-*.tmp",
)
GLOB_DEPTH = 6


class CodexMask(HostMask):
    """Codex's denial, in the config files the Codex agent declares (agents/codex.py):
    `project_config` (the project's, where the profile goes) and `user_config` (the person's,
    read for its network setting)."""

    agent: ClassVar[str] = "codex"
    kind: ClassVar[MaskKind] = "denied"

    def __init__(
        self,
        project_config: Callable[[Path], Path],
        user_config: Callable[[Machine], Path],
        managed_config: Path = codex_override.MANAGED_CONFIG,
        requirements: Path = codex_override.REQUIREMENTS,
    ) -> None:
        self.project_config = project_config
        self.user_config = user_config
        self.managed_config = managed_config
        self.requirements = requirements

    def install(
        self, place: MaskPlace, written: Callable[[], Written], no_guard: bool = False
    ) -> Said:
        project, machine = place.project, place.machine
        path = self.project_config(project)
        shown = machine.shown(path)
        here = os.path.realpath(project)
        rels = [Path(p).relative_to(here).as_posix() for p in written()]
        try:
            # Made now (0700): measured in 0.171, a command started while the folder was not
            # there can read what is made in it later; one started after it exists cannot.
            records = undo_folder(place.record, make=True)
            network = self.network_on(project, machine)
            # The denial is this person's (issue 46): git must not offer it for a commit. A
            # config the team tracks is theirs: no exclude line would hold, so it is said.
            team = bool(gitignore.tracked(project, [path]))
            excluded = None if team else gitignore.ensure_ignored(project, path, shown)
            try:
                self.turn_on(project, rels, network, shown, (records,))
            except (ConfigError, OSError):
                if excluded is not None:
                    gitignore.release(project, path, shown)
                raise
        except (ConfigError, OSError) as e:
            return Said(False, (f"codex: failed: the mask: {e}",))
        lines = [
            f"codex: denied, not masked (Codex 0.171 masks no file): .env, the other usual"
            f" dotenv names (in every folder, {GLOB_DEPTH} deep), offprompt's staging copies,"
            f" its undo records ({records}) and every file offprompt writes here are unreadable"
            f" to the"
            f" commands its sandbox runs, your app's included, through a permissions profile"
            f" in {shown}, once you trust this project in Codex and start it in this folder"
            " (-s/--sandbox, -c sandbox_mode=… or --dangerously-bypass-approvals-and-sandbox"
            " on Codex's command line replaces it)"
        ]
        if excluded is not None:
            lines.append(
                f"codex: git now ignores {shown} (a line in {machine.shown(excluded)}): the"
                " denial is yours, not your team's"
            )
        if team:
            lines.append(
                f"codex: note: git tracks {shown}, so the denial is a change to your team's file:"
                " it is yours alone, do not commit it"
            )
        legacy = self.overridden(machine)
        if legacy:
            lines.append(f"codex: note: {_ignored(legacy)}")
        return Said(True, tuple(lines))

    def remove(self, place: MaskPlace) -> Said:
        path = self.project_config(place.project)
        shown = place.machine.shown(path)
        try:
            done = self.turn_off(place.project, shown)
            if done and not path.exists():
                gitignore.release(place.project, path, shown)
        except (ConfigError, OSError) as e:
            return Said(False, (f"codex: failed: the mask: {e}",))
        # The records' folder stays: another project's profile (or another host's mask) may
        # deny it, and Codex denies a folder only if it exists as Codex starts.
        return Said(True, (f"codex: took the denial out of {shown}",) if done else ())

    def might_cover(self, place: MaskPlace) -> bool:
        # The profile lives in the project's config (a teammate's copy of a committed one too,
        # with no record of init's): no such file, no denial.
        return self.project_config(place.project).is_file()

    def keep(self, place: MaskPlace, file: Path, names: Iterable[str], whole: bool) -> str | None:
        """The denial made to cover a file just written, where init put it; a sentence for the
        result when that denial is new, so not in force in a Codex already running."""
        config = self.project_config(place.project)
        try:
            text = files.read_text(config, str(config))
        except ConfigError:
            return None  # none of ours that could be read: nothing of the mask there
        if text is None or f"[permissions.{PROFILE}" not in text:
            return None  # a config without our profile, valid or not, is not ours to judge
        rel = Path(os.path.realpath(file)).relative_to(place.project).as_posix()
        before = self.denied(place.project) or ()
        records = undo_folder(place.record)
        had_records = records in self.outside(place.project)
        self.add(place.project, rel, place.machine, records)
        # Codex reads its profile when it starts (measured: an entry added later is not in
        # force), while a glob's matches are found again for each command: an entry this write
        # added (a file no glob covers, or the records' folder an older profile lacked) is said.
        new = [p for p, old in ((rel, covered(rel, before)), (records, had_records)) if not old]
        return (
            " ".join(
                f"Codex denies {p} to its commands only once it restarts: it reads the profile"
                " that denies the files when it starts, so a Codex running now can still read it."
                for p in new
            )
            or None
        )

    def check(self, place: MaskPlace) -> MaskState | None:
        """What the profile denies here, said before the guard's line: Codex masks no file, so
        a denial is what it has, never `masked`."""
        try:
            names = self.denied(place.project)
        except ConfigError as e:
            return MaskState(self.kind, False, f"not denied: {e}")
        if names is None:
            return None
        legacy = self.overridden(place.machine)
        if legacy:
            return MaskState(self.kind, False, f"not denied: {_ignored(legacy)}")
        shown = place.machine.shown(self.project_config(place.project))
        records = undo_folder(place.record)
        if records not in self.outside(place.project):
            why = f"{shown} does not deny {records} (run `offprompt init --mask` again)"
            return MaskState(self.kind, False, f"not denied: {why}")
        count = len([n for n in names if n not in GLOBS])
        return MaskState(
            self.kind,
            True,
            f"denied, not masked: {count} files unreadable to Codex's sandboxed commands, and the"
            f" usual dotenv names and offprompt's staging copies {GLOB_DEPTH} folders deep, by"
            f" {shown} (once this project is trusted)",
        )

    # -- the profile -----------------------------------------------------------------------------

    def denied(self, project: Path) -> tuple[str, ...] | None:
        """The paths (relative to the project) our profile denies, or None when it is not there
        or not the one Codex uses. ConfigError when the file cannot be read."""
        path = self.project_config(project)
        text = files.read_text(path, str(path))
        if text is None:
            return None
        data = files.toml_object(text, str(path))
        mine = _ours(data)
        if mine is None or data.get("default_permissions") != PROFILE:
            return None
        fs = mine.get("filesystem")
        roots = fs.get(_ROOTS) if isinstance(fs, dict) else None
        if not isinstance(roots, dict):
            return ()
        return tuple(sorted(k for k, v in roots.items() if v == "deny"))

    def outside(self, project: Path) -> tuple[str, ...]:
        """The absolute folders our profile denies (the undo records'), () when none or no
        profile of ours. ConfigError when the file cannot be read."""
        path = self.project_config(project)
        text = files.read_text(path, str(path))
        data = files.toml_object(text or "", str(path))
        if data.get("default_permissions") != PROFILE:
            return ()
        return tuple(sorted(_outside_in(data)))

    def turn_on(
        self,
        project: Path,
        written: Iterable[str],
        network: bool,
        shown: str,
        outside: Iterable[str] = (),
    ) -> None:
        """Deny the usual dotenv names and `written` (paths relative to the project,
        `/`-separated), and the absolute folders `outside`, to Codex's commands, keeping what
        the profile denied already. ConfigError, nothing changed, when the project chose
        another profile."""
        path = self.project_config(project)

        def transform(text: str | None) -> files.Edit:
            base = text or ""
            data = files.toml_object(base, shown)
            chosen = data.get("default_permissions")
            if chosen not in (None, PROFILE):
                raise ConfigError(
                    f"{shown} already makes Codex use its permissions profile {chosen!r};"
                    f' offprompt will not replace it. Add `".env" = "deny"` under its filesystem'
                    f' ":workspace_roots" by hand, or take it out and run this again. Nothing was'
                    " changed."
                )
            eol = "\r\n" if "\r\n" in base else "\n"
            names = {*DOTENV_NAMES, *GLOBS, *written, *_denied_in(data)}
            folders = {*outside, *_outside_in(data)}
            new = tomltable.remove_table(base, ("permissions", PROFILE))
            if chosen is None:
                new = _TOP + eol + (eol if new.strip() else "") + new
            # One blank line above the profile, which remove_table takes back out with it.
            if new.strip():
                new += eol if new.endswith(eol) else eol * 2
            new += _block(names, folders, network, eol)
            got = files.toml_object(new, shown)
            mine = set(_denied_in(got)), set(_outside_in(got))
            if got.get("default_permissions") != PROFILE or mine != (names, folders):
                raise ConfigError(f"offprompt could not edit {shown} safely; nothing was changed.")
            return files.Edit(text, "unchanged") if new == text else files.Edit(new, "updated")

        files.update(path, shown, transform, project=project)

    def overridden(self, machine: Machine) -> list[str]:
        """What in this machine's managed files makes every Codex here leave our profile."""
        return [
            *codex_override.from_managed(machine, PROFILE, self.managed_config),
            *codex_override.from_requirements(machine, PROFILE, self.requirements),
        ]

    def network_on(self, project: Path, machine: Machine) -> bool:
        """Whether Codex's workspace sandbox has network for this project now (our profile's,
        or `[sandbox_workspace_write] network_access` in the project's or the user's config), so
        the profile keeps it: a custom profile ignores that setting."""
        for path in (self.project_config(project), self.user_config(machine)):
            try:
                text = files.read_text(path, str(path))
                data = files.toml_object(text or "", str(path))
            except ConfigError:
                continue
            mine = _ours(data) or {}
            net = mine.get("network")
            if isinstance(net, dict) and net.get("enabled") is True:
                return True
            sww = data.get("sandbox_workspace_write")
            if isinstance(sww, dict) and sww.get("network_access") is True:
                return True
        return False

    def add(self, project: Path, rel: str, machine: Machine, records: str) -> bool:
        """After a write of `rel` in a project Codex denies files in: deny it too, and the
        undo records' folder `records`. False when the project has no profile of ours
        (nothing to keep). ConfigError."""
        have = self.denied(project)
        if have is None:
            return False
        # A profile an older offprompt wrote gains the globs (GLOBS) and the records' folder.
        if rel not in have or not set(GLOBS) <= set(have) or records not in self.outside(project):
            path = self.project_config(project)
            network = self.network_on(project, machine)
            self.turn_on(project, [rel], network, str(path), (records,))
        return True

    def turn_off(self, project: Path, shown: str) -> bool:
        """Take our profile and the `default_permissions` line init put first back out; False
        when there was nothing of ours."""
        path = self.project_config(project)
        removed = [False]

        def transform(text: str | None) -> files.Edit:
            if text is None or _ours(files.toml_object(text, shown)) is None:
                return files.Edit(text, "absent")
            eol = "\r\n" if "\r\n" in text else "\n"
            new = tomltable.remove_table(text, ("permissions", PROFILE))
            for top in (_TOP + eol + eol, _TOP + eol):
                if new.startswith(top):
                    new = new[len(top) :]
                    break
            removed[0] = True
            return files.Edit(new if new.strip() else None, "removed")

        files.update(path, shown, transform, path.parent, project=project)
        return removed[0]


def _ignored(places: list[str]) -> str:
    """What to say when a config above the project's makes Codex leave our profile."""
    return (
        f"Codex ignores the permissions profile that denies the files: {' and '.join(places)}"
        " makes it use another sandbox (that file comes above the project's); change it there"
        " (or ask whoever manages it), then run `offprompt init --mask` again (it keeps the"
        " network access you had)"
    )


def covered(rel: str, denied: Iterable[str]) -> bool:
    """Whether one of the profile's `denied` entries (paths relative to the project, or globs
    where `**/` is any number of folders) already denies `rel`, within the profile's scan
    depth."""
    if len(rel.split("/")) > GLOB_DEPTH:
        return rel in denied
    return any(re.fullmatch(_glob_regex(entry), rel) for entry in denied)


def _glob_regex(entry: str) -> str:
    out, i = [], 0
    while i < len(entry):
        if entry.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif entry.startswith("/**", i) and i + 3 == len(entry):
            out.append("/.+")
            i += 3
        else:
            ch = entry[i]
            out.append({"*": "[^/]*", "?": "[^/]"}.get(ch, re.escape(ch)))
            i += 1
    return "".join(out)


def _quoted(key: str) -> str:
    return '"' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _block(names: Iterable[str], folders: Iterable[str], network: bool, eol: str) -> str:
    lines = [
        f"[permissions.{PROFILE}]",
        f"description = {_quoted(_DESCRIPTION)}",
        'extends = ":workspace"',
        "",
        f"[permissions.{PROFILE}.filesystem]",
        f"glob_scan_max_depth = {GLOB_DEPTH}",
        # Absolute paths, outside every workspace root (the undo records' folder).
        *(f'{_quoted(f)} = "deny"' for f in sorted(set(folders))),
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


def _outside_in(data: dict[str, Any]) -> list[str]:
    """The absolute paths our profile's filesystem table denies."""
    fs = (_ours(data) or {}).get("filesystem")
    if not isinstance(fs, dict):
        return []
    return [k for k, v in fs.items() if v == "deny" and os.path.isabs(k)]


def _denied_in(data: dict[str, Any]) -> list[str]:
    mine = _ours(data) or {}
    fs = mine.get("filesystem")
    roots = fs.get(_ROOTS) if isinstance(fs, dict) else None
    return [k for k, v in roots.items() if v == "deny"] if isinstance(roots, dict) else []
