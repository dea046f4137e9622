"""DESIGN §15 "What masked must mean", the parts init and the doctor own: an offprompt the
agent's sandbox may write is refused for `--mask`, and the settings that would let the agent turn
the guard or the mask off are said."""

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import COMMAND, snapshot
from click.testing import Result

from offprompt.configedit import jsonc

Run = Callable[..., Result]


@pytest.fixture
def sandbox_programs(fake_program: Callable[[str], Path]) -> None:
    """bwrap and socat on PATH: what init --mask looks for on Linux."""
    fake_program("bwrap")
    fake_program("socat")


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def init(run: Run, project: Path, command: str, *more: str) -> Result:
    return run(
        "init", "--agent", "claude-code", "--project", str(project), "--command", command, *more
    )


# -- the guard cannot be written away ------------------------------------------------------------


def test_init_mask_refuses_an_offprompt_in_the_projects_venv(
    run: Run, project: Path, home: Path, sandbox_programs: None
) -> None:
    """The project's `.venv/bin/offprompt`: one sandboxed command could patch the guard."""
    program = executable(project / ".venv" / "bin" / "offprompt")
    before = snapshot(home, project)

    result = init(run, project, f"{program} serve", "--mask")

    assert 1 == result.exit_code, result.output
    assert "--mask refused" in result.stderr
    assert str(program) in result.stderr
    assert "Install offprompt outside the project" in result.stderr
    assert "Nothing was changed" in result.stderr
    assert before == snapshot(home, project)


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_init_mask_refuses_a_bare_name_that_resolves_into_the_project(
    run: Run, project: Path, home: Path, no_agent_env: Path, sandbox_programs: None, agent: str
) -> None:
    """`offprompt serve` where the `offprompt` on PATH is a link to the project's venv."""
    program = executable(project / "tools" / "venv" / "bin" / "offprompt")
    os.symlink(program, no_agent_env / "offprompt")
    before = snapshot(home, project)

    command = ("--command", "offprompt serve")
    result = run("init", "--agent", agent, "--mask", "--project", str(project), *command)

    assert 1 == result.exit_code, result.output
    assert "--mask refused" in result.stderr
    assert before == snapshot(home, project)


def test_init_mask_refuses_a_script_run_by_the_projects_python(
    run: Run, project: Path, tmp_path: Path, sandbox_programs: None
) -> None:
    """A launcher outside whose `#!` is the project's Python runs code the project holds."""
    python = executable(project / ".venv" / "bin" / "python")
    program = executable(tmp_path / "bin" / "offprompt", f"#!{python}\nprint()\n")

    result = init(run, project, f"{program} serve", "--mask")

    assert 1 == result.exit_code, result.output
    assert f"({python})" in result.stderr


def test_init_mask_with_an_offprompt_outside_the_project_is_not_refused(
    run: Run, project: Path, sandbox_programs: None
) -> None:
    result = init(run, project, COMMAND, "--mask")

    assert (0, "") == (result.exit_code, result.stderr), result.output
    assert "refused" not in result.output
    assert "inside this project" not in result.output


def test_init_without_mask_installs_the_guard_and_says_the_risk_in_one_line(
    run: Run, project: Path
) -> None:
    program = executable(project / ".venv" / "bin" / "offprompt")

    result = init(run, project, f"{program} serve")

    assert 0 == result.exit_code, result.output
    said = [line for line in result.output.splitlines() if "inside this project" in line]
    assert [
        f"note: offprompt runs from {program}, inside this project, where the agent's commands"
        " may write: one could change the guard; install offprompt outside the project to close"
        " that (`init --mask` refuses this)"
    ] == said
    assert "claude-code: added the guard to" in result.output


def test_init_with_an_offprompt_outside_the_project_says_no_such_line(
    run: Run, project: Path
) -> None:
    result = init(run, project, COMMAND)

    assert 0 == result.exit_code, result.output
    assert "inside this project" not in result.output


# -- agents warns about bypassPermissions --------------------------------------------------------


def settings_file(where: str, home: Path, project: Path) -> Path:
    return {
        "user": home / ".claude" / "settings.json",
        "project": project / ".claude" / "settings.json",
        "local": project / ".claude" / "settings.local.json",
    }[where]


def set_mode(path: Path, mode: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"permissions": {"defaultMode": mode}}))


def claude_report(run: Run, project: Path) -> tuple[int, dict[str, object], str]:
    result = run("agents", "--project", str(project), "--json")
    report = next(r for r in json.loads(result.stdout) if r["name"] == "claude-code")
    text = run("agents", "--project", str(project)).stdout
    return result.exit_code, report, text


@pytest.mark.parametrize("where", ["user", "project", "local"])
def test_agents_warns_when_claude_code_may_change_its_own_settings(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path], where: str
) -> None:
    """bypassPermissions lets Claude Code write settings.local.json unasked: guard and mask off.
    A warning, not a failure: everything declared still runs (exit 0)."""
    fake_program("claude")
    path = settings_file(where, home, project)
    set_mode(path, "bypassPermissions")

    code, report, text = claude_report(run, project)

    shown = str(path).replace(str(home), "~")
    warning = (
        f'{shown} sets permissions.defaultMode to "bypassPermissions": Claude Code then changes'
        " its own settings without asking you, so it can turn the guard and the mask off; set"
        ' another mode there ("default" or "acceptEdits")'
    )
    assert 0 == code
    assert [warning] == report["warnings"]
    assert f"warning: {warning}" in text


def test_agents_follows_claude_codes_config_dir(
    run: Run,
    project: Path,
    tmp_path: Path,
    fake_program: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_program("claude")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude-config"))
    set_mode(tmp_path / "claude-config" / "settings.json", "bypassPermissions")

    _, report, _ = claude_report(run, project)

    assert 1 == len(report["warnings"])  # type: ignore[arg-type]


def test_a_project_mode_over_the_users_bypass_is_no_warning(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path]
) -> None:
    """The most specific settings file that sets a mode decides it, as in Claude Code."""
    fake_program("claude")
    set_mode(settings_file("user", home, project), "bypassPermissions")
    set_mode(settings_file("local", home, project), "acceptEdits")

    _, report, text = claude_report(run, project)

    assert [] == report["warnings"]
    assert "warning:" not in text


def test_without_bypass_agents_warns_nothing(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path]
) -> None:
    fake_program("claude")
    set_mode(settings_file("user", home, project), "default")

    code, report, text = claude_report(run, project)

    assert (0, []) == (code, report["warnings"])
    assert "warning:" not in text


@pytest.mark.parametrize(
    "network", [{"allowAllUnixSockets": True}, {"allowUnixSockets": ["/var/run/docker.sock"]}]
)
def test_agents_warns_of_unix_sockets_and_the_switches_in_a_sandboxed_project(
    run: Run, project: Path, home: Path, fake_program: Callable[[str], Path], network: object
) -> None:
    """The sandbox on for the mask: a settings file letting commands reach Unix sockets (a
    daemon opens files outside the sandbox) is named, and so are the command-line switches and
    the start folder that drop the mask (DESIGN §15, what masked means per session)."""
    fake_program("claude")
    local = settings_file("local", home, project)
    local.parent.mkdir(parents=True, exist_ok=True)
    local.write_text(json.dumps({"sandbox": {"enabled": True}}))
    user = settings_file("user", home, project)
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text(json.dumps({"sandbox": {"network": network}}))

    code, report, text = claude_report(run, project)

    warnings = report["warnings"]
    assert isinstance(warnings, list)
    (sockets,) = [w for w in warnings if "Unix sockets" not in w and "daemon" in w]
    assert sockets.startswith("~/.claude/settings.json sets sandbox.network.allowUnixSockets") or (
        sockets.startswith("~/.claude/settings.json sets sandbox.network.allowAllUnixSockets")
    )
    assert [] != [
        w for w in warnings if all(f in w for f in ("--settings", "--setting-sources", "--bare"))
    ]
    assert [] != [w for w in warnings if "session started in this folder" in w]
    assert 0 == code
    assert f"warning: {sockets}" in " ".join(text.split())


# -- Codex's sandbox_mode ------------------------------------------------------------------------


def init_codex_mask(run: Run, project: Path) -> Result:
    return run(
        "init", "--agent", "codex", "--mask", "--project", str(project), "--command", COMMAND
    )


def codex_why(run: Run, project: Path) -> str:
    result = run("agents", "--project", str(project), "--json")
    (codex,) = [r for r in json.loads(result.stdout) if r["name"] == "codex"]
    return str(codex["protection_why"])


def codex_text(run: Run, project: Path) -> Result:
    return run("agents", "--project", str(project))


def place(where: str, home: Path, project: Path) -> Path:
    return {
        "user": home / ".codex" / "config.toml",
        "profile file": home / ".codex" / "fast.config.toml",
        "project": project / ".codex" / "config.toml",
    }[where]


# Measured in real Codex (tests/real_hosts/test_codex_sandbox_sources.py): a `sandbox_mode` in
# a layer below the project's, or beside the profile in the project's own, leaves the profile.
@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("user", 'sandbox_mode = "workspace-write"\n'),
        ("user", '[profiles.fast]\nsandbox_mode = "danger-full-access"\n'),
        ("profile file", 'sandbox_mode = "danger-full-access"\n'),
        ("project", 'sandbox_mode = "read-only"\n'),
    ],
    ids=["user", "legacy profile", "profile file", "project"],
)
def test_codex_sandbox_mode_below_the_project_is_not_said(
    run: Run, project: Path, home: Path, where: str, text: str
) -> None:
    """Codex keeps the project's profile over a `sandbox_mode` in the user's configs or beside
    it: init and agents say the files are denied, with no line saying Codex ignores it."""
    path = place(where, home, project)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)

    result = init_codex_mask(run, project)

    assert 0 == result.exit_code, result.output
    assert "Codex ignores" not in result.output
    assert codex_why(run, project).startswith("denied, not masked:")


@pytest.fixture
def managed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Codex's /etc/codex/managed_config.toml, here a file of the test's own."""
    from offprompt.agents.codex import Codex

    path = tmp_path / "etc" / "codex" / "managed_config.toml"
    path.parent.mkdir(parents=True)
    monkeypatch.setattr(Codex.mask, "managed_config", path)
    return path


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ('sandbox_mode = "workspace-write"\n', "sandbox_mode"),
        ('default_permissions = ":workspace"\n', "default_permissions = ':workspace'"),
    ],
    ids=["sandbox_mode", "another profile"],
)
def test_codex_managed_config_choosing_another_sandbox_is_said_by_init_and_agents(
    run: Run, project: Path, managed: Path, text: str, what: str
) -> None:
    """The managed config is above the project's: its `sandbox_mode`, or another
    `default_permissions`, makes Codex ignore the profile; init notes it, agents says not
    denied."""
    managed.write_text(text)

    result = init_codex_mask(run, project)

    assert 0 == result.exit_code, result.output
    said = [line for line in result.output.splitlines() if "Codex ignores" in line]
    start = f"Codex ignores the permissions profile that denies the files: {what} in {managed}"
    assert [f"codex: note: {start}"] == [line[: len(start) + 13] for line in said]
    assert codex_why(run, project).startswith(f"not denied: {start}")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[allowed_permission_profiles]\n":workspace" = true\n', True),
        ('[allowed_permission_profiles]\n":workspace" = true\noffprompt = false\n', True),
        ('[allowed_permission_profiles]\n":workspace" = true\noffprompt = true\n', False),
        ('allowed_sandbox_modes = ["read-only", "workspace-write"]\n', False),
    ],
    ids=["left out", "refused", "allowed", "no allow-list"],
)
def test_codex_requirements_allow_list_without_our_profile_is_said(
    run: Run, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, said: bool
) -> None:
    """An administrator's `[allowed_permission_profiles]` refuses every profile it does not
    allow: Codex falls back to the required one, so agents says not denied."""
    from offprompt.agents.codex import Codex

    path = tmp_path / "etc" / "codex" / "requirements.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text)
    monkeypatch.setattr(Codex.mask, "requirements", path)

    result = init_codex_mask(run, project)

    assert 0 == result.exit_code, result.output
    assert ("Codex ignores" in result.output) is said
    why = codex_why(run, project)
    start = "not denied: Codex ignores the permissions profile that denies the files:"
    expected = f"{start} [allowed_permission_profiles] in {path} (without 'offprompt') makes it"
    assert why.startswith(expected) is said
    assert why.startswith("denied, not masked:") is not said


def test_codex_managed_config_choosing_our_profile_is_not_said(
    run: Run, project: Path, managed: Path
) -> None:
    """`sandbox_mode` beside `default_permissions = "offprompt"` in one layer: the profile."""
    managed.write_text('sandbox_mode = "read-only"\ndefault_permissions = "offprompt"\n')

    result = init_codex_mask(run, project)

    assert "Codex ignores" not in result.output
    assert codex_why(run, project).startswith("denied, not masked:")


COMMAND_LINE = "warning: Codex's command line can undo the mask, and offprompt cannot see it: "


def test_codex_agents_says_the_command_line_can_undo_the_mask(run: Run, project: Path) -> None:
    """A masked project: one warning line (a warning never fails agents) says that a sandbox
    chosen on Codex's command line (which no file shows) makes it ignore the profile."""
    assert 0 == init_codex_mask(run, project).exit_code

    result = codex_text(run, project)

    lines = [line.strip() for line in result.output.splitlines()]
    (said,) = [line for line in lines if line.startswith(COMMAND_LINE)]
    for flag in ("-s/--sandbox", "-c sandbox_mode=", "--dangerously-bypass-approvals-and-sandbox"):
        assert flag in said
    # Codex 0.171's own switches that replace the profile or the folder it applies to.
    for flag in ("--approve-for-me", "-p/--profile", "-C/--cd"):
        assert flag in said


def test_codex_agents_says_nothing_of_the_command_line_without_the_mask(
    run: Run, project: Path
) -> None:
    args = ("init", "--agent", "codex", "--project", str(project), "--command", COMMAND)
    assert 0 == run(*args).exit_code

    result = codex_text(run, project)

    assert COMMAND_LINE not in result.output


def test_codex_agents_names_a_subfolder_config_that_leaves_the_profile(
    run: Run, project: Path
) -> None:
    """Codex started in `apps/web` loads `apps/web/.codex/config.toml` above the project's:
    its `sandbox_mode` is named, beside the subfolder line every masked project gets."""
    assert 0 == init_codex_mask(run, project).exit_code
    below = project / "apps" / "web" / ".codex" / "config.toml"
    below.parent.mkdir(parents=True)
    below.write_text('sandbox_mode = "workspace-write"\n')

    result = run("agents", "--project", str(project), "--json")

    (codex,) = [r for r in json.loads(result.stdout) if r["name"] == "codex"]
    (said,) = [w for w in codex["warnings"] if w.startswith("Codex started in a subfolder")]
    assert said.endswith(f"; sandbox_mode in {below} makes it ignore the profile there")
    assert codex["protection_why"].startswith("denied, not masked:")


# -- PreSkillShellCommand where the host knows it ------------------------------------------------


def claude_at(bin_dir: Path, answer: str) -> None:
    """A `claude` on PATH whose `--version` says `answer`, as Claude Code's does."""
    executable(bin_dir / "claude", f"#!/bin/sh\necho '{answer}'\n")


def local_hooks(project: Path) -> dict[str, object]:
    data = jsonc.parse((project / ".claude" / "settings.local.json").read_text()).root.value
    hooks = data["hooks"]
    assert isinstance(hooks, dict)
    return hooks


def test_claude_code_2_1_328_gets_no_skill_event(
    run: Run, project: Path, no_agent_env: Path
) -> None:
    """Versions before 2.1.332 reject the name at start: nothing is added under it."""
    claude_at(no_agent_env, "2.1.328 (Claude Code)")

    result = init(run, project, COMMAND)

    assert 0 == result.exit_code, result.output
    assert ["PreToolUse"] == list(local_hooks(project))


def test_claude_code_without_a_version_gets_no_skill_event(run: Run, project: Path) -> None:
    """No `claude` to ask: left out, as an older host would refuse it."""
    result = init(run, project, COMMAND)

    assert 0 == result.exit_code, result.output
    assert ["PreToolUse"] == list(local_hooks(project))


def test_claude_code_2_1_332_gets_the_guard_before_a_skills_shell_commands_too(
    run: Run, project: Path, home: Path, no_agent_env: Path
) -> None:
    """The same hook under PreSkillShellCommand; `agents` shows it; `remove` gives back every
    byte, the person's own settings kept."""
    claude_at(no_agent_env, "2.1.332 (Claude Code)")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{\n  // mine\n  "hooks": {},\n  "model": "opus"\n}\n')
    before = snapshot(home, project)

    result = init(run, project, COMMAND)

    assert 0 == result.exit_code, result.output
    hooks = local_hooks(project)
    assert ["PreToolUse", "PreSkillShellCommand"] == list(hooks)
    assert hooks["PreToolUse"] == hooks["PreSkillShellCommand"]
    doctor = run("agents", "--project", str(project), "--json")
    (claude,) = [r for r in json.loads(doctor.stdout) if r["name"] == "claude-code"]
    assert [["PreToolUse", "PreSkillShellCommand"]] == [g["events"] for g in claude["guards"]]
    text = run("agents", "--project", str(project)).stdout
    assert "also before a skill's shell commands (PreSkillShellCommand)" in text

    removed = run("remove", "--agent", "claude-code", "--project", str(project))

    assert 0 == removed.exit_code, removed.output
    assert before == snapshot(home, project)


def test_remove_of_a_2_1_328_install_gives_back_every_byte(
    run: Run, project: Path, home: Path, no_agent_env: Path
) -> None:
    claude_at(no_agent_env, "2.1.328 (Claude Code)")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {}, "model": "opus"}\n')
    before = snapshot(home, project)

    assert 0 == init(run, project, COMMAND).exit_code
    removed = run("remove", "--agent", "claude-code", "--project", str(project))

    assert 0 == removed.exit_code, removed.output
    assert before == snapshot(home, project)


def test_init_after_a_downgrade_takes_the_skill_event_out(
    run: Run, project: Path, no_agent_env: Path
) -> None:
    """A host older than 2.1.332 refuses to start with the name: init takes ours out of it."""
    claude_at(no_agent_env, "2.1.332 (Claude Code)")
    assert 0 == init(run, project, COMMAND).exit_code
    claude_at(no_agent_env, "2.1.328 (Claude Code)")

    result = init(run, project, COMMAND)

    assert 0 == result.exit_code, result.output
    assert ["PreToolUse"] == list(local_hooks(project))
    assert "claude-code: updated the guard in" in result.output


def test_agents_says_when_claude_code_was_upgraded_past_the_guard(
    run: Run, project: Path, no_agent_env: Path
) -> None:
    """Installed at 2.1.328, run at 2.1.332: a skill's shell commands pass no guard until init
    runs again; at 2.1.328 nothing is said."""
    claude_at(no_agent_env, "2.1.328 (Claude Code)")
    assert 0 == init(run, project, COMMAND).exit_code
    _, before, _ = claude_report(run, project)
    claude_at(no_agent_env, "2.1.332 (Claude Code)")

    _, after, text = claude_report(run, project)

    assert [] == before["warnings"]
    settings = project / ".claude" / "settings.local.json"
    assert [
        f"the guard in {settings} is not under PreSkillShellCommand, which this Claude Code runs"
        " calls through: run `offprompt init` again to add it"
    ] == after["warnings"]
    assert f"warning: the guard in {settings} is not under PreSkillShellCommand" in text


@pytest.mark.parametrize("drop_in", [False, True], ids=["managed-settings.json", "a drop-in"])
def test_agents_warns_when_the_managed_settings_bypass_permissions(
    run: Run,
    project: Path,
    home: Path,
    tmp_path: Path,
    fake_program: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    drop_in: bool,
) -> None:
    """Managed settings (/etc/claude-code on Linux) outrank the person's own: their
    bypassPermissions puts every hook event's permission_mode at bypassPermissions (measured in
    Claude Code 2.1.332), whatever the project's settings say."""
    from offprompt.agents import claude_code

    fake_program("claude")
    managed = tmp_path / "etc-claude-code"
    monkeypatch.setitem(claude_code.MANAGED_FOLDERS, "linux", managed)
    path = managed / ("managed-settings.d/50-mode.json" if drop_in else "managed-settings.json")
    set_mode(path, "bypassPermissions")
    set_mode(settings_file("local", home, project), "default")

    _, report, _ = claude_report(run, project)

    assert [
        f'{path} sets permissions.defaultMode to "bypassPermissions": Claude Code then changes'
        " its own settings without asking you, so it can turn the guard and the mask off;"
        " whoever manages this machine can set another mode there"
    ] == report["warnings"]
