"""What every agent with a JSON config shares: our entry under one section key (`mcpServers`,
`servers`, `context_servers`), added, updated key by key, or taken out without touching the rest.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from offprompt.agents import files
from offprompt.agents.interface import (
    SERVER_NAME,
    Agent,
    Change,
    Declaration,
    Location,
    Machine,
    Scope,
    ServerCommand,
    describe,
)
from offprompt.configedit import jsonc, jsonc_edit
from offprompt.errors import ConfigError

__all__ = ["JsonAgent", "at_least", "declared_command"]


def at_least(existing: Mapping[str, object] | None, key: str, minimum: int) -> int | float:
    """`existing[key]` when it is a number of at least `minimum` (a longer timeout the person
    chose), else `minimum`."""
    current = existing.get(key) if existing is not None else None
    if isinstance(current, int | float) and not isinstance(current, bool) and current >= minimum:
        return current
    return minimum


def declared_command(entry: object) -> tuple[str, ...] | None:
    """`command` + `args` of an entry, when they are a string and a list of strings."""
    if not isinstance(entry, Mapping):
        return None
    command, args = entry.get("command"), entry.get("args", [])
    if not isinstance(command, str) or not isinstance(args, list):
        return None
    if not all(isinstance(a, str) for a in args):
        return None
    return (command, *args)


class JsonAgent(Agent):
    """An agent whose MCP servers sit in a JSON (or JSON-with-comments) object under `section`."""

    section: ClassVar[str] = "mcpServers"
    # The project config relative to the project folder, and the agent's own folder in it (which
    # `remove` deletes when it empties it); None when the agent has no project config.
    project_file: ClassVar[str | None] = None
    project_folder: ClassVar[str | None] = None
    no_project_reason: ClassVar[str] = ""

    @abstractmethod
    def user_file(self, machine: Machine) -> Path:
        """The user-level config file."""

    @abstractmethod
    def entry(
        self, server: ServerCommand, existing: Mapping[str, object] | None
    ) -> dict[str, object]:
        """Our entry's keys, given the entry the config holds now (None when there is none).

        Keys not returned here (an `env` the person added) are kept as they are.
        """

    def location(self, scope: Scope, machine: Machine, project: Path | None) -> Location:
        if scope == "user":
            return Location(scope, self.user_file(machine))
        if scope == "local":
            return Location(scope, None, self.no_local)
        if self.project_file is None:
            return Location(scope, None, self.no_project_reason)
        if project is None:
            return Location(scope, None, "no project folder was given")
        return Location(scope, project / self.project_file)

    def section_path(self, scope: Scope, project: Path | None) -> tuple[str, ...]:
        """Where the servers sit in the file for `scope`: `(section,)`, or deeper (Claude Code's
        `projects.<folder>.mcpServers`)."""
        return (self.section,)

    def lock_file(self, path: Path) -> Path | None:
        """The lock the agent itself takes to rewrite `path`, which init takes too; None."""
        return None

    def new_mode(self, scope: Scope) -> int:
        """The mode of a config file init creates (before the umask)."""
        return 0o666

    def _prune_dir(self, scope: Scope, project: Path | None) -> Path | None:
        if scope == "project" and project is not None and self.project_folder is not None:
            return project / self.project_folder
        return None

    def install(
        self, scope: Scope, machine: Machine, project: Path | None, server: ServerCommand
    ) -> Change:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return Change(self.name, scope, None, "unsupported", loc.why_not or "")
        shown = machine.shown(loc.path)
        where = self.section_path(scope, project)

        def transform(text: str | None) -> files.Edit:
            base = text if text is not None and text.strip() else "{}\n"
            return self._installing(base, text, where, shown, server)

        try:
            outcome = files.update(
                loc.path,
                shown,
                transform,
                lock=self.lock_file(loc.path),
                new_mode=self.new_mode(scope),
                project=project if scope != "user" else None,
            )
        except ConfigError as e:
            return Change(self.name, scope, loc.path, "failed", str(e))
        return Change(self.name, scope, loc.path, outcome, describe(self, outcome, scope, shown))

    def _installing(
        self,
        base: str,
        text: str | None,
        where: tuple[str, ...],
        shown: str,
        server: ServerCommand,
    ) -> files.Edit:
        """`base` with our entry under `where`: what install writes."""
        doc = self._parse(base, shown)
        section = self._section(doc, where, shown)
        existing = section.get(SERVER_NAME) if section is not None else None
        current = existing if isinstance(existing, dict) else None
        desired = self.entry(server, current)
        if current is not None and all(
            k in current and jsonc.same(current[k], v) for k, v in desired.items()
        ):
            return files.Edit(text, "unchanged")
        new = base
        try:
            if current is None:
                new = jsonc_edit.set_value(new, (*where, SERVER_NAME), desired)
            else:
                for key, value in desired.items():
                    if not (key in current and jsonc.same(current[key], value)):
                        new = jsonc_edit.set_value(new, (*where, SERVER_NAME, key), value)
        except jsonc.JsoncError as e:
            raise self._cannot_edit(shown, str(e), server) from None
        expected = _copy(doc.root.value)
        node: dict[str, object] = expected
        for key in where:
            child = node.setdefault(key, {})
            if not isinstance(child, dict):
                raise self._cannot_edit(shown, f"{'.'.join(where)} is not an object", server)
            node = child
        merged = dict(current or {})
        merged.update(desired)
        node[SERVER_NAME] = merged
        self._check(base, new, expected, shown, server)
        return files.Edit(new, "added" if current is None else "updated")

    def remove(self, scope: Scope, machine: Machine, project: Path | None) -> Change:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return Change(self.name, scope, None, "unsupported", loc.why_not or "")
        shown = machine.shown(loc.path)
        where = self.section_path(scope, project)

        def transform(text: str | None) -> files.Edit:
            if text is None or not text.strip():
                return files.Edit(text, "absent")
            doc = self._parse(text, shown)
            section = self._section(doc, where, shown)
            if section is None or SERVER_NAME not in section:
                return files.Edit(text, "absent")
            entry = section[SERVER_NAME]
            # The objects above our entry that it leaves empty go too when init made them; a
            # deeper section (Claude Code's project entry) keeps them unless init, run again
            # on what is left, gives back the file as it is: then they were init's.
            chosen = self._removing(text, doc, where, shown, prune=True)
            if len(where) > 1 and chosen is not None:
                again = self._reinstalled(chosen, where, shown, entry)
                if again != text and not self._whole_entry_was_inits(
                    chosen, again, doc, where, shown
                ):
                    chosen = self._removing(text, doc, where, shown, prune=False)
            return files.Edit(chosen, "removed")

        try:
            outcome = files.update(
                loc.path,
                shown,
                transform,
                self._prune_dir(scope, project),
                lock=self.lock_file(loc.path),
                project=project if scope != "user" else None,
            )
        except ConfigError as e:
            return Change(self.name, scope, loc.path, "failed", str(e))
        if outcome == "absent" and not loc.path.exists():
            return Change(self.name, scope, loc.path, outcome, f"no config at {shown}")
        return Change(self.name, scope, loc.path, outcome, describe(self, outcome, scope, shown))

    def _removing(
        self,
        text: str,
        doc: jsonc.Document,
        where: tuple[str, ...],
        shown: str,
        *,
        prune: bool,
    ) -> str | None:
        """`text` without our entry (and, with `prune`, the objects that leaves empty); None
        when nothing is left of the file."""
        try:
            new = jsonc_edit.remove(text, (*where, SERVER_NAME), prune=prune)
        except jsonc.JsoncError as e:
            raise ConfigError(
                f"offprompt could not edit {shown} safely ({e}); take the {SERVER_NAME!r}"
                f" entry out of {'.'.join(where)!r} by hand. Nothing was changed."
            ) from None
        expected = _copy(doc.root.value)
        chain: list[dict[str, object]] = [expected]
        for key in where:
            child = chain[-1][key]
            if not isinstance(child, dict):
                raise ConfigError(f"{'.'.join(where)!r} in {shown} is not an object.")
            chain.append(child)
        del chain[-1][SERVER_NAME]
        left = _value(new)
        # Walk back up: an emptied object jsonc took out (no comment kept it) goes here too.
        for depth in range(len(where), 0, -1):
            if chain[depth] or not prune or _has(left, where[:depth]):
                break
            del chain[depth - 1][where[depth - 1]]
        self._check(text, new, expected, shown, None)
        return None if jsonc.is_empty(new) else new

    def _whole_entry_was_inits(
        self,
        chosen: str,
        again: str | None,
        doc: jsonc.Document,
        where: tuple[str, ...],
        shown: str,
    ) -> bool:
        """The prune took the whole object holding our section (a project's entry init made),
        and init gives back the same JSON: only its place among the others differs, since init
        adds an entry after those set up later (so a project set up before another one)."""
        if (
            again is None
            or self._section(self._parse(chosen, shown), where[:-1], shown) is not None
        ):
            return False
        return jsonc.same(self._parse(again, shown).root.value, doc.root.value)

    def _reinstalled(
        self, text: str, where: tuple[str, ...], shown: str, entry: object
    ) -> str | None:
        """What install makes of `text` for the entry the file held (None if it cannot)."""
        command = declared_command(entry)
        if command is None:
            return None
        server = ServerCommand(command[0], command[1:])
        try:
            edit = self._installing(text, text, where, shown, server)
        except ConfigError:
            return None
        if edit.text is None:
            return None
        # install writes only the keys `entry()` gives; the rest of the entry as the file held it.
        section = self._section(self._parse(edit.text, shown), where, shown)
        got = section.get(SERVER_NAME) if section is not None else None
        return edit.text if jsonc.same(got, entry) else None

    def declaration(
        self, scope: Scope, machine: Machine, project: Path | None
    ) -> Declaration | None:
        loc = self.location(scope, machine, project)
        if loc.path is None:
            return None
        shown = machine.shown(loc.path)
        text = files.read_text(loc.path, shown)
        if text is None or not text.strip():
            return None
        where = self.section_path(scope, project)
        section = self._section(self._parse(text, shown), where, shown)
        if section is None or SERVER_NAME not in section:
            return None
        return Declaration(self.name, scope, loc.path, declared_command(section[SERVER_NAME]))

    # --- helpers -------------------------------------------------------------------------------

    def _parse(self, text: str, shown: str) -> jsonc.Document:
        try:
            doc = jsonc.parse(text)
        except jsonc.JsoncError as e:
            raise ConfigError(
                f"{shown} is not valid JSON ({e}); fix it, then run this again. Nothing was"
                " changed."
            ) from None
        if not isinstance(doc.root.value, dict):
            raise ConfigError(f"{shown} does not hold a JSON object; nothing was changed.")
        return doc

    def _section(
        self, doc: jsonc.Document, where: tuple[str, ...], shown: str
    ) -> dict[str, object] | None:
        node: object = doc.root.value
        for i, key in enumerate(where):
            if not isinstance(node, dict):
                return None
            node = node.get(key)
            if node is None:
                return None
            if not isinstance(node, dict):
                raise ConfigError(
                    f"{'.'.join(where[: i + 1])!r} in {shown} is not an object; fix it, then run"
                    " this again. Nothing was changed."
                )
        return node if isinstance(node, dict) else None

    def _cannot_edit(self, shown: str, why: str, server: ServerCommand | None) -> ConfigError:
        hint = ""
        if server is not None:
            entry = json.dumps({SERVER_NAME: self.entry(server, None)}, ensure_ascii=False)
            hint = f" Add this to {self.section!r} by hand: {entry}"
        return ConfigError(
            f"offprompt could not edit {shown} without changing other settings ({why});"
            f" nothing was changed.{hint}"
        )

    def _check(
        self,
        before: str,
        after: str,
        expected: dict[str, object],
        shown: str,
        server: ServerCommand | None,
    ) -> None:
        """Refuse an edit unless the new text reads back as exactly the intended settings, and
        stays plain JSON when it was plain JSON (comments never appear where there were none)."""
        try:
            got = jsonc.parse(after).root.value
        except jsonc.JsoncError as e:
            raise self._cannot_edit(shown, str(e), server) from None
        if not jsonc.same(got, expected):
            raise self._cannot_edit(shown, "the result did not read back as intended", server)
        try:
            json.loads(before)
        except ValueError:
            return
        try:
            json.loads(after)
        except ValueError:
            raise self._cannot_edit(shown, "the result was not plain JSON", server) from None


def _value(text: str) -> object:
    try:
        return jsonc.parse(text).root.value
    except jsonc.JsoncError:
        return None


def _has(value: object, path: tuple[str, ...]) -> bool:
    """Whether `value` holds something at `path`."""
    for key in path:
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return True


def _copy(value: object) -> dict[str, object]:
    copied = json.loads(json.dumps(value))
    if not isinstance(copied, dict):
        raise TypeError("not an object")
    return copied
