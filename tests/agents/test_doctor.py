"""`offprompt agents`, the doctor (DESIGN §9): declared commands run for real with `--version`,
the waits Claude Code and Codex keep in their own files, what keeps values from the model, and
the exit code."""

import json
import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import COMMAND
from click.testing import Result

from offprompt.agents import (
    NAMES,
    Machine,
    Scope,
    ServerCommand,
    get,
    guard_install,
    host_waits,
    version_check,
)
from offprompt.agents.codex import codex_hook_hash
from offprompt.agents.zed import Zed

Run = Callable[..., Result]
Make = Callable[..., Path]
MEND = (
    "to mend: reinstall offprompt and run `offprompt init` again, or `offprompt remove` to take"
    " it out"
)
PAD = " " * 13
# Tests run with a PATH holding only fake agents, so scripts name these by their paths.
SLEEP = shutil.which("sleep", path="/usr/bin:/bin")
TOUCH = shutil.which("touch", path="/usr/bin:/bin")


@pytest.fixture
def script(tmp_path: Path) -> Make:
    """`script(name, body)`: a real executable shell script outside the project."""
    folder = tmp_path / "programs"
    folder.mkdir(exist_ok=True)

    def make(name: str, body: str, *, executable: bool = True) -> Path:
        path = folder / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        if executable:
            path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        return path

    return make


@pytest.fixture
def offprompt(script: Make) -> Path:
    """A program that answers `--version` as offprompt does (and fails anything else)."""
    return script(
        "offprompt",
        'if [ "$1" = --version ]; then echo "offprompt, version 9.9.9"; exit 0; fi\nexit 64',
    )


def init(project: Path, program: Path | str, *agents: str, scope: Scope = "project") -> None:
    """What `offprompt init` writes for `agents` at `scope` (the project's own files unless
    said), server and guard, made by the same code init runs."""
    machine = Machine.current()
    server = ServerCommand(str(program), ("serve",))
    for name in agents:
        agent = get(name)
        assert not agent.install(scope, machine, project, server).failed
        assert not guard_install.install_guard(agent, scope, machine, project, server).failed


def doctor_json(run: Run, project: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    result = run("agents", "--project", str(project), "--json")
    return result.exit_code, {item["name"]: item for item in json.loads(result.stdout)}


def hook(settings: Path, event: str = "PreToolUse", command: str | None = None) -> str:
    """The first hook command of `event` in a settings file as init wrote it (whatever shell
    wrapper it has); with `command`, replace it with that first."""
    data = json.loads(settings.read_text())
    handler = data["hooks"][event][0]["hooks"][0]
    if command is not None:
        handler["command"] = command
        settings.write_text(json.dumps(data))
    return str(handler["command"])


def guard_line(settings: Path, program: Path, event: str = "PreToolUse") -> str:
    """How the text output shows the guard init wrote: its program and `guard`, said to be
    inside a wrapper when the hook's command is more than that."""
    plain = f"{program} guard"
    return plain if hook(settings, event) == plain else f"{plain} (through a wrapper)"


def trust_gemini(project: Path, level: str = "TRUST_FOLDER") -> None:
    """The person's answer to Gemini CLI's trust question, where Gemini CLI keeps it."""
    folder = Path(os.environ["HOME"]) / ".gemini"
    folder.mkdir(exist_ok=True)
    (folder / "trustedFolders.json").write_text(json.dumps({str(project): level}))


def waits(finding: dict[str, Any]) -> list[str]:
    return [w["for"] for w in finding["waits"]]


def probe(program: Path, machine: Machine) -> version_check.Probe:
    return version_check.Probe((str(program), "--version"), machine.home)


# -- running the declared command ----------------------------------------------------------------


def test_a_program_that_answers_version_runs(offprompt: Path, machine: Machine) -> None:
    """Exit 0 to `--version`: runs, with the first line of its answer."""
    checks = version_check.run_checks([probe(offprompt, machine)], machine)

    assert (
        version_check.Check(
            True,
            f"answers `{offprompt} --version`",
            (str(offprompt), "--version"),
            "offprompt, version 9.9.9",
        )
        == checks[probe(offprompt, machine)]
    )


def test_a_program_that_fails_says_how(script: Make, machine: Machine) -> None:
    """A non-zero exit does not run, and its last stderr line says why."""
    failing = script("offprompt", "echo 'Traceback (most recent call last):' >&2\necho boom >&2\n"
                     "exit 3")  # fmt: skip

    check = version_check.run_checks([probe(failing, machine)], machine)

    assert (False, f"`{failing} --version` exited with status 3: boom") == (
        check[probe(failing, machine)].ok,
        check[probe(failing, machine)].why,
    )


def test_a_hung_program_is_killed_at_the_limit_with_what_it_started(
    script: Make, machine: Machine, tmp_path: Path
) -> None:
    """A program that never answers is stopped at the limit, and so is the child it started."""
    pid_file = tmp_path / "child.pid"
    hung = script("offprompt", f"{SLEEP} 60 &\necho $! > {pid_file}\nwait")

    started = time.monotonic()
    check = version_check.run_checks([probe(hung, machine)], machine, timeout=0.5)
    took = time.monotonic() - started

    assert (False, f"`{hung} --version` did not answer within 0.5 s") == (
        check[probe(hung, machine)].ok,
        check[probe(hung, machine)].why,
    )
    assert 0.5 <= took < 3
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 2
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = (
        Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}").exists() else ""
    )
    return state != "Z"


def test_checks_run_at_the_same_time(script: Make, machine: Machine) -> None:
    """Four programs taking 1 s each are checked in well under 4 s."""
    slow = [script(f"offprompt{i}", f"{SLEEP} 1\necho ok") for i in range(4)]

    started = time.monotonic()
    checks = version_check.run_checks([probe(p, machine) for p in slow], machine)

    assert [True] * 4 == [c.ok for c in checks.values()]
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    ("program", "why", "mend"),
    [
        ("/nowhere/bin/offprompt", "/nowhere/bin/offprompt does not exist", MEND),
        # A project's file naming a program this machine lacks: a teammate without offprompt.
        (
            "offprompt-not-installed",
            "`offprompt-not-installed` is not on PATH",
            "to mend: install offprompt (see the offprompt README)",
        ),
    ],
)
def test_a_command_that_does_not_resolve_does_not_run(
    run: Run, project: Path, program: str, why: str, mend: str
) -> None:
    """A missing absolute path or a word not on PATH: does not run, with how to mend; exit 1."""
    init(project, program, "cursor")

    result = run("agents", "--project", str(project))

    assert 1 == result.exit_code
    lines = result.stdout.splitlines()
    at = lines.index(f"{PAD}declared in {project}/.cursor/mcp.json: {program} serve")
    assert [f"{PAD}  does not run: {why}", f"{PAD}  {mend}"] == lines[at + 1 : at + 3]


def test_a_file_that_is_not_executable_does_not_run(run: Run, project: Path, script: Make) -> None:
    """A program file without its x bits (a broken install) does not run."""
    program = script("offprompt", "exit 0", executable=False)
    init(project, program, "cursor")

    code, items = doctor_json(run, project)

    assert (1, False, f"{program} is not executable") == (
        code,
        items["cursor"]["declared"][0]["runs"]["ok"],
        items["cursor"]["declared"][0]["runs"]["why"],
    )


def test_a_deleted_install_is_a_broken_server_and_guard(
    run: Run, project: Path, offprompt: Path
) -> None:
    """Init, then the program goes (a deleted venv): both declarations say so and exit 1."""
    init(project, offprompt, "gemini")
    offprompt.unlink()

    code, items = doctor_json(run, project)

    gemini = items["gemini"]
    assert 1 == code
    assert [False, False] == [
        gemini["declared"][0]["runs"]["ok"],
        gemini["guards"][0]["runs"]["ok"],
    ]
    assert ("nothing", f"the guard in {project}/.gemini/settings.json cannot start: {offprompt}"
            " does not exist") == (gemini["protection"], gemini["protection_why"])  # fmt: skip
    assert False is gemini["works"]


def test_agents_exits_0_when_everything_declared_runs(
    run: Run, project: Path, offprompt: Path, fake_program: Callable[[str], Path]
) -> None:
    """Server and guard both answer: `runs`, `guarded by`, exit 0; the guard's program is run
    as `… --version` in place of `guard`."""
    fake_program("gemini")
    init(project, offprompt, "gemini")
    trust_gemini(project)

    result = run("agents", "--project", str(project))

    assert 0 == result.exit_code
    lines = result.stdout.splitlines()
    at = lines.index(f"{PAD}declared in {project}/.gemini/settings.json: {offprompt} serve")
    assert [
        f"{PAD}  runs: offprompt, version 9.9.9",
        f"{PAD}guard in {project}/.gemini/settings.json:"
        f" {guard_line(project / '.gemini' / 'settings.json', offprompt, 'BeforeTool')}",
        f"{PAD}  runs: offprompt, version 9.9.9",
        f"{PAD}guarded by {project}/.gemini/settings.json",
    ] == lines[at + 1 : at + 5]


def test_only_the_guard_broken_is_exit_1(run: Run, project: Path, offprompt: Path) -> None:
    """A server that runs beside a guard whose program is gone: not guarded, and exit 1."""
    init(project, offprompt, "gemini")
    settings = project / ".gemini" / "settings.json"
    hook(settings, "BeforeTool", "/gone/offprompt guard")

    code, items = doctor_json(run, project)

    gemini = items["gemini"]
    assert (1, True, False) == (
        code,
        gemini["declared"][0]["runs"]["ok"],
        gemini["guards"][0]["runs"]["ok"],
    )
    assert "nothing" == gemini["protection"]


def test_a_bare_guard_hook_from_an_older_init_is_said_to_fail_open(
    run: Run, project: Path, offprompt: Path
) -> None:
    """A hook an older init wrote (no fail-closed wrapper) still guards while offprompt
    starts, so the exit stays 0, but the doctor says it would let calls through and how to
    mend; today's wrapped hook carries no such line."""
    init(project, offprompt, "gemini")
    trust_gemini(project)
    settings = project / ".gemini" / "settings.json"
    wrapped = run("agents", "--project", str(project))
    hook(settings, "BeforeTool", f"{offprompt} guard")

    bare = run("agents", "--project", str(project))
    code, items = doctor_json(run, project)

    warning = (
        f"{PAD}  fails open: an older offprompt wrote this hook, which lets calls through when"
        " offprompt cannot start; run `offprompt init` again to update it"
    )
    assert (0, 0) == (wrapped.exit_code, bare.exit_code)
    assert warning not in wrapped.stdout.splitlines()
    assert warning in bare.stdout.splitlines()
    assert (0, False, "guarded") == (
        code,
        items["gemini"]["guards"][0]["fails_closed"],
        items["gemini"]["protection"],
    )


def test_a_config_that_cannot_be_read_is_exit_1(run: Run, project: Path) -> None:
    """A broken config is said under its agent, found or not, and makes the exit 1."""
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text("{ broken")

    result = run("agents", "--project", str(project))

    assert 1 == result.exit_code
    assert (
        f'{PAD}{project}/.cursor/mcp.json is not valid JSON (expected a "key" or }} at line 1);'
        " fix it, then run this again. Nothing was changed."
    ) in result.stdout.splitlines()


def test_nothing_declared_anywhere_is_exit_0(run: Run, project: Path) -> None:
    """No agent, no declaration: the list alone, exit 0."""
    result = run("agents", "--project", str(project))

    assert (0, len(NAMES)) == (result.exit_code, len(result.stdout.splitlines()))


def test_a_program_inside_the_project_named_by_a_shared_file_is_not_run(
    run: Run, project: Path
) -> None:
    """`.mcp.json` (a file the repository brings) naming `./bin/offprompt`: not run before the
    person ran it, said so; not a failure."""
    marker = project / "ran"
    program = project / "bin" / "offprompt"
    program.parent.mkdir()
    program.write_text(f"#!/bin/sh\n{TOUCH} {marker}\n")
    program.chmod(0o755)
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"offprompt": {"command": "./bin/offprompt", "args": ["serve"]}}})
    )

    code, items = doctor_json(run, project)

    runs = items["claude-code"]["declared"][0]["runs"]
    assert (0, None, False) == (code, runs["ok"], marker.exists())
    assert runs["why"].startswith("not run: ./bin/offprompt is inside the project")


def test_a_command_that_is_not_offprompts_is_not_run(run: Run, project: Path) -> None:
    """An `offprompt` entry whose command is no `… offprompt … serve` is left unchecked."""
    marker = project.parent / "ran"
    (project / ".cursor").mkdir()
    entry = {"command": "sh", "args": ["-c", f"{TOUCH} {marker}"]}
    (project / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"offprompt": entry}}))

    code, items = doctor_json(run, project)

    assert (0, None, False) == (code, items["cursor"]["declared"][0]["runs"]["ok"], marker.exists())


@pytest.mark.slow
def test_the_cli_gives_a_hung_program_five_seconds(run: Run, project: Path, script: Make) -> None:
    """Through the CLI the limit is DESIGN's 5 s: not less, and not much more."""
    hung = script("offprompt", f"exec {SLEEP} 60")
    (project / ".cursor").mkdir()
    entry = {"command": str(hung), "args": ["serve"]}
    (project / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"offprompt": entry}}))

    started = time.monotonic()
    code, items = doctor_json(run, project)
    took = time.monotonic() - started

    assert (1, f"`{hung} --version` did not answer within 5 s") == (
        code,
        items["cursor"]["declared"][0]["runs"]["why"],
    )
    assert 5 <= took < 8


# -- the listing, text and JSON --------------------------------------------------------------------


def test_agents_lists_every_agent_found_and_declared(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path], offprompt: Path
) -> None:
    """One line per agent with the evidence; then each declaration, whether it runs and what
    the agent waits for, and what keeps the values from the model."""
    claude = fake_program("claude")
    (home / ".codex").mkdir()
    init(project, offprompt, "claude-code")

    result = run("agents", "--project", str(project))

    assert 0 == result.exit_code
    assert [
        f"claude-code  found (claude on PATH: {claude})",
        f"{PAD}declared in {project}/.mcp.json: {offprompt} serve",
        f"{PAD}  runs: offprompt, version 9.9.9",
        f"{PAD}  waits for you: Claude Code asks whether you trust this folder when it starts"
        " here: answer yes",
        f"{PAD}  waits for you: Claude Code asks you to approve offprompt, a server from"
        " .mcp.json, when it starts here: approve it",
        f"{PAD}guard in {project}/.claude/settings.json:"
        f" {guard_line(project / '.claude' / 'settings.json', offprompt)}",
        f"{PAD}  runs: offprompt, version 9.9.9",
        f"{PAD}guarded by {project}/.claude/settings.json",
        "codex        found (~/.codex exists)",
        f"{PAD}not guarded: no guard is declared: run `offprompt init` to add it",
        "cursor       not found (no cursor on PATH, no cursor-agent on PATH, no ~/.cursor)",
        "vscode       not found (no code on PATH, no ~/.config/Code/User)",
        "gemini       not found (no gemini on PATH, no ~/.gemini)",
        "windsurf     not found (no windsurf on PATH, no ~/.codeium/windsurf)",
        "zed          not found (no zed on PATH, no zeditor on PATH, no ~/.config/zed)",
    ] == result.stdout.splitlines()


def test_an_agent_with_no_hooks_says_why_it_is_not_guarded(
    run: Run, project: Path, offprompt: Path
) -> None:
    """Zed: declared and running, `nothing` keeps the values, and the agent's own reason."""
    init(project, offprompt, "zed")

    code, items = doctor_json(run, project)

    zed = items["zed"]
    assert (0, "nothing", Zed.unguarded, [], []) == (
        code,
        zed["protection"],
        zed["protection_why"],
        zed["guarded"],
        zed["guards"],
    )


def test_agents_json_keeps_todays_keys_and_adds_the_doctors(
    run: Run, project: Path, offprompt: Path
) -> None:
    """--json: the keys scripts read before (name … unguarded, declared's scope/path/command)
    and the doctor's (runs, waits, blocked, guards, protection, warnings, works)."""
    init(project, offprompt, "zed", "gemini")
    trust_gemini(project)

    _, items = doctor_json(run, project)

    assert list(NAMES) == list(items)
    gemini = items["gemini"]
    assert {
        "name", "title", "found", "evidence", "declared", "problems", "guarded", "unguarded",
        "guards", "protection", "protection_why", "warnings", "works",
    } == set(gemini)  # fmt: skip
    assert {
        "scope": "project",
        "path": str(project / ".gemini" / "settings.json"),
        "command": [str(offprompt), "serve"],
        "runs": {
            "ok": True,
            "why": f"answers `{offprompt} --version`",
            "ran": [str(offprompt), "--version"],
            "version": "offprompt, version 9.9.9",
        },
        "waits": [],
        "blocked": None,
    } == gemini["declared"][0]
    assert (
        hook(project / ".gemini" / "settings.json", "BeforeTool") == gemini["guards"][0]["command"]
    )
    assert [{"scope": "project", "path": str(project / ".gemini" / "settings.json")}] == gemini[
        "guarded"
    ]
    assert ("guarded", True) == (gemini["protection"], gemini["works"])


def test_the_same_program_is_run_once(
    run: Run, project: Path, script: Make, tmp_path: Path
) -> None:
    """Server and guard naming one program (and two agents too) cost one run."""
    log = tmp_path / "runs.log"
    counting = script("offprompt", f"echo run >> {log}\necho 'offprompt, version 1'")
    init(project, counting, "gemini", "cursor")

    assert 0 == run("agents", "--project", str(project)).exit_code
    assert ["run"] == log.read_text().splitlines()


# -- Claude Code: approval of a project server, folder trust ---------------------------------------

TRUSTED = {"hasTrustDialogAccepted": True}
ENABLED = {"enabledMcpjsonServers": ["offprompt"]}
ALL = {"enableAllProjectMcpServers": True}
DISABLED = {"disabledMcpjsonServers": ["offprompt"]}


def claude_world(
    home: Path, project: Path, claude_json: dict[str, Any] | None, files: dict[str, Any]
) -> None:
    """~/.claude.json with `claude_json` as the project's entry, and settings files."""
    projects = {str(project): claude_json} if claude_json is not None else {}
    (home / ".claude.json").write_text(json.dumps({"projects": projects}))
    places = {
        "user": home / ".claude" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }
    for where, content in files.items():
        places[where].parent.mkdir(parents=True, exist_ok=True)
        places[where].write_text(json.dumps(content))


# The states `claude mcp list` (2.1.328) was seen to give for each; tests/real_hosts/
# test_doctor.py asks the real binary again.
CLAUDE_STATES = [
    ("nothing recorded", None, {}, ["folder-trust", "approval"], None),
    ("trusted, not approved", TRUSTED, {}, ["approval"], None),
    ("approved in settings.local.json", TRUSTED, {"local": ENABLED}, [], None),
    ("approved for all in .claude/settings.json", TRUSTED, {"project": ALL}, [], None),
    ("legacy approval in ~/.claude.json", {**TRUSTED, **ENABLED}, {}, [], None),
    ("user settings approve untrusted", None, {"user": ENABLED}, ["folder-trust"], None),
    ("local approval without trust", None, {"local": ENABLED}, ["folder-trust", "approval"], None),
    ("legacy approval without trust", ENABLED, {}, ["folder-trust", "approval"], None),
    ("declined in settings.local.json", TRUSTED, {"local": {**DISABLED, **ENABLED}}, [],
     "settings.local.json"),
    ("declined in user settings", TRUSTED, {"user": {**DISABLED, **ALL}}, [], "settings.json"),
    ("declined in ~/.claude.json", {**TRUSTED, **DISABLED}, {"user": ALL}, [], ".claude.json"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("claude_json", "files", "expected", "declined_in"),
    [case[1:] for case in CLAUDE_STATES],
    ids=[case[0] for case in CLAUDE_STATES],
)
def test_claude_code_approval_and_trust(
    run: Run,
    project: Path,
    home: Path,
    offprompt: Path,
    claude_json: dict[str, Any] | None,
    files: dict[str, Any],
    expected: list[str],
    declined_in: str | None,
) -> None:
    """What Claude Code still asks about the project's .mcp.json server; declined is exit 1."""
    init(project, offprompt, "claude-code")
    claude_world(home, project, claude_json, files)

    code, items = doctor_json(run, project)

    server = items["claude-code"]["declared"][0]
    assert expected == waits(server)
    if declined_in is None:
        assert (0, None) == (code, server["blocked"])
    else:
        assert 1 == code
        assert server["blocked"].startswith("you declined offprompt in Claude Code")
        assert f"{declined_in})" in server["blocked"]


def test_claude_code_user_server_waits_for_nothing(
    run: Run, project: Path, home: Path, offprompt: Path
) -> None:
    """A user-scope server needs no approval and is the same in every folder."""
    init(project, offprompt, "claude-code", scope="user")

    code, items = doctor_json(run, project)

    server = items["claude-code"]["declared"][0]
    assert (0, "user", []) == (code, server["scope"], waits(server))


def test_claude_code_trust_of_the_git_work_tree_counts(
    run: Run, tmp_path: Path, home: Path, offprompt: Path
) -> None:
    """Checked from a folder inside a repository, the repository's trust record is the one."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    sub = repo / "app"
    sub.mkdir()
    init(sub, offprompt, "claude-code")
    (home / ".claude.json").write_text(json.dumps({"projects": {str(repo): TRUSTED}}))

    _, items = doctor_json(run, sub)

    assert ["approval"] == waits(items["claude-code"]["declared"][0])


# -- Codex: folder trust, hook trust -------------------------------------------------------------

# What real Codex 0.169.0 reported as `currentHash` (its app-server's hooks/list) for these
# hooks; tests/real_hosts/test_doctor.py asks it again for the hook init writes.
RECORDED_HASHES = [
    (
        {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND[:-5] + "guard"}]},
        0,
        "sha256:89b429c78d07a2cf5943029361bae25a2a3712e2b22204212ed788dc8c503df3",
    ),
    (
        {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND[:-5] + "guard",
                                    "timeout": 10, "statusMessage": "checking"}]},
        0,
        "sha256:361748cd1a5e5f4f9613c76d779628242e97837bc573edfb24397a786c46ce34",
    ),
    (
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "x"},
                                      {"type": "command", "command": COMMAND[:-5] + "guard"}]},
        1,
        "sha256:9d7e66e894803ad8777ba2fdb9e7313447c79d4d2fbc97baa7e8678104dae13c",
    ),
    (
        {"hooks": [{"type": "command", "command": COMMAND[:-5] + "guard", "timeout": 0}]},
        0,
        "sha256:6a59d3159f4a40bee76c320e4a3152156196fcba1657b8dd611339d6ede1ee39",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("group", "handler", "expected"), RECORDED_HASHES)
def test_codex_hook_hash_is_the_one_codex_computes(
    group: dict[str, Any], handler: int, expected: str
) -> None:
    """The definition's hash matches Codex's own, timeout, status message and matcher included."""
    command = group["hooks"][handler]["command"]
    hook = host_waits.Hook(Path("/p/.codex/hooks.json"), "PreToolUse", 0, handler, group, command)

    assert expected == codex_hook_hash(hook)


def codex_world(project: Path, home: Path, trust: str | None, state: str = "") -> None:
    lines = []
    if trust is not None:
        lines += [f"[projects.{json.dumps(str(project))}]", f'trust_level = "{trust}"']
    (home / ".codex").mkdir(exist_ok=True)
    (home / ".codex" / "config.toml").write_text("\n".join(lines) + "\n" + state)


def hook_key(project: Path) -> str:
    return f"{project}/.codex/hooks.json:pre_tool_use:0:0"


def current_hash(project: Path) -> str:
    group = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]
    hook = host_waits.Hook(
        project / ".codex" / "hooks.json", "PreToolUse", 0, 0, group, group["hooks"][0]["command"]
    )
    return codex_hook_hash(hook)


def test_codex_untrusted_folder_ignores_the_project(
    run: Run, project: Path, home: Path, offprompt: Path
) -> None:
    """No trust record: server and guard wait for the folder's trust; the guard keeps nothing."""
    init(project, offprompt, "codex")
    codex_world(project, home, None)

    code, items = doctor_json(run, project)

    codex = items["codex"]
    assert (0, ["folder-trust"], ["folder-trust", "hook-trust"], "nothing") == (
        code,
        waits(codex["declared"][0]),
        waits(codex["guards"][0]),
        codex["protection"],
    )


def test_codex_folder_declined_is_exit_1(
    run: Run, project: Path, home: Path, offprompt: Path
) -> None:
    """trust_level = "untrusted": Codex ignores .codex/ here, so it would not work."""
    init(project, offprompt, "codex")
    codex_world(project, home, "untrusted")

    code, items = doctor_json(run, project)

    assert 1 == code
    assert items["codex"]["declared"][0]["blocked"].startswith("you told Codex not to trust")


@pytest.mark.parametrize(
    ("state", "expected_waits", "blocked", "protection"),
    [
        ("", ["hook-trust"], False, "nothing"),
        ('trusted_hash = "{hash}"', [], False, "guarded"),
        ('trusted_hash = "sha256:0000"', ["hook-trust"], False, "nothing"),
        ('trusted_hash = "{hash}"\nenabled = false', [], True, "nothing"),
    ],
    ids=["untrusted", "trusted", "changed since trusted", "turned off"],
)
def test_codex_hook_trust(
    run: Run,
    project: Path,
    home: Path,
    offprompt: Path,
    state: str,
    expected_waits: list[str],
    blocked: bool,
    protection: str,
) -> None:
    """The hook's `[hooks.state]` record in CODEX_HOME/config.toml: trusted (the definition's
    hash), untrusted, changed since trusted, turned off (exit 1)."""
    init(project, offprompt, "codex")
    record = f'[hooks.state."{hook_key(project)}"]\n' + state.format(hash=current_hash(project))
    codex_world(project, home, "trusted", record if state else "")

    code, items = doctor_json(run, project)

    guard = items["codex"]["guards"][0]
    assert (expected_waits, blocked, protection, 1 if blocked else 0) == (
        waits(guard),
        guard["blocked"] is not None,
        items["codex"]["protection"],
        code,
    )


def test_codex_hook_changed_since_trusted_says_so(
    run: Run, project: Path, home: Path, offprompt: Path
) -> None:
    """A command changed after the person trusted it: the wait says to trust it again."""
    init(project, offprompt, "codex")
    old = current_hash(project)
    codex_world(project, home, "trusted", f'[hooks.state."{hook_key(project)}"]\n'
                f'trusted_hash = "{old}"\n')  # fmt: skip
    hooks = project / ".codex" / "hooks.json"
    hook(hooks, command=f"{offprompt}  guard")
    assert old != current_hash(project)

    _, items = doctor_json(run, project)

    assert ["it changed since you trusted it, so Codex skips it: trust it again in /hooks"] == [
        w["detail"] for w in items["codex"]["guards"][0]["waits"]
    ]


def test_codex_user_hook_is_keyed_by_its_own_file(
    run: Run, project: Path, home: Path, offprompt: Path
) -> None:
    """The user hook (~/.codex/hooks.json) trusted under its own path: guarded, no waits."""
    init(project, offprompt, "codex", scope="user")
    hooks = home / ".codex" / "hooks.json"
    group = json.loads(hooks.read_text())["hooks"]["PreToolUse"][0]
    command = group["hooks"][0]["command"]
    digest = codex_hook_hash(host_waits.Hook(hooks, "PreToolUse", 0, 0, group, command))
    config = home / ".codex" / "config.toml"
    config.write_text(config.read_text() + f'\n[hooks.state."{hooks}:pre_tool_use:0:0"]\n'
                      f'trusted_hash = "{digest}"\n')  # fmt: skip

    code, items = doctor_json(run, project)

    codex = items["codex"]
    assert (0, [], "guarded") == (code, waits(codex["guards"][0]), codex["protection"])


def test_a_hook_command_string_is_shown_as_written(
    run: Run, project: Path, offprompt: Path
) -> None:
    """The guard's line shows the hook's command string as written; what runs is the guard's
    program (guard_install.guard_argv) with `--version` for `guard`."""
    init(project, offprompt, "gemini")

    _, items = doctor_json(run, project)

    guard = items["gemini"]["guards"][0]
    written = hook(project / ".gemini" / "settings.json", "BeforeTool")
    assert (written, [str(offprompt), "--version"]) == (
        guard["command"],
        guard["runs"]["ran"],
    )


def test_a_broken_codex_config_is_said_once(run: Run, project: Path, home: Path) -> None:
    """CODEX_HOME/config.toml that is not TOML: one line for it (read for the declaration and
    for the trust records alike), and exit 1."""
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(
        '[mcp_servers.offprompt]\ncommand = "/x/offprompt"\nargs = ["serve"]\n'
    )
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("[projects\n")

    code, items = doctor_json(run, project)

    (problem,) = items["codex"]["problems"]
    assert 1 == code
    assert problem.startswith("~/.codex/config.toml is not valid TOML")


def test_one_hook_under_several_events_is_one_guard(
    run: Run, project: Path, offprompt: Path
) -> None:
    """Cursor's hook sits under three events: one guard line, one `guarded by`."""
    init(project, offprompt, "cursor")

    result = run("agents", "--project", str(project))

    lines = result.stdout.splitlines()
    assert 1 == sum(line.startswith(f"{PAD}guard in ") for line in lines)
    assert f"{PAD}guarded by {project}/.cursor/hooks.json" in lines


def mcp_json(project: Path, command: str, *args: str) -> None:
    entry = {"command": command, "args": list(args)}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"offprompt": entry}}))


@pytest.mark.parametrize(
    ("words", "why"),
    [
        (["sh", "{evil}", "offprompt", "serve"], "sh is not offprompt, uvx, uv or pipx"),
        (["uvx", "--from", "./evil", "offprompt", "serve"], "./evil names a path or an address"),
        (["uvx", "--from", "git+https://example.invalid/x", "offprompt", "serve"],
         "git+https://example.invalid/x names a path or an address"),
        (["uv", "run", "offprompt", "serve"], "uv runs it only as `uv tool run`"),
        (["uvx", "--from", "evil-pkg", "offprompt", "serve"],
         "`uvx --from evil-pkg offprompt` is not a shape offprompt init writes"),
        (["uvx", "--with", "evil-pkg", "offprompt", "serve"],
         "`uvx --with evil-pkg offprompt` is not a shape offprompt init writes"),
        (["uv", "tool", "run", "--from", "evil-pkg", "offprompt", "serve"],
         "`uv tool run --from evil-pkg offprompt` is not a shape offprompt init writes"),
        (["pipx", "run", "--spec", "evil-pkg", "offprompt", "serve"],
         "`pipx run --spec evil-pkg offprompt` is not a shape offprompt init writes"),
        (["uvx", "offprompt-evil", "serve"], "offprompt-evil is not the offprompt package"),
        (["offprompt", "--evil", "serve"],
         "`offprompt --evil` is not a shape offprompt init writes"),
    ],
    ids=["a shell running a project file", "a local source", "a remote source", "uv run",
         "uvx from a package", "uvx with a package", "uv tool run from a package",
         "pipx with a spec", "a package named like offprompt", "an option before serve"],
)  # fmt: skip
def test_a_shared_file_gets_only_plain_commands_run(
    run: Run,
    project: Path,
    fake_program: Callable[[str], Path],
    words: list[str],
    why: str,
) -> None:
    """.mcp.json may come from anyone who can push: a command that would run code it names is
    not run (the person checks it), and nothing it names ran."""
    marker = project.parent / "ran"
    for name in ("sh", "uvx", "uv", "pipx", "offprompt"):
        fake_program(name).write_text(f"#!/bin/sh\n{TOUCH} {marker}\n")
    evil = project / "evil"
    evil.write_text(f"{TOUCH} {marker}\n")
    mcp_json(project, *(w.format(evil=evil) for w in words))

    code, items = doctor_json(run, project)

    runs = items["claude-code"]["declared"][0]["runs"]
    assert (0, None, False) == (code, runs["ok"], marker.exists())
    assert runs["why"].startswith(f"not run: {why}, and a file the project shares names it")


def test_a_shared_guard_hook_gets_only_plain_commands_run(
    run: Run, project: Path, fake_program: Callable[[str], Path]
) -> None:
    """A guard hook in the project's .claude/settings.json is held to the same shapes: `uvx
    --from evil-pkg offprompt guard` would fetch and run a package the file chose."""
    marker = project.parent / "ran"
    fake_program("uvx").write_text(f"#!/bin/sh\n{TOUCH} {marker}\n")
    command = "uvx --from evil-pkg offprompt guard"
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    group = {"matcher": "*", "hooks": [{"type": "command", "command": command}]}
    settings.write_text(json.dumps({"hooks": {"PreToolUse": [group]}}))

    _, items = doctor_json(run, project)

    (guard,) = items["claude-code"]["guards"]
    assert (None, False) == (guard["runs"]["ok"], marker.exists())
    assert guard["runs"]["why"].startswith(
        "not run: `uvx --from evil-pkg offprompt` is not a shape offprompt init writes"
    )


def test_a_shared_uvx_command_is_run_from_the_home_folder(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path], tmp_path: Path
) -> None:
    """`uvx offprompt serve` in .mcp.json runs as `uvx offprompt --version`, from HOME, so no
    uv configuration in the project steers what it fetches."""
    where = tmp_path / "cwd"
    fake_program("uvx").write_text(f'#!/bin/sh\npwd > {where}\necho "offprompt, version 2"\n')
    mcp_json(project, "uvx", "offprompt", "serve")

    code, items = doctor_json(run, project)

    runs = items["claude-code"]["declared"][0]["runs"]
    assert (0, True, "offprompt, version 2") == (code, runs["ok"], runs["version"])
    assert str(home) == where.read_text().strip()


def test_the_persons_own_config_runs_in_the_project(
    run: Run, project: Path, script: Make, tmp_path: Path
) -> None:
    """A user-scope command is the person's: it is run in the project, as the agent runs it."""
    where = tmp_path / "cwd"
    program = script("offprompt", f'pwd > {where}\necho "offprompt, version 3"')
    init(project, program, "cursor", scope="user")

    code, _ = doctor_json(run, project)

    assert (0, str(project)) == (code, where.read_text().strip())


# -- Gemini CLI: folder trust -----------------------------------------------------------------

# What `gemini mcp list` (0.61.0) was seen to say for each: tests/real_hosts/test_doctor.py asks
# the real binary again. {p} is the project, {up} its parent folder.
GEMINI_STATES = [
    ("no rule", {}, {}, "waits"),
    ("the folder trusted", {"{p}": "TRUST_FOLDER"}, {}, "trusted"),
    ("a parent trusted", {"{up}": "TRUST_FOLDER"}, {}, "trusted"),
    ("trusted as the parent of a sibling", {"{up}/other": "TRUST_PARENT"}, {}, "trusted"),
    ("the folder declined", {"{p}": "DO_NOT_TRUST"}, {}, "declined"),
    ("the longest rule wins", {"{up}": "TRUST_FOLDER", "{p}": "DO_NOT_TRUST"}, {}, "declined"),
    ("the longest rule wins the other way", {"{up}": "DO_NOT_TRUST", "{p}": "TRUST_FOLDER"}, {},
     "trusted"),
    ("folder trust off", {}, {"security": {"folderTrust": {"enabled": False}}}, "trusted"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("rules", "settings", "expected"),
    [case[1:] for case in GEMINI_STATES],
    ids=[case[0] for case in GEMINI_STATES],
)
def test_gemini_folder_trust(
    run: Run,
    project: Path,
    home: Path,
    offprompt: Path,
    rules: dict[str, str],
    settings: dict[str, Any],
    expected: str,
) -> None:
    """Gemini CLI runs nothing of ours (user configs included) in a folder it does not trust:
    a wait until the person answers, exit 1 once they declined."""
    init(project, offprompt, "gemini", scope="user")
    gemini = home / ".gemini"
    user = json.loads((gemini / "settings.json").read_text())
    (gemini / "settings.json").write_text(json.dumps({**user, **settings}))
    (gemini / "trustedFolders.json").write_text(
        json.dumps({k.format(p=project, up=project.parent): v for k, v in rules.items()})
    )

    code, items = doctor_json(run, project)

    found = [items["gemini"]["declared"][0], items["gemini"]["guards"][0]]
    said = {
        "waits": [["folder-trust"], ["folder-trust"]],
        "trusted": [[], []],
        "declined": [[], []],
    }[expected]
    assert said == [waits(f) for f in found]
    assert [expected == "declined"] * 2 == [f["blocked"] is not None for f in found]
    assert (1 if expected == "declined" else 0) == code
    assert ("guarded" if expected == "trusted" else "nothing") == items["gemini"]["protection"]


def test_gemini_trust_from_the_environment(
    run: Run, project: Path, offprompt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder, as Gemini CLI reads it."""
    init(project, offprompt, "gemini")
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")

    _, items = doctor_json(run, project)

    assert [] == waits(items["gemini"]["declared"][0])


def test_a_program_whose_interpreter_is_gone_does_not_run(script: Make, machine: Machine) -> None:
    """A script kept after its venv's Python went (a broken upgrade): it cannot start."""
    orphan = script("offprompt", "")
    orphan.write_text("#!/nowhere/venv/bin/python\nprint('offprompt')\n")

    check = version_check.run_checks([probe(orphan, machine)], machine)[probe(orphan, machine)]

    assert (False, f"`{orphan} --version` could not start: its interpreter"
            " /nowhere/venv/bin/python is gone") == (check.ok, check.why)  # fmt: skip


def test_a_link_left_by_an_uninstalled_tool_does_not_run(
    run: Run, project: Path, tmp_path: Path
) -> None:
    """pipx's or uv's link in ~/.local/bin whose tool was uninstalled: does not exist."""
    link = tmp_path / "bin" / "offprompt"
    link.parent.mkdir()
    link.symlink_to(tmp_path / "gone" / "bin" / "offprompt")
    init(project, link, "cursor")

    code, items = doctor_json(run, project)

    assert (1, f"{link} does not exist") == (code, items["cursor"]["declared"][0]["runs"]["why"])
