"""Fixtures for end-to-end flows: a Flow per test, and one headless Chromium per session."""

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# The protocol helpers (wire.py, sdk.py) live beside the protocol tests, as plain modules.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "protocol"))

from helpers import CHROMIUM, chromium_or_skip

from .flow import Chromium, Flow, make_flow


@pytest.fixture(scope="session")
def chromium() -> Iterator[Chromium]:
    """One headless Chromium for every flow that plays the person in a real browser."""
    browser = Chromium(chromium_or_skip())
    try:
        yield browser
    finally:
        browser.close()


@pytest.fixture
def flow(isolated_env: Path, project: Path, tmp_path: Path) -> Flow:
    """A fresh project, journal, MCP byte log and person's notebook for one flow."""
    return make_flow(tmp_path, project, CHROMIUM)


@pytest.fixture(autouse=True)
def every_result_is_valid(flow: Flow) -> Iterator[None]:
    """After each flow: every line the server wrote was JSON, and every tools/call result it
    answered validates against the official schema of its revision."""
    yield
    flow.tool_calls()
