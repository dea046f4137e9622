"""Every agent whose declaration names a mask (DESIGN §15) answers the mask's interface: install
for a project, check says it holds, a later write is kept, remove gives every file back byte for
byte. Derived from the agents' list, so a new host with a mask is covered by being added there.
"""

import os
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from cli_helpers import snapshot

from offprompt import agents
from offprompt.agents import Agent, Machine, doctor
from offprompt.agents.mask import (
    MASK_RECORD,
    HostMask,
    MaskKind,
    MaskPlace,
    MaskState,
    Said,
    Written,
)
from offprompt.agents.mask.keeper import keep
from offprompt.agents.zed import Zed
from offprompt.collect.parts import mask_keeper

MASKED = [a for a in agents.AGENTS if a.mask is not None]
MASKS = [_a.mask for _a in MASKED if _a.mask is not None]


def test_the_agents_with_a_mask_are_the_hosts_that_have_one() -> None:
    """Claude Code masks, Codex denies, the others have none (so `agents` says `not masked`)."""
    assert {"claude-code": "masked", "codex": "denied"} == {
        a.name: a.mask.kind for a in MASKED if a.mask is not None
    }
    assert [a.mask for a in MASKED] == list(mask_keeper().masks)
    assert all(a.mask.agent == a.name for a in MASKED if a.mask is not None)


@pytest.fixture
def sandbox_programs(fake_program: Callable[[str], Path]) -> None:
    """bwrap and socat on PATH: what Claude Code's sandbox needs on Linux."""
    fake_program("bwrap")
    fake_program("socat")


def _place(project: Path, machine: Machine, home: Path) -> MaskPlace:
    state = home / "state"
    state.mkdir(exist_ok=True)  # where the journal is: there before any mask
    return MaskPlace(project, machine, state / MASK_RECORD)


def _mask_of(agent: Agent) -> HostMask:
    assert agent.mask is not None
    return agent.mask


@pytest.mark.parametrize("agent", MASKED, ids=[a.name for a in MASKED])
def test_install_check_keep_remove_gives_every_file_back(
    agent: Agent,
    project: Path,
    home: Path,
    machine: Machine,
    sandbox_programs: None,
    canary: str,
) -> None:
    """Install over a file offprompt wrote, check holds, keep a second write, check still holds,
    remove: HOME and the project as they were, and no mask left to check."""
    mask = _mask_of(agent)
    project = Path(os.path.realpath(project))
    place = _place(project, machine, home)
    (project / ".env").write_text(f"APP_TOKEN={canary}\n")
    (project / "other.env").write_text(f"OTHER_TOKEN={canary}x\n")
    before = snapshot(home, project)
    assert mask.unready(machine) is None
    assert mask.check(place) is None

    installed = mask.install(place, lambda: {str(project / ".env"): ("APP_TOKEN",)})
    assert installed.ok, installed.lines
    assert installed.lines
    assert all(line.startswith(f"{agent.name}: ") for line in installed.lines)
    state = mask.check(place)
    assert state is not None
    assert (mask.kind, True) == (state.kind, state.holds), state.why

    mask.keep(place, project / "other.env", ("OTHER_TOKEN",), False)
    state = mask.check(place)
    assert state is not None
    assert state.holds, state.why

    removed = mask.remove(place)
    assert removed.ok, removed.lines
    after = snapshot(home, project)
    # The undo records' folder stays, empty and 0700: another project's Codex profile may deny
    # it, which holds only for a folder that exists as Codex starts.
    records = str(Path(os.path.realpath(place.record.parent)) / ".offprompt-keep")
    assert ("dir", None, 0o700) == after.pop(records, ("dir", None, 0o700))
    assert before == after
    assert mask.check(place) is None
    for line in (*installed.lines, *removed.lines, state.why):
        assert canary not in line


@pytest.mark.parametrize("agent", MASKED, ids=[a.name for a in MASKED])
def test_keep_leaves_a_project_without_a_mask_alone(
    agent: Agent, project: Path, home: Path, machine: Machine, canary: str
) -> None:
    """A write in a project nobody masked changes nothing, on every host."""
    place = _place(Path(os.path.realpath(project)), machine, home)
    (project / ".env").write_text(f"APP_TOKEN={canary}\n")
    before = snapshot(home, project)
    _mask_of(agent).keep(place, project / ".env", ("APP_TOKEN",), False)
    assert None is keep(MASKS, place, project / ".env", ("APP_TOKEN",), False)
    assert before == snapshot(home, project)


@pytest.mark.parametrize("agent", MASKED, ids=[a.name for a in MASKED])
def test_remove_without_a_mask_fails_nothing_and_changes_nothing(
    agent: Agent, project: Path, home: Path, machine: Machine
) -> None:
    place = _place(Path(os.path.realpath(project)), machine, home)
    before = snapshot(home, project)
    assert _mask_of(agent).remove(place).ok
    assert before == snapshot(home, project)


class _FakeMask(HostMask):
    """A host's mask that says what it is told: the doctor must take it as it takes the others."""

    agent = "zed"
    kind: MaskKind = "masked"

    def __init__(self, state: MaskState | None) -> None:
        self.state = state

    def install(
        self, place: MaskPlace, written: Callable[[], Written], no_guard: bool = False
    ) -> Said:
        return Said(True, ())

    def remove(self, place: MaskPlace) -> Said:
        return Said(True, ())

    def might_cover(self, place: MaskPlace) -> bool:
        return self.state is not None

    def keep(self, place: MaskPlace, file: Path, names: Iterable[str], whole: bool) -> None:
        return None

    def check(self, place: MaskPlace) -> MaskState | None:
        return self.state


@pytest.mark.parametrize(
    ("state", "protection", "why"),
    [
        (None, "nothing", "{unguarded}"),
        (MaskState("masked", True, "masked by fake"), "masked", "masked by fake"),
        (
            MaskState("masked", False, "fake is gone"),
            "nothing",
            "{unguarded}; the mask does not hold: fake is gone",
        ),
        (MaskState("denied", True, "denied by fake"), "nothing", "denied by fake; {unguarded}"),
    ],
    ids=["none", "holds", "does not hold", "denied"],
)
def test_the_doctor_takes_any_hosts_mask_through_the_interface(
    project: Path,
    home: Path,
    machine: Machine,
    state: MaskState | None,
    protection: str,
    why: str,
) -> None:
    """A host that gains a mask needs no change in the doctor: what its mask's check says is
    what `offprompt agents` says."""

    class Masked(Zed):
        mask = _FakeMask(state)

    (report,) = doctor.examine(
        [Masked()], machine, Path(os.path.realpath(project)), mask_record=home / MASK_RECORD
    )
    assert (protection, why.format(unguarded=Zed.unguarded)) == (
        report.protection,
        report.protection_why,
    )
