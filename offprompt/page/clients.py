"""Who is asking, in words a person knows: the host's `clientInfo.name` mapped to its product name.

Only the name the host sent at the handshake counts, never anything the model wrote. Each host
names its own clients (`offprompt.hosts`).
"""

from typing import Final

from offprompt import hosts
from offprompt.page.text import shorten, visible

__all__ = ["UNKNOWN", "confirm_button", "display_name", "known_hosts"]

UNKNOWN: Final = "An agent"
"""Shown when the host sent no name."""

# offprompt's own terminal door (offprompt.terminal.CLIENT): not a host, but a client all the same.
_OWN: Final = {"offprompt-cli": "A command in your terminal"}
_LIMIT: Final = 60


def known_hosts() -> dict[str, str]:
    """`clientInfo.name` as hosts send it (reference/hosts-observed.md) → the name people know."""
    return {c: shown for h in hosts.HOSTS for c, shown in h["clients"].items()} | _OWN


def confirm_button(shown: str) -> str | None:
    """The words of the button the host shown as `shown` waits on after a write, if it names
    one."""
    for h in hosts.HOSTS:
        confirm = h.get("confirm")
        if confirm is not None and shown in h["clients"].values():
            return confirm
    return None


def display_name(client: str | None) -> str:
    """The host's product name, the name it gave (controls spelled out, cut short), or UNKNOWN.

    Plain text: escape it where it goes into HTML.
    """
    if client is None or not client.strip():
        return UNKNOWN
    table = known_hosts()
    known = table.get(client)
    if known is None:
        folded = client.strip().casefold()
        known = next((shown for name, shown in table.items() if name.casefold() == folded), None)
    if known is not None:
        return known
    return shorten(visible(client.strip()), _LIMIT)
