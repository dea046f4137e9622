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
        if self.project_file is None:
            return Location(scope, None, self.no_project_reason)
        if project is None:
            return Location(scope, None, "no project folder was given")
        return Location(scope, project / self.project_file)

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

        def transform(text: str | None) -> files.Edit:
            base = text if text is not None and text.strip() else "{}\n"
            doc = self._parse(base, shown)
            section = self._section(doc, shown)
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
                    new = jsonc_edit.set_value(new, (self.section, SERVER_NAME), desired)
                else:
                    for key, value in desired.items():
                        if not (key in current and jsonc.same(current[key], value)):
                            new = jsonc_edit.set_value(new, (self.section, SERVER_NAME, key), value)
            except jsonc.JsoncError as e:
                raise self._cannot_edit(shown, str(e), server) from None
            expected = _copy(doc.root.value)
            servers = expected.setdefault(self.section, {})
            if not isinstance(servers, dict):
                raise self._cannot_edit(shown, f"{self.section} is not an object", server)
            merged = dict(current or {})
            merged.update(desired)
            servers[SERVER_NAME] = merged
            self._check(base, new, expected, shown, server)
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
            if text is None or not text.strip():
                return files.Edit(text, "absent")
            doc = self._parse(text, shown)
            section = self._section(doc, shown)
            if section is None or SERVER_NAME not in section:
                return files.Edit(text, "absent")
            try:
                new = jsonc_edit.remove(text, (self.section, SERVER_NAME))
            except jsonc.JsoncError as e:
                raise ConfigError(
                    f"offprompt could not edit {shown} safely ({e}); take the {SERVER_NAME!r}"
                    f" entry out of {self.section!r} by hand. Nothing was changed."
                ) from None
            expected = _copy(doc.root.value)
            servers = dict(section)
            del servers[SERVER_NAME]
            expected[self.section] = servers
            if not servers and self.section not in _keys(new):
                # An emptied section goes too, unless comments in it made jsonc keep it.
                del expected[self.section]
            self._check(text, new, expected, shown, None)
            return files.Edit(None if jsonc.is_empty(new) else new, "removed")

        try:
            outcome = files.update(loc.path, shown, transform, self._prune_dir(scope, project))
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
        if text is None or not text.strip():
            return None
        section = self._section(self._parse(text, shown), shown)
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

    def _section(self, doc: jsonc.Document, shown: str) -> dict[str, object] | None:
        root = doc.root.value
        section = root.get(self.section) if isinstance(root, dict) else None
        if section is None:
            return None
        if not isinstance(section, dict):
            raise ConfigError(
                f"{self.section!r} in {shown} is not an object; fix it, then run this again."
                " Nothing was changed."
            )
        return section

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


def _keys(text: str) -> set[str]:
    try:
        value = jsonc.parse(text).root.value
    except jsonc.JsoncError:
        return set()
    return set(value) if isinstance(value, dict) else set()


def _copy(value: object) -> dict[str, object]:
    copied = json.loads(json.dumps(value))
    if not isinstance(copied, dict):
        raise TypeError("not an object")
    return copied
