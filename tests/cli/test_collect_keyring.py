"""`offprompt collect --also keyring` and `offprompt keys --keyring` as separate processes,
against a real Secret Service (DESIGN §9, §13.2): the value reaches the .env and the keyring
and no output; the names list prints names only; `remove --everywhere` leaves the keyring."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import chromium_or_skip
from keyring_service import SecretService

ROOT = Path(__file__).resolve().parents[2]
PERSON = ROOT / "tests" / "flows" / "person.py"


def offprompt(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offprompt", *args],
        cwd=cwd,
        env={**os.environ, "OFFPROMPT_SANDBOX": "0", **env},
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )


@pytest.mark.browser
def test_collect_saves_in_the_keyring_and_keys_lists_the_name(
    project: Path, tmp_path: Path, keyring_env: SecretService, canary: str
) -> None:
    """Submitted in Chromium with the box as it came (ticked): .env and the keyring hold the
    value, stdout says where it went, `keys --keyring` prints the name; no output, result
    line or state file holds the value, and `remove --everywhere` leaves the keyring alone."""
    chromium = chromium_or_skip()
    done = offprompt(
        project,
        "collect",
        "KR_CLI_KEY",
        "--also",
        "keyring",
        BROWSER=f"{sys.executable} {PERSON} %s",
        PERSON_VALUES=json.dumps({"KR_CLI_KEY": canary}),
        PERSON_MODE="chromium",
        PERSON_OUT=str(tmp_path / "person.jsonl"),
        PERSON_CHROMIUM=chromium,
    )
    assert done.returncode == 0, done.stderr
    assert (project / ".env").read_text() == f"KR_CLI_KEY={canary}\n"
    assert keyring_env.lookup("KR_CLI_KEY") == canary
    assert "keyring Secret Service keyring: sent (saved offprompt / KR_CLI_KEY)" in done.stdout
    listed = offprompt(project, "keys", "--keyring")
    assert (listed.returncode, listed.stdout) == (0, "KR_CLI_KEY\n")
    as_json = offprompt(project, "keys", "--keyring", "--json")
    assert json.loads(as_json.stdout) == ["KR_CLI_KEY"]
    removed = offprompt(project, "remove", "--everywhere")
    assert keyring_env.lookup("KR_CLI_KEY") == canary
    outputs = [done, listed, as_json, removed]
    printed = "".join(o.stdout + o.stderr for o in outputs)
    state = "".join(
        p.read_text(errors="replace")
        for p in tmp_path.rglob("*")
        if p.is_file() and p != project / ".env"
    )
    assert canary not in printed + state


def test_collect_without_a_keyring_exits_1_before_any_page(
    project: Path, tmp_path: Path, keyring_env: SecretService
) -> None:
    """No Secret Service on the bus: the refusal says which and how, no browser runs, exit 1."""
    ran = tmp_path / "browser-ran"
    done = offprompt(
        project,
        "collect",
        "KR_CLI_NONE",
        "--also",
        "keyring",
        BROWSER=f"touch {ran}",
        DBUS_SESSION_BUS_ADDRESS=f"unix:path={tmp_path}/no-bus",
    )
    assert done.returncode == 1
    assert "keyring" in done.stderr
    assert "session bus" in done.stderr
    assert not ran.exists()
    assert not (project / ".env").exists()
