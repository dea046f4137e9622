"""Locators shared by tests (imported as `helpers`; conftest.py names clash across folders)."""

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"
# As root, in a closed network: no sandbox, and none of Chromium's own calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_or_skip() -> str:
    """Path of Chromium; skips locally when missing, fails in CI where it must be installed."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.environ.get("CI") == "true":
        pytest.fail(f"{CHROMIUM} is missing in CI; .ci/run must install Debian's chromium")
    pytest.skip(f"{CHROMIUM} not installed")


def node_or_skip() -> str:
    """Path of node; skips locally when missing, fails in CI."""
    node = shutil.which("node")
    if node:
        return node
    if os.environ.get("CI") == "true":
        pytest.fail("node is missing in CI")
    pytest.skip("node not installed")
