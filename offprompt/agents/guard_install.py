"""Adding the guard (DESIGN §14) to a host's JSON settings and taking exactly that out again:
a hook running `offprompt guard` before each tool call, and for Claude Code its
`permissions.deny` rules (made from the guard's own list of protected names). Plain functions
over an agent's facts (its `guard_file` and notes), for `init`, `remove` and `agents`.

Claude Code reads both from `settings.json`; Codex reads the same hook shape from `hooks.json`
next to its config.toml; Gemini CLI the same shape under `hooks.BeforeTool` of its
`settings.json`. Edits splice the text (jsonc), so `remove` gives back the bytes `init` found.
"""

from __future__ import annotations

import copy
import dataclasses
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from offprompt.agents import command as server_command
from offprompt.agents import files, guard_start, hook_wrapper
from offprompt.agents.interface import (
    Agent,
    Change,
    ConfigChange,
    GuardFile,
    Machine,
    Scope,
    ServerCommand,
)
from offprompt.configedit import jsonc, jsonc_edit
from offprompt.errors import ConfigError
from offprompt.guard.protected import DENY_RULES

__all__ = [
    "fails_closed",
    "guard_argv",
    "guarded",
    "hook_command",
    "install",
    "install_guard",
    "install_masked",
    "installed",
    "is_ours",
    "remove",
    "remove_guard",
]

_DENY = ("permissions", "deny")


def install_guard(
    agent: Agent,
    scope: Scope,
    machine: Machine,
    project: Path | None,
    server: ServerCommand,
    *,
    masked: bool = False,
) -> Change:
    """Add the guard's hook (and deny rules) to `agent`'s settings for `scope`, keeping
    everything else. `masked`: the project gets the mask (DESIGN §15), so no deny rules (Claude
    Code makes them sandbox denials that override a mask; the hook stops its file tools), and
    the ones an earlier init added go."""
    gf = agent.guard_file(scope, machine, project)
    if gf is None:
        return Change(agent.name, scope, None, "unsupported", _not_guarded(agent))
    every = gf
    if len(gf.events) < 2:
        unknown: tuple[str, ...] = ()
    elif scope == "project":
        # A team's files: every teammate's version must read them, whatever the initiator's.
        unknown = tuple(e for e in gf.events if e in agent.version_events)
    else:
        unknown = agent.unknown_events(machine, project)
    if unknown:
        gf = dataclasses.replace(gf, events=tuple(e for e in gf.events if e not in unknown))
    try:
        inside = project if scope != "user" else None
        if masked and gf.deny:
            outcome = install_masked(gf, server, project=inside)
        else:
            outcome = install(gf, server, project=inside)
        # Ours under an event this host does not know (an init before a downgrade) would make
        # it refuse to start: taken out.
        stale = dataclasses.replace(every, events=unknown, deny=False)
        if unknown and remove(stale, project=inside) == "removed" and outcome == "unchanged":
            outcome = "updated"
    except ConfigError as e:
        return Change(agent.name, scope, gf.path, "failed", str(e))
    words = {
        "added": f"added the guard to {gf.shown}",
        "updated": f"updated the guard in {gf.shown}",
        "unchanged": f"guard already there in {gf.shown}",
    }.get(outcome, outcome)
    noted = scope == "project" or not agent.guard_note_project_only
    if outcome == "added" and agent.guard_note and noted:
        words += f" ({agent.guard_note})"
    if outcome == "updated" and agent.guard_update_note:
        words += f" ({agent.guard_update_note})"
    return Change(agent.name, scope, gf.path, outcome, words)


def remove_guard(agent: Agent, scope: Scope, machine: Machine, project: Path | None) -> Change:
    """Take out exactly what install_guard added."""
    gf = agent.guard_file(scope, machine, project)
    if gf is None:
        return Change(agent.name, scope, None, "unsupported", _not_guarded(agent))
    try:
        outcome = remove(gf, gf.prune, project=project if scope != "user" else None)
    except ConfigError as e:
        return Change(agent.name, scope, gf.path, "failed", str(e))
    words = f"removed the guard from {gf.shown}" if outcome == "removed" else ""
    return Change(agent.name, scope, gf.path, outcome, words or f"no guard in {gf.shown}")


def guarded(agent: Agent, scope: Scope, machine: Machine, project: Path | None) -> Path | None:
    """The file holding the guard's hook for `scope`, or None. ConfigError if unreadable."""
    gf = agent.guard_file(scope, machine, project)
    if gf is None or not installed(gf):
        return None
    return gf.path


def _not_guarded(agent: Agent) -> str:
    return f"not guarded: {agent.unguarded or 'the agent has no hook file for this scope'}"


def _is_ours(gf: GuardFile, entry: object) -> bool:
    """An entry of this file's shape whose command runs `… offprompt … guard`."""
    if not isinstance(entry, dict):
        return False
    if gf.flat is None:
        return is_ours(entry)
    if set(entry) - {k for k, _ in gf.flat}:
        return False
    key = next(k for k, v in gf.flat if v is None)
    return _runs_guard(entry.get(key))


def hook_command(
    server: ServerCommand,
    answer: hook_wrapper.Answer = "exit",
    *,
    shared: bool = False,
    executable: str = sys.executable,
    source: str | None = None,
) -> str:
    """The shell command a host runs for the hook: the server's command with `guard` for
    `serve` (for an install beside `executable`, the Python running init, that install's
    python started fast: agents/guard_start.py), inside the wrapper that blocks (the host's
    way: `answer`) when it cannot run, or, `shared` (a team's files) on a machine without it,
    blocks a call naming a dotenv file (saying to install offprompt from `source` when
    known)."""
    # A team's file names no path of this machine: the portable command as given.
    argv = guard_start.argv(server, None if shared else executable)
    if shared and source is None:
        source = server_command.install_source(server)
    return hook_wrapper.wrap(argv, answer, shared=shared, source=source)


def is_ours(entry: object) -> bool:
    """A nested hook entry whose only hook runs `… offprompt … guard`."""
    if not isinstance(entry, dict) or set(entry) - {"matcher", "hooks"}:
        return False
    hooks = entry.get("hooks")
    if not isinstance(hooks, list) or len(hooks) != 1 or not isinstance(hooks[0], dict):
        return False
    return hooks[0].get("type") == "command" and _runs_guard(hooks[0].get("command"))


def guard_argv(command: object) -> tuple[str, ...] | None:
    """The words of the `… offprompt … guard` program a hook's command string runs (inside
    the fail-closed wrapper or bare, as init wrote it before), or None when it is not the
    guard's (`offprompt agents` checks that program still starts)."""
    if not isinstance(command, str):
        return None
    try:
        words, _ = hook_wrapper.unwrap(shlex.split(command))
    except ValueError:
        return None
    if words and words[-1] == "guard" and any("offprompt" in w for w in words[:-1]):
        return tuple(words)
    return None


def fails_closed(command: object) -> bool:
    """Whether a guard hook's command is today's wrapper, which blocks when the guard cannot
    run; False for a bare `… offprompt guard` (init wrote that before: a broken install lets
    calls through there until `offprompt init` brings it up to date)."""
    if not isinstance(command, str) or guard_argv(command) is None:
        return False
    return hook_wrapper.unwrap(shlex.split(command))[1]


def _runs_guard(command: object) -> bool:
    return guard_argv(command) is not None


def _parse(text: str, shown: str) -> dict[str, Any]:
    return files.json_object(text, shown)


def _list_at(root: dict[str, Any], path: Sequence[str], shown: str) -> list[Any] | None:
    node: Any = root
    for i, key in enumerate(path):
        if not isinstance(node, dict):
            raise ConfigError(
                f"{'.'.join(path[:i])} in {shown} is not an object; nothing was changed."
            )
        node = node.get(key)
        if node is None:
            return None
    if not isinstance(node, list):
        raise ConfigError(f"{'.'.join(path)} in {shown} is not a list; nothing was changed.")
    return node


def _ours(root: dict[str, Any], gf: GuardFile, path: Sequence[str]) -> list[int]:
    entries = _list_at(root, path, gf.shown) or []
    return [i for i, e in enumerate(entries) if _is_ours(gf, e)]


def installed(gf: GuardFile) -> bool | None:
    """True when the hook is in the file, False when not, None when there is no file."""
    text = files.read_text(gf.path, gf.shown)
    if text is None or not text.strip():
        return None
    root = _parse(text, gf.shown)
    return any(_ours(root, gf, path) for path in gf.paths)


def _add(text: str, path: Sequence[str], value: object) -> str:
    doc = jsonc.parse(text)
    node = doc.root
    for key in path:
        member = node.member(key) if node.members is not None else None
        if member is None:
            return jsonc_edit.set_value(text, path, [value])
        node = member.value
    return jsonc_edit.append(text, path, value)


def _check(new: str, expected: dict[str, Any], shown: str) -> None:
    try:
        got = jsonc.parse(new).root.value
    except jsonc.JsoncError as e:
        raise _cannot(shown, str(e)) from None
    if not jsonc.same(got, expected):
        raise _cannot(shown, "the result did not read back as intended")


def _cannot(shown: str, why: str) -> ConfigError:
    return ConfigError(
        f"offprompt could not add the guard to {shown} without changing other settings ({why});"
        " nothing was changed. Run `offprompt init --no-guard` to skip it."
    )


def install(
    gf: GuardFile,
    server: ServerCommand,
    prune_dir: Path | None = None,
    *,
    project: Path | None = None,
) -> ConfigChange:
    """Add the hook under each event (and deny rules), or bring its command up to date.
    ConfigError. `project`: the project a project's settings file belongs to (files.update)."""
    entry = gf.entry(hook_command(server, gf.answer, shared=gf.shared))
    return files.update(
        gf.path, gf.shown, lambda text: _installing(gf, text, entry), prune_dir, project=project
    )


def _installing(gf: GuardFile, text: str | None, entry: dict[str, object]) -> files.Edit:
    """`text` with `entry` under each event (and the deny rules): what `install` writes."""
    base = text if text is not None and text.strip() else "{}\n"
    root = _parse(base, gf.shown)
    ours = {path: _ours(root, gf, path) for path in gf.paths}
    fresh = not any(ours.values())
    deny = _list_at(root, _DENY, gf.shown) if gf.deny else []
    missing = [r for r in DENY_RULES if gf.deny and r not in (deny or [])]
    new = base
    expected = copy.deepcopy(root)
    changed = False
    try:
        if gf.version is not None and "version" not in root:
            new = jsonc_edit.set_value(new, ("version",), gf.version)
            expected["version"] = gf.version
        for path in gf.paths:
            mine = ours[path]
            entries = _list_at(root, path, gf.shown) or []
            if len(mine) == 1 and jsonc.same(entries[mine[0]], entry):
                continue
            changed = True
            # A stale command (offprompt moved): take ours out and add it again.
            for i in reversed(mine):
                new = jsonc_edit.remove_item(new, path, i)
                del expected["hooks"][path[1]][i]
            new = _add(new, path, entry)
            expected.setdefault("hooks", {}).setdefault(path[1], []).append(entry)
        if not changed and not missing:
            return files.Edit(text, "unchanged")
        # On a fresh install every rule is appended, even one the person had already, so
        # `remove` can take the last copy of each and leave theirs where it was.
        for rule in (DENY_RULES if gf.deny else ()) if fresh else missing:
            new = _add(new, _DENY, rule)
            expected.setdefault("permissions", {}).setdefault("deny", []).append(rule)
    except jsonc.JsoncError as e:
        raise _cannot(gf.shown, str(e)) from None
    _check(new, expected, gf.shown)
    return files.Edit(new, "added" if fresh else "updated")


def install_masked(
    gf: GuardFile, server: ServerCommand, *, project: Path | None = None
) -> ConfigChange:
    """`install` without deny rules, taking out the last copy of each that an earlier init
    added (the person's own copies stay). ConfigError."""
    entry = gf.entry(hook_command(server, gf.answer, shared=gf.shared))
    bare = dataclasses.replace(gf, deny=False)

    def transform(text: str | None) -> files.Edit:
        base = text if text is not None and text.strip() else "{}\n"
        root = _parse(base, gf.shown)
        deny = list(_list_at(root, _DENY, gf.shown) or [])
        new = base
        try:
            for rule in DENY_RULES:
                if rule in deny and _ours(root, gf, gf.paths[0]):
                    last = len(deny) - 1 - deny[::-1].index(rule)
                    new = jsonc_edit.remove_item(new, _DENY, last)
                    del deny[last]
            if new != base and _list_at(_parse(new, gf.shown), _DENY, gf.shown) == []:
                new = jsonc_edit.remove(new, _DENY, prune=True)
        except jsonc.JsoncError as e:
            raise _cannot(gf.shown, str(e)) from None
        edit = _installing(bare, new if new != base else text, entry)
        if edit.outcome == "unchanged" and new != base:
            return files.Edit(new, "updated")
        return edit

    return files.update(gf.path, gf.shown, transform, project=project)


def remove(
    gf: GuardFile, prune_dir: Path | None = None, *, project: Path | None = None
) -> ConfigChange:
    """Take out the hooks and the last copy of each deny rule `install` added. ConfigError.

    A list left empty goes too, with the objects it leaves empty, unless install, run on the
    file with the list kept (or its object), gives the file as it is: then that is what the
    person had. (A `version` init added to a hook file that lacked one stays: install on the
    file with or without it reads the same, and Cursor wants it.)
    """

    def transform(text: str | None) -> files.Edit:
        if text is None or not text.strip():
            return files.Edit(text, "absent")
        root = _parse(text, gf.shown)
        ours = {path: _ours(root, gf, path) for path in gf.paths}
        if not any(ours.values()):
            return files.Edit(text, "absent")
        new = text
        expected = copy.deepcopy(root)
        try:
            for path, mine in ours.items():
                for i in reversed(mine):
                    new = jsonc_edit.remove_item(new, path, i)
                    del expected["hooks"][path[1]][i]
            if gf.deny:
                deny = _list_at(root, _DENY, gf.shown) or []
                for rule in DENY_RULES:
                    if rule in deny:
                        last = len(deny) - 1 - deny[::-1].index(rule)
                        new = jsonc_edit.remove_item(new, _DENY, last)
                        del deny[last]
                        del expected["permissions"]["deny"][last]
            emptied: list[tuple[str, ...]] = [
                path
                for path in (*gf.paths, _DENY)
                if _list_at(_parse(new, gf.shown), path, gf.shown) == []
            ]
            # The entry as the file holds it: what `install` would compare its own with, under
            # the events init put it in (a host's version decides some: unknown_events).
            held = dataclasses.replace(gf, events=tuple(p[1] for p, m in ours.items() if m))
            found, mine = next((path, m) for path, m in ours.items() if m)
            entry = (_list_at(root, found, gf.shown) or [])[mine[0]]
            choices = _choices(emptied)
            chosen = _dropping(gf, new, expected, choices[0])
        except jsonc.JsoncError as e:
            where = " and ".join(".".join(path) for path in gf.paths)
            raise ConfigError(
                f"offprompt could not edit {gf.shown} safely ({e}); take the offprompt guard"
                f" hook out of {where} by hand. Nothing was changed."
            ) from None
        for choice in choices:
            try:
                candidate = _dropping(gf, new, expected, choice)
                if _installing(held, candidate, entry).text == text:
                    chosen = candidate
                    break
            except (ConfigError, jsonc.JsoncError):
                continue
        return files.Edit(chosen, "removed")

    return files.update(gf.path, gf.shown, transform, prune_dir, project=project)


# What remove does with a list it emptied: drop it and the objects it leaves empty (what
# init made), drop it but keep its object (`{"hooks": {}}` was there), or keep it (`[]` was).
_DROP, _DROP_LIST, _KEEP = "drop", "drop the list", "keep"
Choice = tuple[tuple[tuple[str, ...], str], ...]


def _choices(emptied: list[tuple[str, ...]]) -> list[Choice]:
    """Every way of undoing the emptied lists, what init most often made first: all dropped."""
    out: list[Choice] = [()]
    for path in emptied:
        out = [(*c, (path, mode)) for c in out for mode in (_DROP, _DROP_LIST, _KEEP)]
    return out


def _dropping(gf: GuardFile, text: str, expected: dict[str, Any], choice: Choice) -> str | None:
    """`text` with the emptied lists undone as `choice` says; None when nothing is left of the
    file (`{}`, or a hook file holding only the version it must carry)."""
    new = text
    expected = copy.deepcopy(expected)
    for path, mode in choice:
        if mode == _KEEP:
            continue
        new = jsonc_edit.remove(new, path, prune=mode == _DROP)
        parent = expected[path[0]]
        del parent[path[1]]
        if not parent and path[0] not in _keys(new):
            del expected[path[0]]
    _check(new, expected, gf.shown)
    left = jsonc.parse(new).root.value
    only_version = gf.version is not None and left == {"version": gf.version}
    return None if jsonc.is_empty(new) or only_version else new


def _keys(text: str) -> set[str]:
    value = jsonc.parse(text).root.value
    return set(value) if isinstance(value, dict) else set()
