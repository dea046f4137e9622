"""Fixtures for the write room's tests: fake destination programs and a project linked to each
platform (as tests/unit/destinations has them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fake_programs import FakePrograms, link_all


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


@pytest.fixture
def linked(project: Path) -> Path:
    """A project linked to all four: a GitHub remote, a Vercel link, a worker and a Fly app."""
    return link_all(project)
