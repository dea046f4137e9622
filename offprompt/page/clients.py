"""Who is asking, in words a person knows: the host's `clientInfo.name` mapped to its product name.

Only the name the host sent at the handshake counts, never anything the model wrote.
"""

from typing import Final

from offprompt.page.text import shorten, visible

__all__ = ["KNOWN_HOSTS", "UNKNOWN", "display_name"]

UNKNOWN: Final = "An agent"
"""Shown when the host sent no name."""

KNOWN_HOSTS: Final[dict[str, str]] = {
    "claude-code": "Claude Code",
    "claude-ai": "Claude",
    "codex-mcp-client": "Codex",
    "codex": "Codex",
    "cursor-vscode": "Cursor",
    "Visual Studio Code": "VS Code",
    "Visual Studio Code - Insiders": "VS Code Insiders",
    "gemini-cli-mcp-client": "Gemini CLI",
    "windsurf-client": "Windsurf",
    "windsurf": "Windsurf",
    "zed": "Zed",
    "mcp-inspector": "MCP Inspector",
    "offprompt-cli": "A command in your terminal",
}
"""`clientInfo.name` as hosts send it (reference/hosts-observed.md) → the name people know."""

_FOLDED: Final = {name.casefold(): shown for name, shown in KNOWN_HOSTS.items()}
_LIMIT: Final = 60


def display_name(client: str | None) -> str:
    """The host's product name, the name it gave (controls spelled out, cut short), or UNKNOWN.

    Plain text: escape it where it goes into HTML.
    """
    if client is None or not client.strip():
        return UNKNOWN
    known = KNOWN_HOSTS.get(client) or _FOLDED.get(client.strip().casefold())
    if known is not None:
        return known
    return shorten(visible(client.strip()), _LIMIT)
