"""Where a value touches disk: look at a destination, check values, and write them all or none.

Each kind of destination is one module implementing `interface.Sink` (`dotenv_sink`,
`file_sink`, `none_sink`), picked from `KINDS` by the request's `sink.kind`. Beside them:
`paths`, `git`, `lock`, `atomic` (the disk), `dotenv` (the format), `dotenv_quoting` (each
value's form) and `verify` (the three readers); `destinations` holds the programs of DESIGN §13
(`also`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from offprompt.errors import RefusedRequest
from offprompt.sinks import paths
from offprompt.sinks.dotenv_sink import DotenvSink
from offprompt.sinks.file_sink import FileSink
from offprompt.sinks.interface import Sink, Target, WriteResult
from offprompt.sinks.none_sink import NoneSink
from offprompt.spec import SinkSpec

__all__ = [
    "KINDS",
    "Sink",
    "SinkSpec",
    "Target",
    "WriteResult",
    "check_values",
    "display_of",
    "inspect_target",
    "resolve_target",
    "sink_for",
    "write",
]

# Every kind a request may name. A new destination is one module and one entry here.
KINDS: Mapping[str, Sink] = {sink.kind: sink for sink in (DotenvSink(), FileSink(), NoneSink())}


def sink_for(spec: SinkSpec) -> Sink:
    """The implementation of `spec.kind`; RefusedRequest for a kind offprompt does not have."""
    try:
        return KINDS[spec.kind]
    except KeyError:
        known = " or ".join(repr(k) for k in KINDS)
        raise RefusedRequest(f"Unknown sink kind {spec.kind!r}; use {known}.") from None


def check_values(sink: SinkSpec, values: Mapping[str, str]) -> dict[str, str]:
    """{name: reason} for each value `sink` cannot carry exactly; {} when all can. No I/O."""
    return sink_for(sink).check_values(values)


def inspect_target(project: Path, sink: SinkSpec, names: Sequence[str]) -> Target:
    """Look at the destination without changing it; RefusedRequest for a path offprompt refuses."""
    return sink_for(sink).inspect(project, sink, names)


def write(
    project: Path,
    sink: SinkSpec,
    values: Mapping[str, str],
    *,
    keep_if_present: frozenset[str] = frozenset(),
    allow_tracked: bool = False,
    in_place: bool = False,
) -> WriteResult:
    """Write `values` to the sink's destination in one atomic step, or change nothing and raise.
    `in_place`: the project is masked, so its file keeps its inode (DESIGN §15).

    Raises RefusedRequest (bad names or path), UnsafeValue (a value no form carries exactly),
    TrackedFile (tracked by git and not `allow_tracked`) or WriteError (the disk said no).
    """
    return sink_for(sink).write(
        project,
        sink,
        values,
        keep_if_present=keep_if_present,
        allow_tracked=allow_tracked,
        in_place=in_place,
    )


def resolve_target(project: Path, sink: SinkSpec) -> Path:
    """The absolute, symlink-free path `sink` writes to; RefusedRequest as in `paths`."""
    sink_for(sink)
    return paths.resolve_target(project, sink)


def display_of(project: Path, sink: SinkSpec) -> str:
    """Where `sink` writes, as results show it; RefusedRequest as for `resolve_target`; empty
    for the `none` sink."""
    return sink_for(sink).display_of(project, sink)
