"""Agents' config files: declaring the offprompt server for `init`, taking it out for `remove`,
and finding where it is declared for `agents`; the guard's rules (guard.py). Imports nothing
from the protocol or the page, and loads the agents only when asked for them.
"""

from __future__ import annotations

# Not `from typing import TYPE_CHECKING`: importing typing costs `offprompt guard` (which
# imports this package) a few ms on every tool call.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from offprompt.hosts.interface import (
        SERVER_NAME,
        Agent,
        Change,
        ConfigError,
        Declaration,
        Location,
        Machine,
        Presence,
        Scope,
        ServerCommand,
    )

    AGENTS: tuple[Agent, ...]
    NAMES: tuple[str, ...]

__all__ = [
    "AGENTS",
    "NAMES",
    "SERVER_NAME",
    "Agent",
    "Change",
    "ConfigError",
    "Declaration",
    "Location",
    "Machine",
    "Presence",
    "Scope",
    "ServerCommand",
    "get",
]

# What the interface module answers (everything exported but the agents and `get`).
_INTERFACE = frozenset(__all__) - {"AGENTS", "NAMES", "get"}


def __getattr__(name: str) -> Any:
    # Loaded on first use, so `offprompt guard` (hosts.guard) does not pay for every agent's
    # config code on each tool call.
    if name in _INTERFACE:
        from offprompt.hosts import interface

        return getattr(interface, name)
    if name in ("AGENTS", "NAMES"):
        agents = _agents()
        globals().update(AGENTS=agents, NAMES=tuple(a.name for a in agents))
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _agents() -> tuple[Agent, ...]:
    from offprompt.hosts.claude_code import ClaudeCode
    from offprompt.hosts.codex import Codex
    from offprompt.hosts.cursor import Cursor
    from offprompt.hosts.gemini import Gemini
    from offprompt.hosts.vscode import VsCode
    from offprompt.hosts.windsurf import Windsurf
    from offprompt.hosts.zed import Zed

    # In the order `init`, `remove` and `agents` report them.
    return (ClaudeCode(), Codex(), Cursor(), VsCode(), Gemini(), Windsurf(), Zed())


def get(name: str) -> Agent:
    """The agent called `name` (one of NAMES); KeyError otherwise."""
    agents: tuple[Agent, ...] = globals().get("AGENTS") or __getattr__("AGENTS")
    for agent in agents:
        if agent.name == name:
            return agent
    raise KeyError(name)
