"""Fixtures for host tests: a World per run (scripted model started), every process the run
started ended afterwards, the Codex TUI's app-server daemon included."""

import contextlib
import os
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
            # A few rounds: a process ended in one may start another as it goes (uv retries a
            # git fetch whose git was ended first).
            for _ in range(3):
                end_processes(processes_using(world.root))
            left |= processes_using(world.root)
        stack.close()
        assert not left, f"processes of the run outlived teardown: {sorted(left)}"


# The empty mount points a host's bubblewrap sandbox makes in a writable /tmp while a command
# runs (Codex guards each writable root's `.git`, `.codex`, `.agents`; Claude Code its own).
# Codex's built-in `:workspace` profile, which a test of the administrator's allow-list falls
# back to, writes /tmp; one left behind (seen once in a full run) turns every folder under /tmp
# into a broken git repository for the tests after it.
_MOUNT_POINTS = (".git", ".codex", ".agents", ".aws")


@pytest.fixture(autouse=True)
def no_mount_point_left_in_tmp() -> Iterator[None]:
    """Each empty mount point a test's host left in /tmp, removed after that test."""
    before = {n for n in _MOUNT_POINTS if os.path.lexists(os.path.join("/tmp", n))}
    yield
    for name in set(_MOUNT_POINTS) - before:
        with contextlib.suppress(OSError):  # not there, or not empty: not ours to remove
            os.rmdir(os.path.join("/tmp", name))
