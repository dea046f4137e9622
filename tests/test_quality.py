"""House rules that hold for the whole package: ruff clean and mypy --strict clean."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


def test_ruff_is_clean() -> None:
    """`ruff check` passes on the package, tests and benches."""
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed")
    done = run("ruff", "check", "offprompt", "tests", "bench")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean() -> None:
    """`mypy --strict` passes on the package."""
    done = run("mypy", "--strict", "offprompt")
    assert done.returncode == 0, done.stdout + done.stderr
