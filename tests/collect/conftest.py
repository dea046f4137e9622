"""An in-process server on the real collect core, per test (see harness.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from .harness import FakeOpener, Session, connect, settings


@pytest.fixture
def opener() -> FakeOpener:
    return FakeOpener()


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / "our-state"


@pytest.fixture
async def session(project: Path, state: Path, opener: FakeOpener) -> AsyncIterator[Session]:
    client, service = await connect(project, settings(state), opener)
    try:
        yield client
    finally:
        await client.close()
        await service.close()
