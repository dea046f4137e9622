"""What `agents` warns of in a project whose sandbox is on for the mask (DESIGN §15): every
setting and switch that leaves Claude Code's mask open to a command, or makes the guard take the
session as unmasked (offprompt/guard/masked.py reads the same ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["COMMAND_LINE", "START_FOLDER", "socket_warnings"]

COMMAND_LINE = (
    "Claude Code's command line can undo the mask: `--settings` whose sandbox is off, lets"
    " commands leave it or reach Unix sockets, and `--setting-sources` (which may leave out the"
    " settings that turn the sandbox on); the guard reads the running Claude Code's command line"
    " and then blocks every read of the masked files, as in a project that is not masked; and"
    " `--bare` runs no hook at all, so the guard is off"
)
START_FOLDER = (
    "the mask holds only in a Claude Code session started in this folder: one started above it"
    " (a monorepo's root) or below it reads other settings, so the guard blocks reads of the"
    " masked files there"
)


def socket_warnings(
    layers: Sequence[Path], read: Callable[[Path], dict[str, Any]], shown: Callable[[Path], str]
) -> list[str]:
    """A line for each settings file in `layers` that lets sandboxed commands reach Unix
    sockets (`sandbox.network.allowAllUnixSockets`, `allowUnixSockets`): a daemon behind one
    (docker's) opens files outside the sandbox, unmasked."""
    out = []
    for path in layers:
        sandbox = read(path).get("sandbox")
        network = sandbox.get("network") if isinstance(sandbox, dict) else None
        if not isinstance(network, dict):
            continue
        which = [k for k in ("allowAllUnixSockets", "allowUnixSockets") if network.get(k)]
        if which:
            out.append(
                f"{shown(path)} sets sandbox.network.{' and '.join(which)}: sandboxed commands"
                " can reach a daemon (docker's) that opens files outside the sandbox, where the"
                " mask does not hold, so the guard leaves no read to the mask in this project"
                " (the app's reads of its masked files are blocked too); take it out to run"
                " the app on stand-ins"
            )
    return out
