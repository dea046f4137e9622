"""The hosts offprompt knows, each one module of this room with its `HOST` (host.py says what
a host's facts are), registered here once: a new host is its module and one line of HOSTS.
The guard, the page and the collect core read HOSTS; the agents' config code takes each
agent's name from its host's module.

The guard asks for a hook's dialect in this order: the first host whose dialect claims an event
reads it (Windsurf's mark before Cursor's, Cursor's before the Copilot runtime's, VS Code's); an
event none claims is in Claude Code's shape. Loaded on every tool call: plain dicts, no `typing`.
"""

from __future__ import annotations

from offprompt.hosts import claude_code, codex, cursor, gemini, vscode, windsurf, zed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOSTS"]

HOSTS: tuple[Host, ...] = (
    claude_code.HOST,
    codex.HOST,
    windsurf.HOST,
    cursor.HOST,
    vscode.HOST,
    gemini.HOST,
    zed.HOST,
)
