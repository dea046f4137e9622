"""Agents' config files: declaring the offprompt server for `init`, taking it out for `remove`,
and finding where it is declared for `agents`. Imports nothing from the protocol or the page.
"""

from __future__ import annotations

from offprompt.hosts.claude_code import ClaudeCode
from offprompt.hosts.codex import Codex
from offprompt.hosts.cursor import Cursor
from offprompt.hosts.gemini import Gemini
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
from offprompt.hosts.vscode import VsCode
from offprompt.hosts.windsurf import Windsurf
from offprompt.hosts.zed import Zed

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

# In the order `init`, `remove` and `agents` report them.
AGENTS: tuple[Agent, ...] = (
    ClaudeCode(),
    Codex(),
    Cursor(),
    VsCode(),
    Gemini(),
    Windsurf(),
    Zed(),
)
NAMES: tuple[str, ...] = tuple(a.name for a in AGENTS)


def get(name: str) -> Agent:
    """The agent called `name` (one of NAMES); KeyError otherwise."""
    for agent in AGENTS:
        if agent.name == name:
            return agent
    raise KeyError(name)
