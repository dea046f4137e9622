"""offprompt.sinks picks a kind's module from a registry: each kind has one, a new one plugs in."""

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar, get_args

import pytest

from offprompt import sinks
from offprompt.errors import RefusedRequest
from offprompt.sinks import KINDS, Sink, SinkSpec, Target, WriteResult
from offprompt.spec import SinkKind


class RecordingSink(Sink):
    """A destination outside the project (as a program-run one will be): keeps what it got."""

    kind: ClassVar[SinkKind] = "dotenv"  # the only way a test can borrow a kind's slot

    def __init__(self) -> None:
        self.got: dict[str, str] = {}

    def check_takes(self, names: Sequence[str]) -> None:
        if "NOPE" in names:
            raise RefusedRequest("This destination does not take NOPE.")

    def check_values(self, values: Mapping[str, str]) -> dict[str, str]:
        return {n: "too short" for n, v in values.items() if len(v) < 3}

    def inspect(self, project: Path, spec: SinkSpec, names: Sequence[str]) -> Target:
        self.check_takes(names)
        return Target(project, "recorder", False, frozenset(), False, False, False, True, None)

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
        self.got.update(values)
        return WriteResult(project, "recorder", tuple(values), (), (), (), {})


def test_every_sink_kind_a_request_may_name_has_a_module() -> None:
    """The kinds in `spec.SinkKind` and the registry are the same set."""
    assert set(get_args(SinkKind)) == set(KINDS)


def test_each_registered_sink_says_its_own_kind() -> None:
    """A registry entry is filed under the kind its implementation declares."""
    assert all(kind == sink.kind for kind, sink in KINDS.items())


def test_an_unknown_sink_kind_is_refused_with_the_known_ones(project: Path) -> None:
    """A kind nothing implements is refused before any path is looked at, naming the kinds."""
    with pytest.raises(RefusedRequest) as caught:
        sinks.write(project, SinkSpec(kind="vault", path=".env"), {"A": "1"})  # type: ignore[arg-type]
    assert "Unknown sink kind 'vault'; use 'dotenv' or 'file' or 'none'." == str(caught.value)
    assert [] == list(project.iterdir())


def test_the_facade_reaches_a_registered_kind_for_every_call(
    project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """check_values, inspect_target and write all go to the registered module, no other code."""
    recorder = RecordingSink()
    monkeypatch.setitem(KINDS, "dotenv", recorder)
    spec = SinkSpec()
    assert {"B": "too short"} == sinks.check_values(spec, {"A": canary, "B": "x"})
    assert "recorder" == sinks.inspect_target(project, spec, ["A"]).display
    with pytest.raises(RefusedRequest):
        sinks.inspect_target(project, spec, ["NOPE"])
    assert ("A",) == sinks.write(project, spec, {"A": canary}).added
    assert {"A": canary} == recorder.got
    assert [] == list(project.iterdir())
