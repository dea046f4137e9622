"""The mask keeper a write is handed (write.steps.MaskKeeper, DESIGN §15): whether a project is
masked on some host, so its file is written in place, and each host's mask brought up to date
after a write there.

Both run on the machine the write was handed (its environment: HOME, CLAUDE_CONFIG_DIR,
CODEX_HOME…), never the process's own, and ask each host first whether the project might have
its mask (`HostMask.might_cover`, one file looked at) before reading anything of it. The masks
are handed in by whoever builds the keeper (the agents' list): the agents' declarations import
this package, so it never imports them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from offprompt.agents.machine import Machine
from offprompt.agents.mask.interface import HostMask, MaskPlace
from offprompt.errors import ConfigError

__all__ = ["Keeper", "covers", "keep", "machine_of"]


class Keeper:
    """write.steps.MaskKeeper over `masks` (each agent's that has one, in the agents' order)."""

    def __init__(self, masks: Iterable[HostMask], platform: str = sys.platform) -> None:
        self.masks = tuple(masks)
        self._platform = platform

    def covers(self, record: Path, project: Path, env: Mapping[str, str]) -> bool:
        return covers(self.masks, self._place(record, project, env))

    def __call__(
        self,
        record: Path,
        project: Path,
        file: Path,
        names: tuple[str, ...],
        whole: bool,
        env: Mapping[str, str],
    ) -> str | None:
        return keep(self.masks, self._place(record, project, env), file, names, whole)

    def _place(self, record: Path, project: Path, env: Mapping[str, str]) -> MaskPlace:
        return MaskPlace(Path(os.path.realpath(project)), machine_of(env, self._platform), record)


def machine_of(env: Mapping[str, str], platform: str = sys.platform) -> Machine:
    """The machine as the environment `env` shows it: its HOME (USERPROFILE on Windows) when
    that is an absolute path, else this user's home."""
    raw = env.get("USERPROFILE" if platform == "win32" else "HOME", "").strip()
    home = Path(raw) if raw and Path(raw).is_absolute() else Path.home()
    return Machine(home=home, environ=dict(env), platform=platform)


def covers(masks: Iterable[HostMask], place: MaskPlace) -> bool:
    """Whether `place.project` has a mask on one of `masks`, so its files are written in place;
    a host that cannot tell counts as masking it (fail closed)."""
    for mask in masks:
        try:
            if mask.might_cover(place) and mask.covers(place):
                return True
        except (ConfigError, OSError, ValueError, RuntimeError):
            return True
    return False


def keep(
    masks: Iterable[HostMask], place: MaskPlace, file: Path, names: Iterable[str], whole: bool
) -> str | None:
    """After a write of `names` to `file` in `place.project`: bring each host's mask up to date
    where the project has one. None when done (or not masked), else what went wrong or what is
    not in force yet, for the write's result (the file is written; its values are then not
    masked, or not until the agent restarts)."""
    chosen = tuple(names)
    try:
        # A denial first, then a mask: the order the writes have always kept them in.
        notes = [
            note
            for mask in sorted(masks, key=lambda m: m.kind != "denied")
            if mask.might_cover(place)
            and (note := mask.keep(place, file, chosen, whole)) is not None
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
