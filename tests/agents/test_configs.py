"""Each agent's config before and after `init`, and back after `remove`, against golden files.

fixtures/<agent>-<scope>.before hold other servers, comments, trailing commas, tabs, CRLF and
one-line JSON; <name>.after is the exact text `init` must leave. <agent>-new.after is the file
`init` creates from nothing: the entry shape each agent gets.
"""

import json
import os
import re
import tomllib
from pathlib import Path

import pytest
from cli_helpers import FIXTURES, SERVER

from offprompt.agents import AGENTS, Machine, Scope, get
from offprompt.configedit import jsonc

EDITED = [
    ("claude-code", "project"),
    ("claude-code", "user"),
    ("codex", "user"),
    ("cursor", "project"),
    ("vscode", "project"),
    ("gemini", "project"),
    ("windsurf", "user"),
    ("zed", "user"),
    ("zed", "project"),
]
CREATED: list[tuple[str, Scope]] = [
    (a.name, "user" if a.name == "windsurf" else "project") for a in AGENTS
]


def config_path(name: str, scope: Scope, machine: Machine, project: Path) -> Path:
    path = get(name).location(scope, machine, project).path
    assert path is not None
    return path


def read_config(path: Path) -> dict[str, object]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        return tomllib.loads(text)
    value = jsonc.parse(text).root.value
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(("name", "scope"), EDITED, ids=[f"{n}-{s}" for n, s in EDITED])
def test_init_edits_config_exactly_as_the_golden_file(
    name: str, scope: Scope, machine: Machine, project: Path
) -> None:
    """Only our entry is added; every other byte (comments, layout, line endings) stays."""
    path = config_path(name, scope, machine, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = (FIXTURES / f"{name}-{scope}.before").read_bytes()
    path.write_bytes(before)

    change = get(name).install(scope, machine, project, SERVER)

    assert (change.outcome, change.path) == ("added", path)
    assert (FIXTURES / f"{name}-{scope}.after").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(("name", "scope"), CREATED, ids=[n for n, _ in CREATED])
def test_init_creates_config_with_the_agents_entry_shape(
    name: str, scope: Scope, machine: Machine, project: Path
) -> None:
    """A config that did not exist is created holding only our entry, in the agent's shape."""
    path = config_path(name, scope, machine, project)

    change = get(name).install(scope, machine, project, SERVER)

    assert change.outcome == "added"
    assert (FIXTURES / f"{name}-new.after").read_bytes() == path.read_bytes()


@pytest.mark.parametrize(("name", "scope"), EDITED + CREATED)
def test_init_twice_leaves_the_file_untouched(
    name: str, scope: Scope, machine: Machine, project: Path
) -> None:
    """The second run reports "unchanged" and does not even rewrite the file."""
    path = config_path(name, scope, machine, project)
    before = FIXTURES / f"{name}-{scope}.before"
    if before.exists() and (name, scope) in EDITED:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(before.read_bytes())
    get(name).install(scope, machine, project, SERVER)
    first = path.read_bytes(), path.stat().st_ino, path.stat().st_mtime_ns

    change = get(name).install(scope, machine, project, SERVER)

    assert change.outcome == "unchanged"
    assert first == (path.read_bytes(), path.stat().st_ino, path.stat().st_mtime_ns)


@pytest.mark.parametrize(("name", "scope"), EDITED, ids=[f"{n}-{s}" for n, s in EDITED])
def test_remove_after_init_restores_the_original_bytes(
    name: str, scope: Scope, machine: Machine, project: Path
) -> None:
    """`remove` takes out exactly what `init` added."""
    path = config_path(name, scope, machine, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    before = (FIXTURES / f"{name}-{scope}.before").read_bytes()
    path.write_bytes(before)
    get(name).install(scope, machine, project, SERVER)

    change = get(name).remove(scope, machine, project)

    assert change.outcome == "removed"
    assert before == path.read_bytes()


@pytest.mark.parametrize(("name", "scope"), CREATED, ids=[n for n, _ in CREATED])
def test_remove_deletes_the_config_and_folder_init_created(
    name: str, scope: Scope, machine: Machine, project: Path, home: Path
) -> None:
    """A file that held only our entry goes, and so does a project folder like .cursor/."""
    get(name).install(scope, machine, project, SERVER)

    get(name).remove(scope, machine, project)

    assert [] == list(project.iterdir())
    path = config_path(name, scope, machine, project)
    assert not path.exists()


@pytest.mark.parametrize(("name", "scope"), EDITED, ids=[f"{n}-{s}" for n, s in EDITED])
def test_init_keeps_other_servers_and_settings(
    name: str, scope: Scope, machine: Machine, project: Path
) -> None:
    """Read back, the config is the original plus our entry and nothing else."""
    path = config_path(name, scope, machine, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((FIXTURES / f"{name}-{scope}.before").read_bytes())
    original = read_config(path)

    get(name).install(scope, machine, project, SERVER)

    after = read_config(path)
    section = {"codex": "mcp_servers", "vscode": "servers", "zed": "context_servers"}.get(
        name, "mcpServers"
    )
    servers = after[section]
    assert isinstance(servers, dict)
    entry = servers.pop("offprompt")
    assert isinstance(entry, dict)
    assert (SERVER.command, [*SERVER.args]) == (entry["command"], entry["args"])
    if not servers and section not in original:
        del after[section]
    assert original == after


def test_codex_config_keeps_comments_and_parses_as_toml(machine: Machine, project: Path) -> None:
    """Every comment line of the original is still there, and tomllib reads the result."""
    path = config_path("codex", "user", machine, project)
    path.parent.mkdir(parents=True)
    before = (FIXTURES / "codex-user.before").read_text()
    path.write_text(before)

    get("codex").install("user", machine, project, SERVER)

    after = path.read_text()
    comments = [line for line in before.splitlines() if "#" in line]
    assert comments == [line for line in after.splitlines() if line in comments]
    entry = tomllib.loads(after)["mcp_servers"]["offprompt"]
    assert 600 == entry["tool_timeout_sec"]
    assert {"DISPLAY", "WAYLAND_DISPLAY", "BROWSER", "SSH_CONNECTION"} <= set(entry["env_vars"])
    assert {"XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "OFFPROMPT_SANDBOX"} <= set(
        entry["env_vars"]
    )


def test_codex_env_vars_pass_every_variable_readme_documents(
    machine: Machine, project: Path
) -> None:
    """Codex drops what env_vars does not name, so each variable of README's Environment table
    (DESIGN §10, OFFPROMPT_PORT among them) is listed for the server."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    table = readme.split("## Environment", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", table, re.MULTILINE))
    path = config_path("codex", "user", machine, project)

    get("codex").install("user", machine, project, SERVER)

    entry = tomllib.loads(path.read_text())["mcp_servers"]["offprompt"]
    assert "OFFPROMPT_PORT" in documented
    assert set() == documented - set(entry["env_vars"])


def test_json_configs_that_were_plain_json_stay_plain_json(machine: Machine, project: Path) -> None:
    """A file without comments is still strict JSON after the edit (JSON.parse reads it)."""
    for name, scope in EDITED:
        path = config_path(name, scope, machine, project)
        before = (FIXTURES / f"{name}-{scope}.before").read_text()
        if path.suffix == ".toml" or jsonc.parse(before).has_comments or ",\n}" in before:
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(before)
        get(name).install(scope, machine, project, SERVER)
        json.loads(path.read_text())


def test_init_updates_a_stale_command_and_keeps_what_the_person_added(
    machine: Machine, project: Path
) -> None:
    """An old entry gets the new command; an `env` the person put in it stays."""
    path = project / ".mcp.json"
    old = {"type": "stdio", "command": "/old/offprompt", "args": ["serve"], "env": {"A": "1"}}
    path.write_text(json.dumps({"mcpServers": {"offprompt": old}}, indent=2) + "\n")

    change = get("claude-code").install("project", machine, project, SERVER)

    assert change.outcome == "updated"
    entry = json.loads(path.read_text())["mcpServers"]["offprompt"]
    assert {**old, "command": SERVER.command} == entry


def test_codex_keeps_the_persons_env_vars_and_longer_timeout(
    machine: Machine, project: Path
) -> None:
    """Names the person added to env_vars stay first; a timeout above ours is not lowered."""
    path = project / ".codex" / "config.toml"
    path.parent.mkdir()
    path.write_text(
        '[mcp_servers.offprompt]\ncommand = "/old"\nenv_vars = ["HTTPS_PROXY"]\n'
        "tool_timeout_sec = 900\n"
    )

    get("codex").install("project", machine, project, SERVER)

    entry = tomllib.loads(path.read_text())["mcp_servers"]["offprompt"]
    assert ("/opt/offprompt/bin/offprompt", 900) == (entry["command"], entry["tool_timeout_sec"])
    assert "HTTPS_PROXY" == entry["env_vars"][0]
    assert "DISPLAY" in entry["env_vars"]


def test_codex_entry_written_inline_is_refused_untouched(machine: Machine, project: Path) -> None:
    """An entry that is not a [mcp_servers.offprompt] table cannot be edited as one: refuse."""
    path = project / ".codex" / "config.toml"
    path.parent.mkdir()
    text = '[mcp_servers]\noffprompt = { command = "/old", args = ["serve"] }\n'
    path.write_text(text)

    change = get("codex").install("project", machine, project, SERVER)

    assert change.outcome == "failed"
    assert "Add this by hand: [mcp_servers.offprompt]" in change.detail
    assert text == path.read_text()


@pytest.mark.parametrize(
    ("name", "text", "says"),
    [
        ("cursor", '{"mcpServers": {"a": 1,,}}', "is not valid JSON"),
        ("zed", '// c\n{"context_servers": /* unclosed', "is not valid JSON"),
        ("vscode", '{"servers": ["not", "an", "object"]}', "'servers'"),
        ("gemini", "[1, 2]", "does not hold a JSON object"),
        ("codex", "model = \n", "is not valid TOML"),
    ],
)
def test_a_config_offprompt_cannot_read_is_left_untouched(
    name: str, text: str, says: str, machine: Machine, project: Path
) -> None:
    """Broken or odd configs are reported, never overwritten."""
    path = config_path(name, "project", machine, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

    change = get(name).install("project", machine, project, SERVER)

    assert change.outcome == "failed"
    assert says in change.detail
    assert "othing was changed" in change.detail
    assert text == path.read_text()


def test_init_keeps_the_config_files_mode(machine: Machine, project: Path) -> None:
    """A config is not forced to 0600 (that is for secrets); its mode stays as it was."""
    path = project / ".mcp.json"
    path.write_text("{}\n")
    path.chmod(0o640)

    get("claude-code").install("project", machine, project, SERVER)

    assert 0o640 == path.stat().st_mode & 0o777


def test_init_writes_through_a_symlinked_config(
    machine: Machine, home: Path, project: Path
) -> None:
    """A dotfile-managed config stays a link; the file it points to gets the entry."""
    target = home / "dotfiles" / "zed.json"
    target.parent.mkdir()
    target.write_text("// mine\n{}\n")
    link = config_path("zed", "user", machine, project)
    link.parent.mkdir(parents=True)
    link.symlink_to(target)

    get("zed").install("user", machine, project, SERVER)

    assert link.is_symlink()
    assert "offprompt" in read_config(target)["context_servers"]  # type: ignore[operator]


def test_remove_leaves_other_servers_alone(machine: Machine, project: Path) -> None:
    """Only the entry named offprompt goes."""
    path = project / ".cursor" / "mcp.json"
    path.parent.mkdir()
    servers = {"a": {"command": "x"}, "offprompt": {"command": "y"}, "b": {"url": "u"}}
    path.write_text(json.dumps({"mcpServers": servers}, indent=2))

    change = get("cursor").remove("project", machine, project)

    assert change.outcome == "removed"
    assert {"mcpServers": {"a": {"command": "x"}, "b": {"url": "u"}}} == json.loads(
        path.read_text()
    )


def test_remove_without_an_entry_changes_nothing(machine: Machine, project: Path) -> None:
    """A config without offprompt is reported as such and not rewritten."""
    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {}}')
    mtime = path.stat().st_mtime_ns

    change = get("claude-code").remove("project", machine, project)

    assert ("absent", mtime) == (change.outcome, path.stat().st_mtime_ns)


def test_windsurf_has_no_project_config(machine: Machine, project: Path) -> None:
    """Windsurf reads only its user config: the project scope says so and writes nothing."""
    change = get("windsurf").install("project", machine, project, SERVER)

    assert "unsupported" == change.outcome
    assert "--global" in change.detail
    assert [] == list(project.iterdir())


def test_claude_code_user_config_follows_claude_config_dir(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """With CLAUDE_CONFIG_DIR set, the user config is .claude.json inside it."""
    custom = tmp_path / "claude-alt"
    machine = Machine(home=home, environ={"CLAUDE_CONFIG_DIR": str(custom)}, platform="linux")

    assert custom / ".claude.json" == config_path("claude-code", "user", machine, project)


def test_codex_user_config_follows_codex_home(home: Path, project: Path, tmp_path: Path) -> None:
    """With CODEX_HOME set, the user config is config.toml inside it."""
    machine = Machine(home=home, environ={"CODEX_HOME": str(tmp_path)}, platform="linux")

    assert tmp_path / "config.toml" == config_path("codex", "user", machine, project)


@pytest.mark.parametrize(
    ("platform", "environ", "vscode", "zed"),
    [
        ("linux", {}, ".config/Code/User/mcp.json", ".config/zed/settings.json"),
        (
            "darwin",
            {},
            "Library/Application Support/Code/User/mcp.json",
            ".config/zed/settings.json",
        ),
        ("win32", {}, "AppData/Roaming/Code/User/mcp.json", "AppData/Roaming/Zed/settings.json"),
    ],
)
def test_user_configs_per_platform(
    platform: str, environ: dict[str, str], vscode: str, zed: str, home: Path, project: Path
) -> None:
    """VS Code's and Zed's user configs sit where each OS keeps them."""
    machine = Machine(home=home, environ=environ, platform=platform)

    assert home / vscode == config_path("vscode", "user", machine, project)
    assert home / zed == config_path("zed", "user", machine, project)


def test_an_agent_saving_its_config_during_the_edit_does_not_lose_its_change(
    machine: Machine, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """If the file changes between read and replace, the edit is redone on the new text."""
    from offprompt.agents import files

    path = project / ".mcp.json"
    path.write_text('{"mcpServers": {}}\n')
    real_replace = files._replace
    calls = []

    def agent_saves_first(
        target: Path, before: bytes | None, data: bytes, shown: str, mode: int = 0o666
    ) -> bool:
        if not calls:
            path.write_text('{"mcpServers": {}, "numStartups": 2}\n')
        calls.append(target)
        return real_replace(target, before, data, shown, mode)

    monkeypatch.setattr(files, "_replace", agent_saves_first)

    get("claude-code").install("project", machine, project, SERVER)

    value = json.loads(path.read_text())
    assert (2, 2) == (len(calls), value["numStartups"])
    assert "offprompt" in value["mcpServers"]


def test_no_temporary_files_are_left_behind(machine: Machine, project: Path) -> None:
    """The atomic write's temporary file never stays in the config's folder."""
    for agent in AGENTS:
        agent.install("project", machine, project, SERVER)
        agent.remove("project", machine, project)
    leftovers = [p for p in project.rglob("*") if ".offprompt-" in p.name]
    assert [] == leftovers
    assert [] == os.listdir(project)
