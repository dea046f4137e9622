"""The projects offprompt was set up in on this machine (DESIGN §9 "Remove touches this project
only"): for each project, the agents `init` declared offprompt to and the scope each got, kept in
`setups.json` beside the journal. Never a value: paths, agent names and scopes.

`remove` in one project asks it whether another project still relies on an agent's user config
(an agent with no personal project scope, Codex among them, gets offprompt there for every
project); `remove --everywhere` reads every set-up from it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from offprompt.agents import files
from offprompt.agents.interface import Scope
from offprompt.disk import paths
from offprompt.errors import ConfigError

__all__ = ["SETUPS", "Setup", "Setups"]

SETUPS = "setups.json"
_VERSION = 1
_SCOPES: dict[object, Scope] = {"local": "local", "project": "project", "user": "user"}
_Projects = dict[str, dict[str, list[Scope]]]  # project (real path) -> agent -> scopes


@dataclass(frozen=True)
class Setup:
    """One agent set up for one project: `scope` is where its entry went (`user` for an agent
    with no personal project scope, the fallback init says on its line)."""

    project: str
    agent: str
    scope: Scope


class Setups:
    """The list in `path` (setups.json beside the journal). Reads raise ConfigError for a file
    that is not offprompt's list, so a remove never guesses; writes are all or nothing."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def all(self) -> list[Setup]:
        """Every set-up, projects in the order first set up."""
        out: list[Setup] = []
        for project, agents in self._read().items():
            for agent, scopes in agents.items():
                out.extend(Setup(project, agent, s) for s in scopes)
        return out

    def projects(self) -> list[str]:
        return list(self._read())

    def add(self, project: Path, agent: str, scope: Scope) -> None:
        key = _key(project)

        def edit(data: _Projects) -> None:
            scopes = data.setdefault(key, {}).setdefault(agent, [])
            if scope not in scopes:
                scopes.append(scope)

        self._change(edit)

    def drop(self, project: Path, agents: Iterable[str] | None = None) -> None:
        """Forget `agents` (None: every agent) for `project`; a project left with none goes."""
        key, chosen = _key(project), None if agents is None else set(agents)

        def edit(data: _Projects) -> None:
            mine = data.get(key, {})
            for agent in list(mine):
                if chosen is None or agent in chosen:
                    del mine[agent]
            if not mine:
                data.pop(key, None)

        self._change(edit)

    def forget_scope(self, scope: Scope, agents: Iterable[str] | None = None) -> None:
        """Forget every project's `scope` entries (`remove --global` took the user configs out)."""
        chosen = None if agents is None else set(agents)

        def edit(data: _Projects) -> None:
            for key in list(data):
                for agent in list(data[key]):
                    if chosen is None or agent in chosen:
                        data[key][agent] = [s for s in data[key][agent] if s != scope]
                        if not data[key][agent]:
                            del data[key][agent]
                if not data[key]:
                    del data[key]

        self._change(edit)

    def users(self, agent: str, scope: Scope = "user") -> list[str]:
        """The projects whose `agent` entry is in `scope` (for `user`: who relies on it)."""
        return [s.project for s in self.all() if s.agent == agent and s.scope == scope]

    def _read(self) -> _Projects:
        return _parse(files.read_text(self.path, str(self.path)), self.path)

    def _change(self, edit: Callable[[_Projects], None]) -> None:
        def transform(text: str | None) -> files.Edit:
            data = _parse(text, self.path)
            edit(data)
            if not data:
                return files.Edit(None, "removed" if text is not None else "absent")
            new = json.dumps({"version": _VERSION, "projects": data}, indent=2) + "\n"
            # The state folder: 0700, as the journal makes it.
            paths.make_private_folders(self.path.parent)
            return files.Edit(new, "unchanged" if new == text else "updated")

        # The last set-up gone: the list goes, and the state folder with it when nothing else
        # is there (what the first init made), so nothing init made is left behind.
        files.update(self.path, str(self.path), transform, self.path.parent, new_mode=0o600)


def _key(project: Path) -> str:
    return os.path.realpath(project)


def _parse(text: str | None, path: Path) -> _Projects:
    """The `projects` of a list this version wrote ({} for none); ConfigError for anything
    else, so a remove never guesses who relies on what."""
    if text is None or not text.strip():
        return {}
    wrong = ConfigError(f"{path} is not a list of the projects this offprompt set up")
    try:
        data = json.loads(text)
    except ValueError:
        raise wrong from None
    projects = data.get("projects") if isinstance(data, dict) else None
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        raise wrong
    if not isinstance(projects, dict):
        raise wrong
    out: _Projects = {}
    for key, agents in projects.items():
        if not isinstance(agents, dict):
            raise wrong
        for agent, scopes in agents.items():
            if not isinstance(scopes, list) or not all(s in _SCOPES for s in scopes):
                raise wrong
            out.setdefault(str(key), {})[str(agent)] = [_SCOPES[s] for s in scopes]
    return out
