"""Fixtures for host tests: a World per run (scripted model started), every process the run
started ended afterwards, the Codex TUI's app-server daemon included."""

from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from .harness import ARGUMENTS, World, end_processes, processes_using
from .model import ScriptedModel

MakeWorld = Callable[..., World]


@pytest.fixture
def make_world(tmp_path: Path, canary: str) -> Iterator[MakeWorld]:
    """`make_world(kind, dialog_wait_ms=…, model=…)`: the scripted model of `kind`
    ("anthropic" for Claude Code, "openai" for Codex; or `model`) on loopback and the run's
    folders, torn down afterwards."""
    stack = ExitStack()
    worlds: list[World] = []

    def make(kind: str, dialog_wait_ms: int = 3000, model: ScriptedModel | None = None) -> World:
        model = stack.enter_context(model or ScriptedModel(kind, ARGUMENTS))
        world = World(tmp_path / f"run{len(worlds)}", canary, model, dialog_wait_ms)
        world.prepare()
        worlds.append(world)
        return world

    try:
        yield make
    finally:
        left = set()
        for world in worlds:
            # Daemons that left the host's session still carry the run's folders in their env.
            end_processes(processes_using(world.root))
            left |= processes_using(world.root)
        stack.close()
        assert not left, f"processes of the run outlived teardown: {sorted(left)}"
