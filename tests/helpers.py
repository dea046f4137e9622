"""Locators shared by tests (imported as `helpers`; conftest.py names clash across folders)."""

import os
import shutil

import pytest

CHROMIUM = "/usr/bin/chromium"


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
