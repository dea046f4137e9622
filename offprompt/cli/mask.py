"""`init --mask` and `remove --mask` (DESIGN §15): glue between agents.py here and each agent's
mask (agents/mask/), which says what it did; this reads the journal the masks may not.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import click

from offprompt.agents import AGENTS, Agent, ConfigError, Machine, get
from offprompt.agents.mask import MASK_RECORD, MaskPlace, Said
from offprompt.agents.mask.keeper import covers
from offprompt.cli.base import fatal
from offprompt.sinks import atomic
from offprompt.write.journal import Journal, default_path

__all__ = [
    "MASKABLE",
    "MASKS",
    "check_machine",
    "record_path",
    "turn_off",
    "turn_off_if_on",
    "turn_on",
    "unmasked_line",
]

# The agents whose own sandbox offprompt can point at the values it writes (or, for a host that
# can only deny them, deny them): those whose declaration names a mask.
MASKABLE = tuple(a.name for a in AGENTS if a.mask is not None)
MASKS = tuple(a.mask for a in AGENTS if a.mask is not None)


def record_path(machine: Machine) -> Path:
    """mask.json, beside the journal (OFFPROMPT_STATE_DIR or the user state dir)."""
    return default_path(machine.environ).parent / MASK_RECORD


def check_machine(machine: Machine, agents: Iterable[Agent] = AGENTS) -> None:
    """Exit 1, before anything is changed, when one of the agents' masks cannot run here."""
    for agent in agents:
        why = agent.mask.unready(machine) if agent.mask is not None else None
        if why is not None:
            fatal(why)


def unmasked_line(agent: Agent) -> str:
    """What `init --mask` says for an agent it cannot mask."""
    return f"{agent.name}: not masked: offprompt cannot point its sandbox at the values yet"


def _written(machine: Machine, project: Path) -> dict[str, tuple[str, ...] | None]:
    """Every file the journal says offprompt wrote in `project` that is still there: the keys it
    wrote in each, None for a file sink's file."""
    here = os.path.realpath(project)
    out: dict[str, tuple[str, ...] | None] = {}
    for item in reversed(Journal(default_path(machine.environ)).read()):
        if os.path.realpath(item.project) != here or not item.file:
            continue
        path = os.path.realpath(os.path.join(here, item.file))
        if not os.path.isfile(path):
            continue
        if item.sink == "file":
            out[path] = None
        elif out.get(path, ()) is not None:
            out[path] = tuple(sorted({*(out.get(path) or ()), *item.names}))
    return out


def _said(said: Said) -> bool:
    for line in said.lines:
        click.echo(line)
    return said.ok


def turn_on(agent: str, project: Path, machine: Machine, no_guard: bool = False) -> bool:
    """Mask `project` for `agent`; one line said either way. False when it failed."""
    mask = get(agent).mask
    if mask is None:
        click.echo(unmasked_line(get(agent)))
        return False
    # A masked write's undo record lives in offprompt's state dir, outside the project: init
    # makes no folder in the project for it (disk.undo).
    place = MaskPlace(project, machine, record_path(machine))
    return _said(mask.install(place, lambda: _written(machine, project), no_guard))


def turn_off(agent: str, project: Path, machine: Machine) -> bool:
    """Take the mask out of `project`; one line when there was one. False when it failed."""
    mask = get(agent).mask
    if mask is None:
        return True
    place = MaskPlace(project, machine, record_path(machine))
    said = _said(mask.remove(place))
    here = MaskPlace(Path(os.path.realpath(project)), machine, place.record)
    if said and not covers(MASKS, here):
        atomic.drop_keep(Path(os.path.realpath(project)))
    return said


def turn_off_if_on(agent: str, project: Path, machine: Machine) -> bool | None:
    """`turn_off` where `project` has a mask on `agent`'s host (what a plain `remove` undoes);
    None, saying nothing, where it has none."""
    mask = get(agent).mask
    if mask is None:
        return None
    place = MaskPlace(project, machine, record_path(machine))
    try:
        if mask.check(place) is None:
            return None
    except (ConfigError, OSError, ValueError):
        pass  # one that cannot be read is taken out by turn_off, which says why not
    return turn_off(agent, project, machine)
