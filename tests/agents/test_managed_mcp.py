"""Claude Code 2.1.337's managed `disableLocalMcpServers`: set in an administrator's managed
settings, it starts no local (stdio) MCP server unless the managed `allowedMcpServers` admits
it. `offprompt agents` (the doctor) says so and names the entry that admits offprompt."""

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

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


def warnings(run: Run, project: Path) -> tuple[list[str], str]:
    result = run("agents", "--project", str(project), "--json")
    report = next(r for r in json.loads(result.stdout) if r["name"] == "claude-code")
    text = run("agents", "--project", str(project)).stdout
    return list(report["warnings"]), text


def test_agents_says_the_managed_settings_stop_local_servers(
    run: Run, project: Path, managed: Path, fake_program: Callable[[str], Path]
) -> None:
    """disableLocalMcpServers without an allowlist entry for offprompt: a warning naming the
    file, what it does, and the entry to add to allowedMcpServers."""
    fake_program("claude")
    path = write(managed / "managed-settings.json", {"disableLocalMcpServers": True})
    found, text = warnings(run, project)
    assert [
        f"{path} sets disableLocalMcpServers: Claude Code starts no local MCP server, offprompt"
        " included, unless the managed allowedMcpServers admits it; whoever manages this"
        f" machine can add {ENTRY} to allowedMcpServers there"
    ] == found
    assert "warning: " + found[0] in text


@pytest.mark.parametrize(
    "allowed",
    [[{"serverName": "offprompt"}], [{"serverName": "other"}, {"serverName": "offprompt"}]],
)
def test_an_allowlist_that_admits_offprompt_is_no_warning(
    run: Run,
    project: Path,
    managed: Path,
    fake_program: Callable[[str], Path],
    allowed: list[dict[str, str]],
) -> None:
    """The managed allowedMcpServers names offprompt: it starts, nothing to say."""
    fake_program("claude")
    write(
        managed / "managed-settings.json",
        {"disableLocalMcpServers": True, "allowedMcpServers": allowed},
    )
    assert warnings(run, project)[0] == []


def test_a_drop_in_decides_over_the_main_file(
    run: Run, project: Path, managed: Path, fake_program: Callable[[str], Path]
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
    found, _ = warnings(run, project)
    assert len(found) == 1
    assert found[0].startswith(f"{drop_in} sets disableLocalMcpServers")


def test_the_persons_own_settings_do_not_stop_local_servers(
    run: Run, project: Path, home: Path, managed: Path, fake_program: Callable[[str], Path]
) -> None:
    """Only an administrator's managed settings count: the switch in the person's own user or
    project settings is ignored by Claude Code, and said nothing of."""
    fake_program("claude")
    write(home / ".claude" / "settings.json", {"disableLocalMcpServers": True})
    write(project / ".claude" / "settings.json", {"disableLocalMcpServers": True})
    assert warnings(run, project)[0] == []
