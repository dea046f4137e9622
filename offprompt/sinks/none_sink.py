"""The `none` sink: no local file at all, for values that go only to `also` destinations
(DESIGN §3.1, §13). Nothing touches disk; the values pass through to the destinations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from offprompt.sinks.interface import Sink, Target, WriteResult
from offprompt.spec import SinkSpec

__all__ = ["NoneSink"]


class NoneSink(Sink):
    kind = "none"

    def check_takes(self, names: Sequence[str]) -> None:
        return None  # names are checked with the request; nothing here stores them

    def check_values(self, values: Mapping[str, str]) -> dict[str, str]:
        return {}  # each destination says which values its program would not carry

    def display_of(self, project: Path, spec: SinkSpec) -> str:
        return ""

    def inspect(self, project: Path, spec: SinkSpec, names: Sequence[str]) -> Target:
        return Target(
            path=project,
            display="",
            exists=False,
            present=frozenset(),
            tracked=False,
            ignored=False,
            in_git_repo=False,
            writable=True,
            problem=None,
        )

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
        # Nothing is read back: the fingerprint covers the values as they go out.
        return WriteResult(
            path=project,
            display="",
            added=(),
            replaced=(),
            kept=(),
            file_keys=(),
            read_back=dict(values),
        )
