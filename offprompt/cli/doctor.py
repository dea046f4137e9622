"""`offprompt agents`, the doctor: what offprompt.agents.doctor found about each agent, printed
for a person or as JSON; the package adds it to the command group."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click

from offprompt.agents import AGENTS, NAMES, Machine, doctor, guard_install, guard_start
from offprompt.agents.claude_code import SKILL_EVENT
from offprompt.cli.agents import project_option
from offprompt.cli.mask import record_path

__all__ = ["agents"]


@click.command(
    short_help="Check each agent: does offprompt start, is .env kept from it.",
    epilog="""\b
--json prints an array, one object per agent:
  name, title, found, evidence, problems (configs that cannot be read),
  declared: [{scope, path, command, runs, waits, blocked}],
  guards:   [{scope, path, command, runs, waits, blocked, fails_closed, events}],
  guarded:  [{scope, path}] (the files holding the guard's hook),
  unguarded (why the agent cannot be guarded, or null),
  protection ("masked", "guarded" or "nothing") and protection_why,
  warnings (what the agent's own settings allow that undoes the guard or the
  mask, such as Claude Code's bypassPermissions mode),
  works (false when something declared would not work).
runs is {ok, why, ran, version}: ok is true (answered --version), false (does
not run) or null (not checked, why says why); waits is [{for, detail}] with for
"approval", "folder-trust" or "hook-trust"; blocked says why the agent will not
run it (you turned it off, or an administrator's managed settings stop local
servers: Claude Code's disableLocalMcpServers), else null; fails_closed is false for a hook an
older init wrote, which lets calls through when offprompt cannot start; events
are the hook events that hold the guard (Claude Code 2.1.332 and later: also
PreSkillShellCommand, a skill's shell commands).

\b
Exit codes:
  0  everything declared works (it may still wait for you, or warn)
  1  something declared would not work, or a config cannot be read""",
)
@project_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead.")
def agents(project: Path | None, as_json: bool) -> None:
    """Check the agents offprompt knows: where offprompt is declared, whether
    the command each config names runs here, what the agent still waits for
    from you, and what keeps your values from its model.

    Looks at the project's configs (the current folder, or --project) and at
    your user configs. A command runs when its program resolves and answers
    `--version` within 5 seconds: the server's `... serve` and the guard's `...
    guard` are run with `--version` in place of their last word, all at once.
    One a project's shared files name (.mcp.json, .codex/, ...) is run only as
    offprompt, uvx, `uv tool run` or pipx with no path among its words, from
    your home folder; anything else there is shown, not run. The waits are
    Claude Code's approval of a project server and its folder trust, Codex's
    folder trust and its trust of the hook in /hooks, and Gemini CLI's folder
    trust. An agent is found when its program is on PATH or its settings
    folder exists.
    """
    machine = Machine.current()
    folder = (project or Path.cwd()).resolve()
    reports = doctor.examine(AGENTS, machine, folder, mask_record=record_path(machine))
    if as_json:
        click.echo(json.dumps([_report_json(r) for r in reports], indent=2, ensure_ascii=False))
    else:
        width = max(len(n) for n in NAMES) + 2
        for report in reports:
            for line in _report_lines(report, machine):
                click.echo(line if line.startswith(report.agent.name) else " " * width + line)
    if any(r.broken for r in reports):
        raise SystemExit(1)


def _report_lines(report: doctor.AgentReport, machine: Machine) -> list[str]:
    width = max(len(n) for n in NAMES) + 2
    agent, presence = report.agent, report.presence
    state = "found" if presence.found else "not found"
    lines = [f"{agent.name:<{width}}{state} ({presence.evidence})"]
    for f in report.servers:
        runs = shlex.join(f.command) if f.command is not None else "(no command)"
        lines.append(f"declared in {machine.shown(f.path)}: {runs}")
        lines.extend(_finding_lines(f))
    for f in report.guards:
        command = f.command[0] if f.command else ""
        # The hook's own words can be a long wrapper around the guard: show the guard's program.
        words = guard_install.guard_argv(command)
        program, fast = guard_start.shown(words) if words is not None else ((), False)
        shown = shlex.join(program) if words is not None else command
        if shown != command:
            shown += " (through a wrapper" + (
                ", started by its python with -I -S)" if fast else ")"
            )
        lines.append(f"guard in {machine.shown(f.path)}: {shown}")
        if SKILL_EVENT in f.events:
            lines.append(f"  also before a skill's shell commands ({SKILL_EVENT})")
        lines.extend(_finding_lines(f))
    if report.servers or report.guards or presence.found:
        if report.protection in ("guarded", "masked"):
            lines.append(report.protection_why)
        else:
            lines.append(f"not guarded: {report.protection_why}")
    lines.extend(f"warning: {w}" for w in report.warnings)
    lines.extend(report.problems)
    return lines


_MEND = (
    "to mend: reinstall offprompt and run `offprompt init` again, or `offprompt remove` to take"
    " it out"
)


def _finding_lines(f: doctor.Finding) -> list[str]:
    check = f.check
    if check.ok is True:
        lines = [f"  runs: {check.version}" if check.version else f"  runs: {check.why}"]
    elif check.ok is False and doctor.INSTALL in check.why:
        # A team's file on a machine without offprompt: installing it is the mend (not init).
        why, how = check.why.split(doctor.INSTALL, 1)
        lines = [f"  does not run: {why}", f"  to mend:{doctor.INSTALL[1:]}{how}"]
    elif check.ok is False:
        lines = [f"  does not run: {check.why}", f"  {_MEND}"]
    else:
        lines = [f"  {check.why}"]
    if f.blocked is not None:
        lines.append(f"  will not run: {f.blocked}")
    lines.extend(f"  waits for you: {w.detail}" for w in f.waits)
    if f.fails_open:
        lines.append(
            "  fails open: an older offprompt wrote this hook, which lets calls through when"
            " offprompt cannot start; run `offprompt init` again to update it"
        )
    return lines


def _finding_json(f: doctor.Finding) -> dict[str, object]:
    command: object
    if f.kind == "guard":
        command = f.command[0] if f.command else None
    else:
        command = list(f.command) if f.command is not None else None
    return {
        "scope": f.scope,
        "path": str(f.path),
        "command": command,
        "runs": {
            "ok": f.check.ok,
            "why": f.check.why,
            "ran": list(f.check.ran) if f.check.ran is not None else None,
            "version": f.check.version,
        },
        "waits": [{"for": w.kind, "detail": w.detail} for w in f.waits],
        "blocked": f.blocked,
        **(
            {"fails_closed": not f.fails_open, "events": list(f.events)}
            if f.kind == "guard"
            else {}
        ),
    }


def _report_json(report: doctor.AgentReport) -> dict[str, object]:
    agent = report.agent
    guarded = list(dict.fromkeys((g.scope, str(g.path)) for g in report.guards))
    return {
        "name": agent.name,
        "title": agent.title,
        "found": report.presence.found,
        "evidence": report.presence.evidence,
        "declared": [_finding_json(f) for f in report.servers],
        "problems": list(report.problems),
        "guarded": [{"scope": scope, "path": path} for scope, path in guarded],
        "unguarded": agent.unguarded or None,
        "guards": [_finding_json(f) for f in report.guards],
        "protection": report.protection,
        "protection_why": report.protection_why,
        "warnings": list(report.warnings),
        "works": not report.broken,
    }
