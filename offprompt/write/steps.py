"""The steps a submission runs besides the write itself, as the small interfaces the Submitter
takes them through: asking the providers, sending to the `also` destinations, keeping the mask,
and the journal.

The write room owns the order and what a failure of each step means; what a step does lives
where it belongs (the destinations in the sinks, the mask with the agents). So this room
imports no installer: the mask keeper is handed in by whoever builds the Submitter.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from offprompt.sinks.destinations import Planned
    from offprompt.spec import DestinationResult, SecretSpec, Verdict
    from offprompt.write.journal import JournalEntry

__all__ = ["DestinationSender", "JournalStep", "MaskKeeper", "ProviderChecker"]


class ProviderChecker(Protocol):
    """Asks each supplied value's provider whether it works (DESIGN §16); `write.provider`."""

    def enabled(self, env: Mapping[str, str]) -> bool:
        """False when no provider may be asked from this process (`OFFPROMPT_CHECK=off`)."""
        ...

    async def verdicts(
        self,
        secrets: Sequence[SecretSpec],
        values: Mapping[str, str],
        names: Sequence[str],
        env: Mapping[str, str],
    ) -> Mapping[str, Verdict]:
        """A verdict for each of `names`: `skipped` for one it cannot ask about."""
        ...


class DestinationSender(Protocol):
    """The `also` destinations (DESIGN §13); `sinks.destinations`."""

    def check_values(
        self, planned: Sequence[Planned], values: Mapping[str, str], ticked: Collection[int]
    ) -> Mapping[str, str]:
        """{name: reason} for each value a ticked destination would not get exactly."""
        ...

    def send(
        self,
        project: Path,
        planned: Sequence[Planned],
        values: Mapping[str, str],
        ticked: Collection[int],
        *,
        env: Mapping[str, str] | None = None,
    ) -> tuple[DestinationResult, ...]:
        """The values to each ticked destination: one result per planned one, in order."""
        ...


class MaskKeeper(Protocol):
    """Brings a masked project's mask (DESIGN §15) up to date after a write; `agents.mask.keeper`.
    `record` is the mask's record beside the journal; `env` the environment the write was
    handed, whose HOME and agents' folders are where the hosts' settings are looked for."""

    def covers(self, record: Path, project: Path, env: Mapping[str, str]) -> bool:
        """Whether `project` is masked on some host (its files are then written in place)."""
        ...

    def __call__(
        self,
        record: Path,
        project: Path,
        file: Path,
        names: tuple[str, ...],
        whole: bool,
        env: Mapping[str, str],
    ) -> str | None:
        """After `names` were written to `file` (`whole`: a file sink's, the value is the file):
        None when done or the project is not masked, else what to tell the person. Never
        raises for a mask it cannot keep."""
        ...


class JournalStep(Protocol):
    """Where finished writes are recorded; `write.journal.Journal`."""

    @property
    def path(self) -> Path:
        """The journal's file; the mask's record lies beside it."""
        ...

    def append(self, entry: JournalEntry) -> None:
        """Record one write; raises OSError (or ValueError) when it cannot."""
        ...

    def records_file_sink(self, path: Path) -> bool:
        """Whether a file sink wrote `path` (by path, or as the same device and inode)."""
        ...
