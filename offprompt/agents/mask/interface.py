"""What a host's mask (DESIGN §15) can do, as one interface beside the agent's declaration and
hook (agents/interface.py): install for a project, remove byte for byte, keep an entry exact
after a write, and check whether it holds and say why. One module per host that has one.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal

from offprompt.agents.machine import Machine
from offprompt.statedir import MASK_RECORD

__all__ = ["MASK_RECORD", "HostMask", "MaskKind", "MaskPlace", "MaskState", "Said", "Written"]


# "masked": the host's sandbox shows stand-ins for the values (Claude Code); "denied": it can
# only make the files unreadable to the commands it runs (Codex), which is never `masked`.
MaskKind = Literal["masked", "denied"]

# The files offprompt wrote in a project (absolute real path: the keys it wrote there, None for
# a file sink's file, masked whole), read from the journal by whoever may read it (cli/mask.py).
Written = Mapping[str, tuple[str, ...] | None]


@dataclass(frozen=True)
class MaskPlace:
    """Where a mask goes: the project, the machine, and `record` (mask.json beside the journal)."""

    project: Path
    machine: Machine
    record: Path


@dataclass(frozen=True)
class Said:
    """What install or remove did: False when it failed; the lines said for the person (each
    starts with the agent's name)."""

    ok: bool
    lines: tuple[str, ...]


@dataclass(frozen=True)
class MaskState:
    """A project's mask on one host, for `offprompt agents`: whether it holds, and where it is
    or why it does not."""

    kind: MaskKind
    holds: bool
    why: str


class HostMask(ABC):
    """One host's mask. Methods that change files answer a `Said` and never raise for a config
    they cannot handle; `keep` raises (ConfigError, OSError, ValueError) so the write can say
    the mask was not brought up to date."""

    agent: ClassVar[str]  # the name of the agent whose sandbox this is (claude-code, codex)
    kind: ClassVar[MaskKind]

    def unready(self, machine: Machine) -> str | None:
        """Why the mask cannot work on this machine (said before anything is changed), or None."""
        return None

    @abstractmethod
    def install(
        self, place: MaskPlace, written: Callable[[], Written], no_guard: bool = False
    ) -> Said:
        """Mask the project, covering every file in `written()` (called when needed) and every
        later write. `no_guard`: the guard is not installed beside it."""

    @abstractmethod
    def remove(self, place: MaskPlace) -> Said:
        """Take out what install and the writes added, leaving the person's own settings byte
        for byte."""

    @abstractmethod
    def keep(self, place: MaskPlace, file: Path, names: Iterable[str], whole: bool) -> str | None:
        """After a write of `names` to `file` (`whole`: a file sink's file): bring the mask up to
        date when the project has one here; nothing when it has none. A sentence for the write's
        result when the mask is brought up to date but not yet in force (Codex's, until it
        restarts), else None."""

    def might_cover(self, place: MaskPlace) -> bool:
        """Whether the project may have a mask here, by a look at one file of the host's own
        (nothing parsed): False only where it surely has none, so the keeper (keeper.py) asks
        nothing more of this host for a write there. Yes unless the host says otherwise."""
        return True

    def covers(self, place: MaskPlace) -> bool:
        """Whether the project has a mask here (its files are then written in place)."""
        return self.check(place) is not None

    @abstractmethod
    def check(self, place: MaskPlace) -> MaskState | None:
        """None when the project has no mask here; else whether it holds, and why."""
