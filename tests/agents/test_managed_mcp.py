"""Claude Code 2.1.337's managed `disableLocalMcpServers`: set in an administrator's managed
settings, it starts no local (stdio) MCP server unless the managed `allowedMcpServers` admits
it. `offprompt agents` (the doctor) says offprompt's declaration will not run (exit 1), why,
and the entry that admits it."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from offprompt.agents import Machine, Scope, ServerCommand, get

Run = Callable[..., Result]
ENTRY = '{"serverName": "offprompt"}'


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The managed settings folder (/etc/claude-code on Linux), moved into the test's folder."""
    from offprompt.agents import claude_code

    folder = tmp_path / "etc-claude-code"
    monkeypatch.setitem(claude_code.MANAGED_FOLDERS, "linux", folder)
    return folder


def write(path: Path, settings: dict[str, object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))
    return path


@pytest.fixture
def declared(project: Path, tmp_path: Path) -> Path:
    """offprompt declared in Claude Code for the project, as init writes it, its command a
    program that answers --version."""
    program = tmp_path / "bin" / "offprompt"
    program.parent.mkdir()
    program.write_text('#!/bin/sh\n[ "$1" = --version ] && echo "offprompt, version 9.9.9"\n')
    program.chmod(0o755)
    declare(project, program, "project")
    return program


def declare(project: Path, program: Path, scope: Scope) -> None:
    server = ServerCommand(str(program), ("serve",))
    assert not get("claude-code").install(scope, Machine.current(), project, server).failed


def blocked(run: Run, project: Path) -> tuple[int, list[str | None], str]:
    """The exit code, each declared server's `blocked`, and the text `agents` prints."""
    result = run("agents", "--project", str(project), "--json")
    report = next(r for r in json.loads(result.stdout) if r["name"] == "claude-code")
    text = run("agents", "--project", str(project)).stdout
    return result.exit_code, [d["blocked"] for d in report["declared"]], text


@pytest.mark.parametrize("scope", ["project", "user"])
def test_agents_says_the_managed_settings_stop_offprompt(
    run: Run,
    project: Path,
    managed: Path,
    fake_program: Callable[[str], Path],
    tmp_path: Path,
    scope: Scope,
) -> None:
    """disableLocalMcpServers without an allowlist entry for offprompt: the declared server
    will not run (exit 1), and `blocked` names the file, what it does, and the entry to add."""
    fake_program("claude")
    program = tmp_path / "offprompt"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    declare(project, program, scope)
    path = write(managed / "managed-settings.json", {"disableLocalMcpServers": True})
    code, found, text = blocked(run, project)
    why = (
        f"{path} sets disableLocalMcpServers: Claude Code starts no local MCP server, offprompt"
        " included, unless the managed allowedMcpServers admits it; whoever manages this"
        f" machine can add {ENTRY} to allowedMcpServers there"
    )
    assert (code, found) == (1, [why])
    assert why in " ".join(text.split())


@pytest.mark.parametrize(
    "allowed",
    [[{"serverName": "offprompt"}], [{"serverName": "other"}, {"serverName": "offprompt"}]],
)
def test_an_allowlist_that_admits_offprompt_blocks_nothing(
    run: Run,
    project: Path,
    managed: Path,
    declared: Path,
    fake_program: Callable[[str], Path],
    allowed: list[dict[str, str]],
) -> None:
    """The managed allowedMcpServers names offprompt: it starts, nothing to say."""
    fake_program("claude")
    write(
        managed / "managed-settings.json",
        {"disableLocalMcpServers": True, "allowedMcpServers": allowed},
    )
    assert blocked(run, project)[1] == [None]


def test_a_drop_in_decides_over_the_main_file(
    run: Run, project: Path, managed: Path, declared: Path, fake_program: Callable[[str], Path]
) -> None:
    """A drop-in of managed-settings.d that sets the switch counts; the allowlist of the file
    read last that sets one decides (here a drop-in's, which leaves offprompt out)."""
    fake_program("claude")
    write(
        managed / "managed-settings.json",
        {"allowedMcpServers": [{"serverName": "offprompt"}]},
    )
    drop_in = write(
        managed / "managed-settings.d" / "50-mcp.json",
        {"disableLocalMcpServers": True, "allowedMcpServers": [{"serverName": "other"}]},
    )
    code, found, _ = blocked(run, project)
    assert code == 1
    assert len(found) == 1
    assert str(found[0]).startswith(f"{drop_in} sets disableLocalMcpServers")


def test_the_persons_own_settings_do_not_stop_local_servers(
    run: Run,
    project: Path,
    home: Path,
    managed: Path,
    declared: Path,
    fake_program: Callable[[str], Path],
) -> None:
    """Only an administrator's managed settings count: the switch in the person's own user or
    project settings is ignored by Claude Code, and said nothing of."""
    fake_program("claude")
    write(home / ".claude" / "settings.json", {"disableLocalMcpServers": True})
    write(project / ".claude" / "settings.json", {"disableLocalMcpServers": True})
    assert blocked(run, project)[1] == [None]
