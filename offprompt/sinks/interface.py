"""The one sink interface: what every kind of destination answers, and the records it returns.

One module per kind implements it (`dotenv_sink`, `file_sink`); `offprompt.sinks` picks the
module from the request's `sink.kind` through a registry, never by an `if kind ==` branch.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from offprompt.spec import SinkKind, SinkSpec

__all__ = ["Sink", "Target", "WriteResult"]


@dataclass(frozen=True)
class Target:
    """What the page shows about a destination before writing.

    `present`: the asked names the file already sets to a non-empty value (an empty `KEY=` is a
    placeholder, not a value); for a file sink, the name when the file exists and is non-empty.
    `problem`: why a write cannot happen (unreadable file, read-only disk…), else None.
    """

    path: Path
    display: str
    exists: bool
    present: frozenset[str]
    tracked: bool
    ignored: bool
    in_git_repo: bool
    writable: bool
    problem: str | None


@dataclass(frozen=True)
class WriteResult:
    """What a write did, by name; `read_back` holds the values parsed back from the file."""

    path: Path
    display: str
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]
    file_keys: tuple[str, ...]
    read_back: Mapping[str, str] = field(repr=False)


class Sink(ABC):
    """One kind of destination. Stateless: the request's `SinkSpec` comes with every call.

    A kind that writes a file in the project builds on `local.LocalFileSink`, which holds the
    disk side (path rules, git, lock, atomic replace); a kind that hands values to a program
    implements these four methods itself.
    """

    kind: ClassVar[SinkKind]

    @abstractmethod
    def check_takes(self, names: Sequence[str]) -> None:
        """Raise RefusedRequest unless this kind can take exactly these names."""

    @abstractmethod
    def check_values(self, values: Mapping[str, str]) -> dict[str, str]:
        """{name: reason} for each value this kind cannot carry exactly; {} when all can. No I/O."""

    def display_of(self, project: Path, spec: SinkSpec) -> str:
        """Where `spec` writes, relative to the project with `/` separators; RefusedRequest for
        a path offprompt refuses. Empty for a kind that writes no file."""
        from offprompt.sinks import paths

        return paths.display_of(project, spec)

    @abstractmethod
    def inspect(self, project: Path, spec: SinkSpec, names: Sequence[str]) -> Target:
        """Look at the destination without changing it; RefusedRequest for one it refuses."""

    @abstractmethod
    def write(
        self,
        project: Path,
        spec: SinkSpec,
        values: Mapping[str, str],
        *,
        keep_if_present: frozenset[str],
        allow_tracked: bool,
        in_place: bool = False,
    ) -> WriteResult:
        """Deliver `values` all at once or change nothing and raise; see `offprompt.sinks.write`."""
