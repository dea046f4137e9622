"""The list of projects offprompt set up (agents.setups) as `init` and `remove` use it (DESIGN §9
"Remove touches this project only"): `init` records each agent it declared offprompt to, `remove`
in one project keeps an agent's user config while another project relies on it, and `remove
--everywhere` reads every set-up from it.
"""

from __future__ import annotations

import os
from pathlib import Path

from offprompt.agents import Agent, ConfigError, Machine, Scope
from offprompt.agents.setups import SETUPS, Setup, Setups
from offprompt.statedir import journal_path

__all__ = [
    "everything",
    "forget",
    "forget_user",
    "others_using",
    "record",
    "setups",
    "user_kept",
]


def setups(machine: Machine) -> Setups:
    """The list, beside the journal (`OFFPROMPT_STATE_DIR` or the platform's state folder)."""
    return Setups(journal_path(machine.environ).parent / SETUPS)


def record(machine: Machine, folder: Path, agent: Agent, here: Scope) -> str | None:
    """Note that `agent` was set up for `folder` in scope `here`; None when noted, else the
    line to say (a remove elsewhere could then take out what this project uses)."""
    try:
        setups(machine).add(folder, agent.name, here)
    except (ConfigError, OSError) as e:
        return (
            f"{agent.name}: failed: could not note this project in the list of set-up projects"
            f" ({e}); a remove in another project could take out what this one uses"
        )
    return None


def user_kept(machine: Machine, folder: Path, agent: Agent) -> str | None:
    """Why this project's `remove` keeps `agent`'s user config (the agent has no personal
    project scope, so its one entry serves every project): another set-up project relies on it,
    or nothing says this project set it up. None when this remove may take it out."""
    try:
        users = setups(machine).users(agent.name, "user")
    except (ConfigError, OSError) as e:
        return f"offprompt could not read which projects use it ({e})"
    mine = os.path.realpath(folder)
    # A project whose folder is gone uses nothing any more: forgotten, not kept for.
    gone = [p for p in users if p != mine and not os.path.isdir(p)]
    for project in gone:
        forget(machine, Path(project), [agent.name])
    others = [p for p in users if p != mine and p not in gone]
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        first = machine.shown(Path(others[0]))
        return f"another project offprompt set up still uses it ({first}{more})"
    if mine not in users:
        return (
            "offprompt did not set it up for this project"
            " (`offprompt remove --global` takes it out)"
        )
    return None


def others_using(machine: Machine, folder: Path, agent: Agent) -> list[str]:
    """The other projects (still there) whose `agent` entry is its one user-level entry, which
    an init here changes for them too; [] when the list cannot be read."""
    try:
        users = setups(machine).users(agent.name, "user")
    except (ConfigError, OSError):
        return []
    mine = os.path.realpath(folder)
    return [p for p in users if p != mine and os.path.isdir(p)]


def forget(machine: Machine, folder: Path, agents: list[str]) -> None:
    """This project's set-ups of `agents` are gone (best effort: a list that cannot be changed
    only keeps a user config longer)."""
    try:
        setups(machine).drop(folder, agents)
    except (ConfigError, OSError):
        pass


def forget_user(machine: Machine, agents: list[str]) -> None:
    """`remove --global` took these agents' user configs out: no project relies on them now."""
    try:
        setups(machine).forget_scope("user", agents)
    except (ConfigError, OSError):
        pass


def everything(machine: Machine) -> list[Setup]:
    """Every set-up on this machine; ConfigError when the list cannot be read."""
    try:
        return setups(machine).all()
    except OSError as e:
        raise ConfigError(f"could not read the list of set-up projects ({e})") from None
