"""`offprompt collect` from a terminal: the same page and write, exit codes, no value printed."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dotenv import dotenv_values
from helpers import chromium_or_skip

ROOT = Path(__file__).resolve().parents[2]
PERSON = ROOT / "tests" / "flows" / "person.py"


def collect(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full = dict(os.environ)
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", *args],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def person_env(tmp_path: Path, values: dict[str, str], mode: str) -> dict[str, str]:
    return {
        "BROWSER": f"{sys.executable} {PERSON} %s",
        "PERSON_VALUES": json.dumps(values),
        "PERSON_MODE": mode,
        "PERSON_OUT": str(tmp_path / "person.jsonl"),
    }


def person_said(tmp_path: Path) -> list[dict[str, str]]:
    """What person.py reported; it reports from a forked child, so give it a moment."""
    out = tmp_path / "person.jsonl"
    deadline = time.monotonic() + 15
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.browser
def test_collect_writes_through_chromium_and_prints_the_fingerprint(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A person in Chromium fills the page; collect writes, prints names and the page's emoji."""
    chromium_or_skip()
    env = person_env(tmp_path, {"API_KEY": canary}, "chromium")
    done = collect(project, "API_KEY", "--reason", "terminal test", env=env)
    assert done.returncode == 0, done.stderr
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    (said,) = person_said(tmp_path)
    lines = done.stdout.splitlines()
    assert "API_KEY" in lines
    assert lines[-1] == f"Fingerprint {said['fingerprint']}"
    journal = (Path(os.environ["OFFPROMPT_STATE_DIR"]) / "journal.jsonl").read_text()
    for text in (done.stdout, done.stderr, journal):
        assert canary not in text


def test_collect_over_plain_http_into_another_file(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """--file names the .env to write; the fingerprint printed is the one the person computed."""
    env = person_env(tmp_path, {"DB_URL": canary}, "http")
    done = collect(project, "DB_URL", "--file", "config/.env.local", env=env)
    assert done.returncode == 0, done.stderr
    assert dotenv_values(project / "config" / ".env.local") == {"DB_URL": canary}
    (said,) = person_said(tmp_path)
    assert done.stdout.splitlines()[-1] == f"Fingerprint {said['fingerprint']}"
    assert canary not in done.stdout + done.stderr


def test_expired_request_exits_3(project: Path) -> None:
    """Nobody fills the page before --timeout: exit 3 and no file."""
    done = collect(project, "API_KEY", "--timeout", "1", env={"BROWSER": "false"})
    assert done.returncode == 3
    assert "expired" in done.stderr
    assert "http://127.0.0.1:" in done.stderr
    assert not (project / ".env").exists()


@pytest.mark.parametrize(
    "args",
    [[], ["A", "A"], ["API_KEY", "--provider", "nope"], ["API_KEY", "--timeout", "0"]],
)
def test_usage_errors_exit_2(project: Path, args: list[str]) -> None:
    """No names, a repeated name, a bad --provider or --timeout is a usage error (2)."""
    done = collect(project, *args, env={"BROWSER": "false"})
    assert done.returncode == 2
    assert "http://" not in done.stderr  # refused before any page was served
    assert not (project / ".env").exists()


def test_bad_name_is_an_error_naming_the_rule(project: Path) -> None:
    """A name that breaks the pattern is refused with the rule, exit 1."""
    done = collect(project, "lower", env={"BROWSER": "false"})
    assert done.returncode == 1
    assert "must match" in done.stderr


def test_home_folder_is_refused(isolated_env: Path) -> None:
    """Run in $HOME, collect refuses (exit 1) instead of writing a .env there."""
    done = collect(isolated_env, "API_KEY", env={"BROWSER": "false"})
    assert done.returncode == 1
    assert "project" in done.stderr
    assert not (isolated_env / ".env").exists()


def test_path_outside_the_project_is_refused(project: Path) -> None:
    """--file pointing outside the folder is refused before any page opens."""
    done = collect(project, "API_KEY", "--file", "../elsewhere.env", env={"BROWSER": "false"})
    assert done.returncode == 1
    assert "http://" not in done.stderr
