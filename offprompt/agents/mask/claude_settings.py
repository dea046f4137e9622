"""The mask's edits in Claude Code's settings (DESIGN §15), and mask.json, what they added:
`Mask` turns it on and off for a project, `keep_entry` keeps a file's entry exact after a write,
`check` says whether it holds (agents/mask/claude_code.py is the host's mask built on them).

Claude Code 2.1.328 honours credentials and TLS termination only from the user settings
(`~/.claude/settings.json`, or `$CLAUDE_CONFIG_DIR/settings.json`), so the entries go there; the
sandbox is turned on for the masked project alone, in its personal `.claude/settings.local.json`.

What offprompt added is kept in `mask.json` beside the journal (names and paths, never a value):
for each masked project its user settings file, the files whose entries are ours (with the keys
offprompt wrote there) and what the members it set in settings.local.json were before; for each
user settings file the members offprompt created in it and the hosts it added to
`allowedDomains`. `remove --mask` takes out exactly those, so the person's own sandbox settings
stay byte for byte.

Claude Code keeps one `sandbox.credentials.files` entry per path (a later one for the same file
replaces the earlier: measured in 2.1.332), so each file offprompt wrote has one entry, the folder
of a masked write's undo records in offprompt's state dir one more, denying it, and where
an earlier version made the project's `.offprompt-keep` folder (it kept a masked file's undo copy
there; the copy now lives in offprompt's state dir), one more, denying it. A project's record
carries `version`: one older than `_VERSION` is rewritten whole on the next write or init, so its
entries are never left half upgraded.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from offprompt.agents import files
from offprompt.agents.mask.claude_entry import deny_entry, entry, held_back, hosts_for
from offprompt.agents.mask.claude_folders import keep_folder, legacy_keep, undo_folder
from offprompt.configedit import jsonc, jsonc_edit
from offprompt.errors import ConfigError

__all__ = [
    "Mask",
    "check",
    "keep_entry",
    "local_settings",
    "missing_programs",
    "user_settings",
]

_LOCAL = (".claude", "settings.local.json")
_TLS = ("sandbox", "network", "tlsTerminate")
_FILES = ("sandbox", "credentials", "files")
_ENABLED = ("sandbox", "enabled")
_DOMAINS = ("sandbox", "network", "allowedDomains")
_ABSENT = "absent"  # what a member of settings.local.json was when init found none
# 2: injectHosts only the hosts every key of the file shares, and the keep folder denied.
# 3: `extract` takes a commented-out line's value too; the undo records' folder in the state dir
# denied; the keep folder denied only where an earlier version made it.
_VERSION = 3
# What the masked project's settings.local.json gets, each honoured from there (measured in
# Claude Code 2.1.328): the sandbox on; a call's `dangerouslyDisableSandbox` ignored (without
# it, a call that asks to leave the sandbox, once allowed, read the real value); and a sandbox
# that cannot start refusing commands (without it, "Sandboxing is disabled for the rest of this
# session" and they ran unsandboxed: `cat .env` printed the value).
_ESCAPE = ("sandbox", "allowUnsandboxedCommands")
_REQUIRED = ("sandbox", "failIfUnavailable")
_LOCAL_SETTINGS: tuple[tuple[tuple[str, ...], bool], ...] = (
    (_ENABLED, True),
    (_ESCAPE, False),
    (_REQUIRED, True),
)


def user_settings(home: Path, environ: Mapping[str, str]) -> Path:
    """Claude Code's user settings file: in $CLAUDE_CONFIG_DIR when set, else ~/.claude."""
    custom = environ.get("CLAUDE_CONFIG_DIR", "").strip()
    folder = Path(custom).expanduser() if custom and Path(custom).is_absolute() else None
    return (folder or home / ".claude") / "settings.json"


def local_settings(project: Path) -> Path:
    return project.joinpath(*_LOCAL)


def missing_programs(which: Any, platform: str) -> list[str]:
    """What Claude Code's sandbox needs here and this machine lacks (Linux: bwrap and socat)."""
    if platform != "linux":
        return []
    return [name for name in ("bwrap", "socat") if which(name) is None]


def _key(project: Path) -> str:
    return os.path.realpath(project)


# --- the record --------------------------------------------------------------------------------


def _read_record(path: Path) -> dict[str, Any]:
    text = files.read_text(path, str(path))
    if text is None or not text.strip():
        return {"projects": {}, "settings": {}}
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError(
            f"{path} (what offprompt's mask added) is not valid JSON; nothing was changed."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; nothing was changed.")
    data.setdefault("projects", {})
    data.setdefault("settings", {})
    return data


def _write_record(path: Path, data: dict[str, Any]) -> None:
    empty = not data["projects"] and not data["settings"]
    text = None if empty else json.dumps(data, indent=2, sort_keys=True) + "\n"
    files.update(path, str(path), lambda _: files.Edit(text, "updated"), new_mode=0o600)


def check(
    record: Path, project: Path, which: Any, platform: str, shown: Any = str
) -> tuple[bool, str] | None:
    """None when `project` is not masked; else whether the mask holds here and why not, or
    where it is (for `offprompt agents`)."""
    try:
        mine = _read_record(record)["projects"].get(_key(project))
    except ConfigError as e:
        return False, str(e)
    if mine is None:
        return None
    missing = missing_programs(which, platform)
    if missing:
        return False, f"Claude Code's sandbox cannot run here: {' and '.join(missing)} missing"
    settings = Path(mine["settings"])
    local = local_settings(Path(_key(project)))
    try:
        _, root = _root(files.read_text(settings, str(settings)), str(settings))
        _, here = _root(files.read_text(local, str(local)), str(local))
    except ConfigError as e:
        return False, str(e)
    if not isinstance(_at(root, _TLS)[1], dict):
        return False, f"sandbox.network.tlsTerminate is gone from {shown(settings)}"
    found, items = _at(root, _FILES)
    entries = items if found and isinstance(items, list) else []
    lacking = [f for f in mine["files"] if not _ours(entries, [f])]
    if lacking:
        return False, f"{shown(settings)} has no mask entry for {', '.join(lacking)}"
    records = undo_folder(record)
    if deny_entry(records) not in entries:
        why = f"{shown(settings)} does not deny {records} (run `offprompt init --mask` again)"
        return False, why
    keep = keep_folder(_key(project))
    if legacy_keep(keep) and deny_entry(keep) not in entries:
        why = f"{shown(settings)} does not deny {keep} (run `offprompt init --mask` again)"
        return False, why
    if _at(here, _ENABLED)[1] is not True:
        return False, f"the sandbox is not on in {shown(local)}"
    for path, value in _LOCAL_SETTINGS[1:]:
        if _at(here, path)[1] is not value:
            return False, f"{'.'.join(path)} is not {json.dumps(value)} in {shown(local)}"
    where = f"masked by {shown(settings)} (the sandbox on in {shown(local)})"
    return True, where + _held_back(mine["files"])


def _held_back(written: Mapping[str, list[str] | None]) -> str:
    """What `check` adds for the keys whose provider gets only their stand-in: a file holding
    keys of several providers (or one with none) has its values put back on no host they
    do not all share."""
    held = sorted({n for names in written.values() for n in held_back(names or ())})
    if not held:
        return ""
    one = len(held) == 1
    return (
        f"; {', '.join(held)} reach{'es its' if one else ' their'}"
        " provider only as a stand-in (one file holds keys of several providers, and Claude"
        " Code puts a file's values back on one list of hosts; keep each provider's keys in a"
        " file of their own to have them put back)"
    )


# --- the JSON edits ----------------------------------------------------------------------------


def _root(text: str | None, shown: str) -> tuple[str, dict[str, Any]]:
    base = text if text is not None and text.strip() else "{}\n"
    return base, files.json_object(base, shown)


def _at(root: object, path: tuple[str, ...]) -> tuple[bool, object]:
    node = root
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False, None
        node = node[key]
    return True, node


def _first_missing(root: object, path: tuple[str, ...]) -> tuple[str, ...]:
    for depth in range(1, len(path) + 1):
        if not _at(root, path[:depth])[0]:
            return path[:depth]
    return path


def _objects_on(root: object, path: tuple[str, ...], shown: str) -> None:
    node = root
    for i, key in enumerate(path):
        if not isinstance(node, dict):
            where = ".".join(path[:i])
            raise ConfigError(f"{where} in {shown} is not an object; nothing was changed.")
        if key not in node:
            return
        node = node[key]


def _emptyish(value: object) -> bool:
    if isinstance(value, dict):
        return all(_emptyish(v) for v in value.values())
    return value == []


def _hosts_of(entries: Iterable[Mapping[str, object]]) -> set[str]:
    hosts = (e.get("injectHosts") for e in entries)
    return {h for each in hosts if isinstance(each, list) for h in each if isinstance(h, str)}


def _ours(items: list[Any], paths: Iterable[str]) -> list[int]:
    wanted = set(paths)
    return [i for i, e in enumerate(items) if isinstance(e, dict) and e.get("path") in wanted]


class Mask:
    """The mask's edits for one machine: `record` is mask.json, `settings` the user settings."""

    def __init__(self, record: Path, settings: Path, shown: str) -> None:
        self.record = record
        self.settings = settings
        self.shown = shown

    # -- user settings ---------------------------------------------------------------------------

    def _put_entries(
        self, entries: list[dict[str, object]], created: list[list[str]], domains: list[str]
    ) -> None:
        """Add or update our entries (by path), TLS termination, and each entry's hosts in
        `sandbox.network.allowedDomains` (Claude Code refuses an `injectHosts` host its sandbox
        cannot reach) in the user settings; `created` gets each member this made, `domains`
        the hosts it added. ConfigError, with nothing changed."""
        hosts = sorted(_hosts_of(entries))

        def transform(text: str | None) -> files.Edit:
            base, root = _root(text, self.shown)
            made: list[list[str]] = []
            added: list[str] = []
            new = base
            try:
                for path in (_TLS, _FILES, _DOMAINS):
                    _objects_on(root, path, self.shown)
                if not _at(root, _TLS)[0]:
                    made.append(list(_first_missing(root, _TLS)))
                    new = jsonc_edit.set_value(new, _TLS, {})
                new = self._ensure(new, _FILES, entries, made, [])
                new = self._ensure(new, _DOMAINS, hosts, made, added)
            except jsonc.JsoncError as e:
                raise ConfigError(
                    f"offprompt could not edit {self.shown} safely ({e}); nothing was changed."
                ) from None
            created[:], domains[:] = made, added
            if new == base:
                return files.Edit(text, "unchanged")
            return files.Edit(new, "updated")

        files.update(self.settings, self.shown, transform, new_mode=0o600)

    def _ensure(
        self,
        text: str,
        path: tuple[str, ...],
        items: Iterable[object],
        made: list[list[str]],
        added: list[str],
    ) -> str:
        """`text` with each of `items` in the list at `path`: an entry (a dict) replaces ours
        for its file path, a host (a string) is added when missing (`added` gets it)."""
        new = text
        for item in items:
            current = jsonc.parse(new).root.value
            found, there = _at(current, path)
            if not found:
                made.append(list(_first_missing(current, path)))
                added += [item] if isinstance(item, str) else []
                new = jsonc_edit.set_value(new, path, [item])
                continue
            if not isinstance(there, list):
                where = ".".join(path)
                raise ConfigError(f"{where} in {self.shown} is not a list; nothing was changed.")
            if isinstance(item, str):
                if item not in there:
                    added.append(item)
                    new = jsonc_edit.append(new, path, item)
                continue
            if not isinstance(item, dict):
                continue
            mine = _ours(there, [str(item["path"])])
            if len(mine) == 1 and jsonc.same(there[mine[0]], item):
                continue
            for i in reversed(mine):
                new = jsonc_edit.remove_item(new, path, i)
            new = jsonc_edit.append(new, path, item)
        return new

    def _take_entries(
        self,
        paths: list[str],
        domains: list[str],
        created: list[list[str]] | None,
        prune: Path | None = None,
    ) -> None:
        """Take our entries out of the user settings, and with `created` the members offprompt
        made there once they hold nothing of the person's."""

        def transform(text: str | None) -> files.Edit:
            if text is None or not text.strip():
                return files.Edit(text, "absent")
            base, root = _root(text, self.shown)
            new = base
            try:
                found, items = _at(root, _FILES)
                if found and isinstance(items, list):
                    for i in reversed(_ours(items, paths)):
                        new = jsonc_edit.remove_item(new, _FILES, i)
                found, hosts = _at(root, _DOMAINS)
                if found and isinstance(hosts, list):
                    for host in domains:
                        if host in hosts:
                            last = len(hosts) - 1 - hosts[::-1].index(host)
                            new = jsonc_edit.remove_item(new, _DOMAINS, last)
                            del hosts[last]
                for path in reversed(created or []):
                    there, value = _at(jsonc.parse(new).root.value, tuple(path))
                    if there and _emptyish(value):
                        new = jsonc_edit.remove(new, tuple(path), prune=False)
            except jsonc.JsoncError as e:
                raise ConfigError(
                    f"offprompt could not edit {self.shown} safely ({e}); take the mask entries"
                    " out of sandbox.credentials.files by hand. Nothing was changed."
                ) from None
            if new == base:
                return files.Edit(text, "absent")
            return files.Edit(None if jsonc.is_empty(new) else new, "removed")

        files.update(self.settings, self.shown, transform, prune)

    # -- the project's personal settings ---------------------------------------------------------

    @staticmethod
    def _set_local(local: Path, shown: str) -> dict[str, str]:
        """The sandbox on, and no way out of it, in the project's settings.local.json: what
        each member was before (JSON, or `absent`)."""
        before: dict[str, str] = {}

        def transform(text: str | None) -> files.Edit:
            base, root = _root(text, shown)
            new = base
            before.clear()
            for path, value in _LOCAL_SETTINGS:
                _objects_on(root, path, shown)
                found, was = _at(root, path)
                before[".".join(path)] = json.dumps(was) if found else _ABSENT
                if not found or was is not value:
                    try:
                        new = jsonc_edit.set_value(new, path, value)
                    except jsonc.JsoncError as e:
                        raise ConfigError(
                            f"offprompt could not edit {shown} safely ({e}); nothing was changed."
                        ) from None
            return files.Edit(text, "unchanged") if new == base else files.Edit(new, "updated")

        files.update(local, shown, transform, new_mode=0o600, project=local.parent.parent)
        return dict(before)

    @staticmethod
    def _restore(local: Path, shown: str, before: Mapping[str, str]) -> None:
        """Each member `_set_local` changed back to what it was, unless the person changed it
        since (then it is theirs)."""

        def transform(text: str | None) -> files.Edit:
            if text is None or not text.strip():
                return files.Edit(text, "absent")
            base, _ = _root(text, shown)
            new = base
            try:
                for path, value in reversed(_LOCAL_SETTINGS):
                    was = before.get(".".join(path), json.dumps(value))
                    found, now = _at(jsonc.parse(new).root.value, path)
                    if not found or now is not value or was == json.dumps(value):
                        continue
                    if was == _ABSENT:
                        new = jsonc_edit.remove(new, path, prune=True)
                    else:
                        new = jsonc_edit.set_value(new, path, json.loads(was))
            except jsonc.JsoncError as e:
                raise ConfigError(f"offprompt could not edit {shown} safely ({e}).") from None
            if new == base:
                return files.Edit(text, "absent")
            return files.Edit(None if jsonc.is_empty(new) else new, "removed")

        # Claude Code's folder goes too when the file was all it held, as the guard's remove
        # prunes it: the mask alone (`init --mask --no-guard`) would otherwise leave it empty.
        files.update(local, shown, transform, local.parent, project=local.parent.parent)

    # -- what init, remove and the writes call ---------------------------------------------------

    def turn_on(self, project: Path, written: Mapping[str, tuple[str, ...] | None]) -> None:
        """Mask `project`: an entry per file in `written` (absolute path: the keys offprompt
        wrote there, None for a file sink's), TLS termination, the sandbox on for it alone."""
        key = _key(project)
        record = _read_record(self.record)
        mine = record["projects"].get(key) or {"settings": str(self.settings), "files": {}}
        for path, names in written.items():
            mine["files"][path] = sorted(set(names)) if names is not None else None
        mine["version"] = _VERSION
        created: list[list[str]] = []
        domains: list[str] = []
        folder_made = not self.settings.parent.exists()
        keep = keep_folder(key)
        entries = [
            *self._entries(mine["files"]),
            deny_entry(undo_folder(self.record, make=True)),
            *([deny_entry(keep)] if legacy_keep(keep) else []),
        ]
        self._put_entries(entries, created, domains)
        slot = record["settings"].setdefault(
            str(self.settings), {"created": [], "domains": [], "folder_made": folder_made}
        )
        slot["created"] += [c for c in created if c not in slot["created"]]
        slot["domains"] = sorted({*slot.get("domains", ()), *domains})
        if "local_before" not in mine:
            local = local_settings(Path(key))
            mine["local_before"] = self._set_local(local, str(local))
        record["projects"][key] = mine
        _write_record(self.record, record)

    def turn_off(self, project: Path) -> bool:
        """Take out what turn_on and the writes added for `project`; False if it was not
        masked. The members made in the user settings go with the last masked project."""
        key = _key(project)
        record = _read_record(self.record)
        mine = record["projects"].get(key)
        if mine is None:
            return False
        settings = str(mine.get("settings", self.settings))
        projects = record["projects"]
        others = [k for k, p in projects.items() if k != key and p["settings"] == settings]
        slot = record["settings"].get(settings, {"created": []})
        if settings != str(self.settings):
            self.settings, self.shown = Path(settings), settings
        prune = self.settings.parent if not others and slot.get("folder_made") else None
        # The hosts offprompt added that no other masked project's entries still need.
        still = [e for k in others for e in self._entries(projects[k]["files"])]
        needed = _hosts_of(still)
        drop = [h for h in slot.get("domains", ()) if h not in needed]
        slot["domains"] = [h for h in slot.get("domains", ()) if h in needed]
        # The undo records' folder is one for every project: its denial goes with the last.
        shared = [] if others else [undo_folder(self.record)]
        ours = [*mine["files"], keep_folder(key), *shared]
        self._take_entries(ours, drop, None if others else slot["created"], prune)
        local = local_settings(Path(key))
        self._restore(local, str(local), mine.get("local_before", {}))
        del record["projects"][key]
        if not others:
            record["settings"].pop(settings, None)
            # The records' folder stays (empty, 0700): a Codex profile may still deny it, and
            # Codex denies a folder only if it exists as Codex starts.
        _write_record(self.record, record)
        return True

    @staticmethod
    def _entries(written: Mapping[str, list[str] | None]) -> list[dict[str, object]]:
        return [
            entry(path, names, hosts_for(names or ())) for path, names in sorted(written.items())
        ]


def keep_entry(record: Path, project: Path, file: Path, names: Iterable[str], whole: bool) -> None:
    """After a write of `names` to `file` in `project` (a real path): bring the file's entry up
    to date when the project is masked. ConfigError, OSError or ValueError when it cannot."""
    key = _key(project)
    data = _read_record(record)
    mine = data["projects"].get(key)
    if mine is None:
        return
    path = os.path.realpath(file)
    old = mine["files"].get(path)
    merged = None if whole else tuple(sorted(set(old or ()) | set(names)))
    same = path in mine["files"] and (old is None if merged is None else tuple(old) == merged)
    if same and mine.get("version") == _VERSION:
        return
    settings = Path(mine["settings"])
    Mask(record, settings, str(settings)).turn_on(Path(key), {path: merged})
