"""`offprompt collect --also`: the terminal's door to the same destinations (DESIGN §9, §13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_programs import FakePrograms, link_all
from helpers import chromium_or_skip

ROOT = Path(__file__).resolve().parents[2]
PERSON = ROOT / "tests" / "flows" / "person.py"
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"


@pytest.fixture
def fakes(tmp_path: Path) -> FakePrograms:
    return FakePrograms(tmp_path / "fakes")


def collect(
    project: Path, fakes: FakePrograms, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "OFFPROMPT_SANDBOX": "0", "PATH": f"{fakes.bin}:{SYSTEM_PATH}", **env}
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", *args],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


@pytest.mark.browser
def test_collect_also_sends_to_github_and_both_vercel_environments(
    project: Path, tmp_path: Path, fakes: FakePrograms, canary: str
) -> None:
    """The person submits in Chromium with the boxes as they came (ticked): .env is written,
    gh runs once and vercel twice with the value on stdin; stdout says sent, never the value."""
    link_all(project)
    chromium = chromium_or_skip()
    done = collect(
        project,
        fakes,
        "STRIPE_KEY",
        "--also",
        "github",
        "--also",
        "vercel:production,preview",
        BROWSER=f"{sys.executable} {PERSON} %s",
        PERSON_VALUES=json.dumps({"STRIPE_KEY": canary}),
        PERSON_MODE="chromium",
        PERSON_OUT=str(tmp_path / "person.jsonl"),
        PERSON_CHROMIUM=chromium,
    )
    assert done.returncode == 0, done.stderr
    assert (project / ".env").read_text() == f"STRIPE_KEY={canary}\n"
    calls = fakes.calls()
    assert [(c.name, c.argv[:4]) for c in calls] == [
        ("gh", ["secret", "set", "STRIPE_KEY", "--repo"]),
        ("vercel", ["env", "add", "STRIPE_KEY", "production"]),
        ("vercel", ["env", "add", "STRIPE_KEY", "preview"]),
    ]
    assert all(c.stdin == canary for c in calls)
    assert "github acme/web: sent (sent STRIPE_KEY)" in done.stdout.splitlines()
    assert canary not in done.stdout + done.stderr


def test_collect_also_unlinked_exits_1_before_any_page(
    project: Path, tmp_path: Path, fakes: FakePrograms
) -> None:
    """No fly.toml: the refusal names the missing link, no browser is started, exit 1."""
    ran = tmp_path / "browser-ran"
    done = collect(project, fakes, "API_KEY", "--also", "fly", BROWSER=f"touch {ran} %s")
    assert done.returncode == 1, done.stderr
    assert "also[0] (fly): the project is not linked to Fly.io: there is no fly.toml" in (
        done.stderr
    )
    time.sleep(0.2)
    assert not ran.exists()
    assert fakes.calls() == []


@pytest.mark.parametrize(
    ("also", "why"),
    [
        ("heroku", "--also 'heroku' must be one of: github, vercel, cloudflare, fly"),
        ("fly:evil-app", "--also 'fly:evil-app': fly takes no option"),
        ("vercel", "--also 'vercel'"),
        ("vercel:staging", "--also 'vercel:staging'"),
        ("github:--repo=x/y", "--also 'github:--repo=x/y'"),
    ],
)
def test_collect_bad_also_is_a_usage_error(
    project: Path, fakes: FakePrograms, also: str, why: str
) -> None:
    done = collect(project, fakes, "API_KEY", "--also", also, BROWSER="false")
    assert done.returncode == 2, done.stderr
    assert why in done.stderr
