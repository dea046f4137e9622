"""The mask (DESIGN §15): the agent's own sandbox keeps the values offprompt writes from the
commands it runs. One interface (interface.py), one module per host that has a mask
(claude_code.py, codex.py), each named by its agent's declaration (`Agent.mask`).

`keep` is what a write calls in a masked project; `offprompt agents` asks each host's
`HostMask.check`. The hosts are found through the agents' list when called, not imported here: the
agents' declarations import their masks, which import this package's interface.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from offprompt.agents.machine import Machine
from offprompt.agents.mask.interface import (
    MASK_RECORD,
    HostMask,
    MaskKind,
    MaskPlace,
    MaskState,
    Said,
    Written,
)
from offprompt.errors import ConfigError

__all__ = [
    "MASK_RECORD",
    "HostMask",
    "MaskKind",
    "MaskPlace",
    "MaskState",
    "Said",
    "Written",
    "covers",
    "keep",
    "masks",
]


def masks() -> tuple[HostMask, ...]:
    """Each agent's mask, in the agents' order; the hosts without one are left out."""
    from offprompt.agents import AGENTS

    return tuple(agent.mask for agent in AGENTS if agent.mask is not None)


def covers(record: Path, project: Path) -> bool:
    """Whether `project` has a mask on some host (`record` is mask.json), so its files are
    written in place; a host that cannot tell counts as masking it (fail closed)."""
    place = MaskPlace(Path(os.path.realpath(project)), Machine.current(), record)
    for mask in masks():
        try:
            if mask.covers(place):
                return True
        except (ConfigError, OSError, ValueError, RuntimeError):
            return True
    return False


def keep(record: Path, project: Path, file: Path, names: Iterable[str], whole: bool) -> str | None:
    """After a write of `names` to `file` in `project`: bring each host's mask up to date where
    the project has one (`record` is mask.json). None when done (or not masked), else what went
    wrong or what is not in force yet, for the write's result (the file is written; its values
    are then not masked, or not until the agent restarts)."""
    key = os.path.realpath(project)
    chosen = tuple(names)
    try:
        place = MaskPlace(Path(key), Machine.current(), record)
        # A denial first, then a mask: the order the writes have always kept them in.
        notes = [
            note
            for mask in sorted(masks(), key=lambda m: m.kind != "denied")
            if (note := mask.keep(place, file, chosen, whole)) is not None
        ]
    except (ConfigError, OSError, ValueError, RuntimeError) as e:
        # A ConfigError names files and what is wrong with them, never a value.
        why = str(e) if isinstance(e, ConfigError) else type(e).__name__
        return (
            f"The values are written, but the mask could not be brought up to date for them"
            f" ({why}): until `offprompt init --mask` runs again, the agent's sandboxed"
            " commands may read them."
        )
    return " ".join(notes) or None
