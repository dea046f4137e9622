"""Fixtures for the destination tests: fake programs and projects linked to each platform."""

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
