"""Both doors through the one collect core: `offprompt collect` and the MCP tools refuse the
same request in the same words, and decide remote the same way (DESIGN §2, §5)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import browser

from offprompt.cli import cli

from .harness import Session, refusal

# One bad request, as an agent passes it and as a terminal types it.
SAME_REFUSALS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "a name asked twice": (
        {"secrets": [{"name": "API_KEY"}, {"name": "API_KEY"}], "reason": "r"},
        ["API_KEY", "API_KEY", "--reason", "r"],
    ),
    "a path outside the project": (
        {"secrets": [{"name": "API_KEY"}], "reason": "r", "sink": {"path": "../x.env"}},
        ["API_KEY", "--reason", "r", "--file", "../x.env"],
    ),
    "a path inside .git": (
        {"secrets": [{"name": "API_KEY"}], "reason": "r", "sink": {"path": ".git/config"}},
        ["API_KEY", "--reason", "r", "--file", ".git/config"],
    ),
    "an ambiguous provider": (
        {"secrets": [{"name": "MY_KEY", "provider": "stripe"}], "reason": "r"},
        ["MY_KEY", "--reason", "r", "--provider", "MY_KEY=stripe"],
    ),
}


@pytest.mark.parametrize("case", SAME_REFUSALS, ids=list(SAME_REFUSALS))
async def test_both_doors_refuse_in_the_same_words(
    session: Session, project: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """The reason an agent reads after `offprompt refused that request: ` is the reason the
    terminal prints (as a usage error, exit 2)."""
    arguments, argv = SAME_REFUSALS[case]
    await session.initialize({})
    agent = refusal(await session.call("collect_secret", arguments))
    monkeypatch.chdir(project)
    terminal = CliRunner().invoke(cli, ["collect", *argv], prog_name="offprompt")
    assert (terminal.exit_code, f"Error: {agent}") == (2, terminal.stderr.strip().splitlines()[-1])


def _remote_terminal(tmp_path: Path) -> dict[str, str]:
    """An SSH session on a Linux box without a display, no tunnel (so no network)."""
    env = {k: v for k, v in os.environ.items() if k not in {"DISPLAY", "WAYLAND_DISPLAY"}}
    env.update(
        {
            "SSH_CONNECTION": "192.0.2.10 50000 192.0.2.20 22",
            "OFFPROMPT_TUNNEL": "off",
            "BROWSER": f"sh -c 'touch {tmp_path / 'browser-ran'}' %s",
        }
    )
    return env


def _link(proc: subprocess.Popen[str]) -> str:
    assert proc.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if line.startswith("  http"):
            return line.strip()
    raise AssertionError("offprompt collect printed no link")


def test_remote_terminal_gets_a_sealed_link_no_opener_and_a_page_that_refuses_plain_posts(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """Over SSH `offprompt collect` prints the sealed `#k=` link, runs no opener, and its page
    answers a plain (unsealed) POST with 400, writing nothing."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "offprompt", "collect", "API_KEY", "--timeout", "60"],
        cwd=project,
        env=_remote_terminal(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        link = _link(proc)
        page, _, fragment = link.partition("#")
        assert (page.startswith("http://127.0.0.1:"), fragment[:2]) == (True, "k=")
        person = browser()
        with person.open(page, timeout=10) as reply:
            nonce = re.search(r'name="nonce" value="([^"]+)"', reply.read().decode())
        assert nonce is not None
        claim = urllib.parse.urlencode({"nonce": nonce.group(1)}).encode()
        with person.open(f"{page}/claim", data=claim, timeout=10) as reply:
            assert reply.status == 204  # the page's script claims it (DESIGN §17)
        body = urllib.parse.urlencode({"nonce": nonce.group(1), "API_KEY": canary}).encode()
        with pytest.raises(urllib.error.HTTPError) as refused:
            person.open(page, data=body, timeout=10)
        refused.value.close()
        assert refused.value.code == 400
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 3
    assert not (tmp_path / "browser-ran").exists()
    assert not (project / ".env").exists()
    assert canary not in out + err
