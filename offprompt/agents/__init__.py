"""Agents' config files: declaring the offprompt server for `init`, taking it out for `remove`,
and finding where it is declared for `agents` (interface.py, one module per agent), and adding
or taking out the guard's hook (guard_install.py), and each host's mask (mask/, which its agent
names). Imports nothing from the protocol, the page or the write.
"""

from __future__ import annotations

from offprompt.agents.claude_code import ClaudeCode
from offprompt.agents.codex import Codex
from offprompt.agents.cursor import Cursor
from offprompt.agents.gemini import Gemini
from offprompt.agents.interface import (
    SCOPES,
    SERVER_NAME,
    Agent,
    Change,
    Declaration,
    Location,
    Machine,
    Presence,
    Scope,
    ServerCommand,
)
from offprompt.agents.vscode import VsCode
from offprompt.agents.windsurf import Windsurf
from offprompt.agents.zed import Zed
from offprompt.errors import ConfigError

__all__ = [
    "AGENTS",
    "NAMES",
    "SCOPES",
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
NAMES = tuple(a.name for a in AGENTS)


def get(name: str) -> Agent:
    """The agent called `name` (one of NAMES); KeyError otherwise."""
    for agent in AGENTS:
        if agent.name == name:
            return agent
    raise KeyError(name)
