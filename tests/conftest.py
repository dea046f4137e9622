"""Fixtures every test shares: an isolated HOME and environment, and canary values."""

import logging
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from ci_skips import pytest_runtest_makereport
from helpers import CHROMIUM, chromium_or_skip, node_or_skip
from keyring_service import keyring_env, secret_service  # noqa: F401  (the Secret Service)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that drives Chromium is slow too: the fast local run (`-m "not real_hosts and not
    slow"`) leaves browsers out, CI runs them all."""
    for item in items:
        if item.get_closest_marker("browser") is not None:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Give each test its own HOME and state dirs, no OFFPROMPT_* or BROWSER from outside, no
    session bus (a test never reaches the developer's own keyring: the keyring's tests bring a
    Secret Service of their own), and provider checks off."""
    home = tmp_path_factory.mktemp("home")
    outside = {"BROWSER", "CLAUDE_PROJECT_DIR", "DBUS_SESSION_BUS_ADDRESS"}
    for name in list(os.environ):
        if name.startswith("OFFPROMPT_") or name in outside:
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("OFFPROMPT_STATE_DIR", str(home / "state"))
    # No test asks a real provider about a key (DESIGN §16): those that test the check give
    # their own environment, with fake providers on loopback.
    monkeypatch.setenv("OFFPROMPT_CHECK", "off")
    return home


@pytest.fixture(autouse=True)
def isolated_logging() -> Iterator[None]:
    """Undo what a command run in-process (`offprompt collect` sets up its stderr logger) does
    to the `offprompt` and root loggers, so a later test's caplog sees every record."""
    ours, root = logging.getLogger("offprompt"), logging.getLogger()
    saved = (ours.handlers[:], ours.propagate, ours.level, root.handlers[:])
    yield
    ours.handlers[:], ours.propagate, ours.level, root.handlers[:] = saved


@pytest.fixture
def canary() -> str:
    """A unique value that must appear only in the destination file.

    Capital letters and digits in turn: every 4 characters of it hold two of each, a shape no
    page token, nonce or request id (lower-case hex and base32) can take, so a check for a part
    of it never fires on one of those by chance (hex once matched a token 1 run in ~50)."""
    letters, digits = "ABCDEFGHJKLMNPQRSTUVWXYZ", "23456789"
    return "canary-" + "".join(secrets.choice(letters) + secrets.choice(digits) for _ in range(12))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty project folder (not a git repository)."""
    p = tmp_path / "project"
    p.mkdir()
    return p


@pytest.fixture
def chromium_path() -> str:
    """Chromium's path (skips locally when missing, fails in CI)."""
    return chromium_or_skip()


__all__ = [
    "CHROMIUM",
    "chromium_or_skip",
    "node_or_skip",
    "pytest_runtest_makereport",  # ci_skips: no test skips under CI=true
]
