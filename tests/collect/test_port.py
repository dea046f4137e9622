"""OFFPROMPT_PORT (DESIGN §10): the page on one fixed loopback port, so one `ssh -L` serves
every request; a port in use or not a port is a refusal (MCP) or one line and exit 1 (CLI)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from offprompt.collect.settings import Settings

from .harness import FakeOpener, connect, refusal, settings, structured

ASK = {"secrets": [{"name": "API_KEY"}], "reason": "r"}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def taken() -> Iterator[int]:
    """A port some other program listens on, on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        yield int(s.getsockname()[1])


@pytest.mark.parametrize(
    ("raw", "port", "problem"),
    [
        ("", None, None),
        ("8765", 8765, None),
        (" 8765 ", 8765, None),
        ("0", None, "'0' is not a port number"),
        ("65536", None, "'65536' is not a port number"),
        ("http", None, "'http' is not a port number"),
        ("87.5", None, "'87.5' is not a port number"),
    ],
)
def test_the_setting_is_a_port_number_or_says_why_not(
    raw: str, port: int | None, problem: str | None
) -> None:
    """1-65535 is a port; anything else is kept as a problem to refuse with, not a crash."""
    made = Settings.read({"OFFPROMPT_PORT": raw})

    assert port == made.port
    if problem is None:
        assert made.port_problem is None
    else:
        assert made.port_problem is not None
        assert f"OFFPROMPT_PORT={problem}" in made.port_problem


async def test_the_page_is_served_on_the_port_named(project: Path, state: Path) -> None:
    """Two requests, one after the other, get links on the very port OFFPROMPT_PORT names."""
    port = free_port()
    client, service = await connect(
        project, settings(state, OFFPROMPT_PORT=str(port)), FakeOpener(opens=False)
    )
    try:
        await client.initialize({})
        # Two keys: the same key again, while its request is open, gets that request back.
        asks = [{**ASK, "secrets": [{"name": name}]} for name in ("API_KEY", "OTHER_KEY")]
        links = [structured(await client.call("collect_secret", ask))["url"] for ask in asks]
    finally:
        await client.close()
        await service.close()

    assert all(link.startswith(f"http://127.0.0.1:{port}/r/") for link in links)
    assert links[0] != links[1]


async def test_a_port_in_use_is_a_refusal_that_says_so(
    project: Path, state: Path, taken: int
) -> None:
    """The MCP door: a refusal naming the port and how to choose another, no traceback."""
    client, service = await connect(
        project, settings(state, OFFPROMPT_PORT=str(taken)), FakeOpener()
    )
    try:
        await client.initialize({})
        said = refusal(await client.call("collect_secret", ASK))
    finally:
        await client.close()
        await service.close()

    assert f"port {taken} on 127.0.0.1 (OFFPROMPT_PORT) is in use" in said
    assert "unset OFFPROMPT_PORT" in said


async def test_a_port_that_is_not_a_number_is_a_refusal(project: Path, state: Path) -> None:
    """The MCP door: OFFPROMPT_PORT=http refused in words, before any page."""
    client, service = await connect(project, settings(state, OFFPROMPT_PORT="http"), FakeOpener())
    try:
        await client.initialize({})
        said = refusal(await client.call("collect_secret", ASK))
    finally:
        await client.close()
        await service.close()

    assert "OFFPROMPT_PORT='http' is not a port number" in said


@pytest.mark.parametrize("kind", ["in use", "not a number"])
def test_the_terminal_says_it_in_one_line_and_exits_1(project: Path, taken: int, kind: str) -> None:
    """`offprompt collect`: exit 1, one `offprompt:` line on stderr, nothing written."""
    value = str(taken) if kind == "in use" else "http"
    env = {**os.environ, "OFFPROMPT_SANDBOX": "0", "BROWSER": "false", "OFFPROMPT_PORT": value}

    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", "API_KEY", "--timeout", "5"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert (1, "") == (done.returncode, done.stdout)
    (line,) = done.stderr.splitlines()
    assert line.startswith("offprompt: ")
    assert "OFFPROMPT_PORT" in line
    assert not (project / ".env").exists()
