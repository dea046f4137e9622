"""`offprompt init` and `remove`: the agents' configs (offprompt.agents) as click commands,
glue only; the package adds them to the command group (`agents`, the doctor, is in doctor.py).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import click

from offprompt.agents import (
    AGENTS,
    NAMES,
    Agent,
    Change,
    ConfigError,
    Machine,
    Scope,
    ServerCommand,
    gitignore,
    guard_install,
)
from offprompt.agents import command as server_command
from offprompt.cli import mask as cli_mask
from offprompt.cli import setups as cli_setups
from offprompt.cli.base import fatal

__all__ = ["init", "project_option"]

_agent_option = click.option(
    "--agent",
    "agent_names",
    multiple=True,
    type=click.Choice(NAMES),
    metavar="NAME",
    help=f"Only this agent (repeatable): {', '.join(NAMES)}.",
)
_global_option = click.option(
    "--global",
    "global_",
    is_flag=True,
    help="Your user configs (every project) instead of this project's.",
)
_shared_option = click.option(
    "--shared",
    is_flag=True,
    help="The project's own files, for a team to commit (needs a command that runs on every"
    " teammate's machine).",
)
_no_guard_option = click.option(
    "--no-guard",
    is_flag=True,
    help="Leave the guard out: the hook that keeps the agent from reading .env.",
)
_mask_option = click.option(
    "--mask",
    is_flag=True,
    help="Also the mask, for this project: Claude Code's sandbox shows the commands the agent"
    " runs a stand-in for each value offprompt writes here, and puts the real one back on"
    " requests to its provider (Linux: needs bwrap and socat).",
)
project_option = click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="The project folder.  [default: the current folder]",
)


def _scope_and_project(
    global_: bool, shared: bool, project: Path | None, machine: Machine
) -> tuple[Scope, Path | None]:
    if global_:
        if shared:
            raise click.UsageError("--global and --shared do not go together.")
        if project is not None:
            raise click.UsageError("--global and --project do not go together.")
        return "user", None
    folder = (project or Path.cwd()).resolve()
    for not_a_project in (machine.home, Path(folder.anchor)):
        try:
            same = folder == not_a_project.resolve()
        except OSError:
            same = False
        if same:
            fatal(
                f"{folder} is your {'home' if not_a_project == machine.home else 'root'} folder,"
                " not a project. Run this in the project's folder, pass --project DIR, or add"
                " --global to change your user configs."
            )
    return ("project" if shared else "local"), folder


def _scope_for(agent: Agent, scope: Scope, machine: Machine, folder: Path | None) -> Scope:
    """The scope `agent` gets: its user config for the personal scope when it has none."""
    if scope == "local" and agent.location("local", machine, folder).path is None:
        return "user"
    return scope


def _line(change: Change, fallback: Agent | None = None) -> str:
    if change.outcome == "unsupported":
        return f"{change.agent}: skipped: {change.detail}"
    if change.outcome == "failed":
        return f"{change.agent}: failed: {change.detail}"
    if fallback is not None:
        return f"{change.agent}: {change.detail} ({fallback.no_local}: this is your user config)"
    return f"{change.agent}: {change.detail}"


_NOTHING: Final = " Nothing was changed."


def _failed_after(failure: Change, earlier: Sequence[Change], machine: Machine) -> str:
    """`failure`'s line; when earlier steps of this run changed files, it says which file the
    failed step left alone and what the run did change, instead of "Nothing was changed"."""
    done = [c.detail for c in earlier if c.outcome in ("added", "updated")]
    line = _line(failure)
    if not done:
        return line
    line = line.removesuffix(_NOTHING)
    left = f"{machine.shown(failure.path)} was not" if failure.path else "That step was not"
    return (
        f"{line} {left} changed, but this run {'; '.join(done)}, which stands"
        " without the guard until then (`offprompt remove` takes it out)."
    )


def _unmasked_after(agent: str, earlier: Sequence[Change | None], machine: Machine) -> None:
    """The mask's own line said why it failed (and that it changed nothing); say what this run
    did change before it, so "Nothing was changed" is not read as the whole run's."""
    done = [c.detail for c in earlier if c is not None and c.outcome in ("added", "updated")]
    if done:
        click.echo(
            f"{agent}: not masked, but this run {'; '.join(done)}: fix what the line above says"
            " and run this again to add the mask."
        )


# What --shared asks for instead of a command naming this machine (offprompt is not on PyPI:
# a bare `uvx offprompt` would run whatever someone publishes under that name).
_SHARED = (
    "such as --command 'offprompt serve' (each teammate installs offprompt) or --command"
    " 'uvx --from <where your team gets offprompt> offprompt serve', or leave out --shared"
    " to write your personal configs."
)


def _server(command: str | None, scope: Scope, machine: Machine) -> ServerCommand:
    """The command written: --command, or this offprompt's; for --shared, a portable one."""
    if command is not None:
        try:
            server = server_command.from_override(command, machine)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--command") from None
        if scope == "project":
            why = server_command.not_portable(server, machine)
            if why is not None:
                raise click.BadParameter(
                    f"{server} would not start on a teammate's machine: {why}. --shared writes"
                    f" files your team commits, so give a command that works everywhere, {_SHARED}",
                    param_hint="--command",
                )
        return server
    if scope != "project":
        return server_command.resolve(machine)
    portable = server_command.portable(machine)
    if portable is None:
        mine = server_command.resolve(machine)
        raise click.UsageError(
            f"--shared writes files your team commits, and this offprompt starts as {mine},"
            f" a path of this machine. Give a command that works on every teammate's machine,"
            f" {_SHARED}"
        )
    return portable


def _stale_shared(agent: Agent, machine: Machine, folder: Path | None) -> None:
    """Say so when the project's shared file (from an older init) still names this machine."""
    try:
        declared = agent.declaration("project", machine, folder)
    except ConfigError:
        return
    if declared is None or not declared.command:
        return
    found = ServerCommand(declared.command[0], declared.command[1:])
    if server_command.not_portable(found, machine) is None:
        return
    click.echo(
        f"{agent.name}: note: {machine.shown(declared.path)}, a file of the project that git"
        f" may commit, still declares offprompt as `{found}`, which names this machine;"
        " `offprompt remove --shared` takes it out"
    )


def _shared_user_entry(agent: Agent, machine: Machine, folder: Path, server: ServerCommand) -> None:
    """An agent whose one user-level entry serves every project (no personal project scope):
    say which other projects this init just changed it for."""
    others = cli_setups.others_using(machine, folder, agent)
    if others:
        more = f" and {len(others) - 1} more" if len(others) > 1 else ""
        click.echo(
            f"{agent.name}: note: that entry is also what {machine.shown(Path(others[0]))}{more}"
            f" uses, set up by offprompt before: they now start `{server}` too"
        )


def _may_change(agent: Agent, machine: Machine, folder: Path, server: ServerCommand) -> bool:
    """On a terminal, before init changes an agent's one user-level entry that other set-up
    projects use to start another command: ask (issue 46). A script (stdin no terminal) goes
    on, and `_shared_user_entry` says so after."""
    if not sys.stdin.isatty():
        return True
    try:
        declared = agent.declaration("user", machine, folder)
    except ConfigError:
        return True  # install says what is wrong with the file
    if declared is None or declared.command is None or tuple(declared.command) == server.argv():
        return True
    others = cli_setups.others_using(machine, folder, agent)
    if not others:
        return True
    more = f" and {len(others) - 1} more" if len(others) > 1 else ""
    now = " ".join(declared.command)
    click.echo(
        f"{agent.name}: its one user-level entry starts `{now}` for"
        f" {machine.shown(Path(others[0]))}{more} too, set up by offprompt before."
    )
    if click.confirm(f"{agent.name}: start `{server}` there instead: change it for them too?"):
        return True
    click.echo(
        f"{agent.name}: left as it is (`{now}`); run this again and answer yes, or with --yes,"
        " to change it"
    )
    return False


def _shared_serves(
    agent: Agent, machine: Machine, folder: Path | None, no_guard: bool
) -> str | None:
    """The project's shared file declaring offprompt for `agent` with a command that starts on
    any machine, and its guard (unless --no-guard): a personal init there would declare it
    twice (two servers, the guard run twice). None when the shared files do not serve."""
    try:
        declared = agent.declaration("project", machine, folder)
        guard = None if no_guard else guard_install.guarded(agent, "project", machine, folder)
    except ConfigError:
        return None
    if declared is None or not declared.command or (guard is None and not no_guard):
        return None
    found = ServerCommand(declared.command[0], declared.command[1:])
    if server_command.not_portable(found, machine) is not None:
        return None
    return machine.shown(declared.path)


def _ignore_private(agent: Agent, scope: Scope, folder: Path | None, machine: Machine) -> Change:
    """Make git ignore the agent's personal files inside the project, before they are written."""
    for path in agent.private_files(scope, folder):
        if folder is None:
            continue
        shown = machine.shown(path)
        try:
            exclude = gitignore.ensure_ignored(folder, path, shown)
        except ConfigError as e:
            return Change(agent.name, scope, path, "failed", str(e))
        if exclude is not None:
            click.echo(f"{agent.name}: git now ignores {shown} (a line in {exclude})")
    return Change(agent.name, scope, None, "unchanged", "")


@click.command(
    short_help="Declare offprompt in your agents' configs.",
    epilog="""\b
Examples:
  offprompt init
  offprompt init --agent codex --agent cursor
  offprompt init --shared --command 'offprompt serve'
  offprompt init --global --agent windsurf""",
)
@_agent_option
@_shared_option
@_global_option
@project_option
@_no_guard_option
@_mask_option
@click.option(
    "--command",
    metavar="TEXT",
    help="The command the agent runs to start offprompt, split like a shell"
    " would.  [default: this offprompt's absolute path and `serve`, or `uvx"
    " [--from SOURCE] offprompt serve` when run by uvx; with --shared,"
    " `offprompt serve` when that name on PATH is this offprompt]",
)
@click.option(
    "--yes",
    "-y",
    is_flag=True,
    help="Do not ask before changing a user-level entry other set-up projects use (on a"
    " terminal, init asks; a script's init goes on, saying so).",
)
def init(
    agent_names: Sequence[str],
    shared: bool,
    global_: bool,
    project: Path | None,
    no_guard: bool,
    mask: bool,
    command: str | None,
    yes: bool,
) -> None:
    """Declare the offprompt MCP server in your agents' configs.

    Without --agent: every agent found on this machine (its program on PATH or
    its settings folder present; see `offprompt agents`).

    By default each agent gets offprompt in its personal settings for this
    project, which nobody else gets from git: Claude Code in the project's
    entry of ~/.claude.json and in .claude/settings.local.json (git is made to
    ignore it, with a line in .git/info/exclude). An agent without personal
    project settings (Codex, Cursor, VS Code, Gemini CLI, Windsurf, Zed) gets
    your user config, and the line says so. Nothing left in the project names
    a path of this machine.

    --shared writes the project's own files for your team to commit instead
    (.mcp.json, .claude/settings.json, .codex/, .cursor/, .vscode/mcp.json,
    .github/hooks/, .gemini/settings.json, .zed/settings.json), with a command
    that starts offprompt on every teammate's machine (`offprompt serve`, or
    `uvx --from SOURCE offprompt serve` with where your team gets offprompt: it
    is not on PyPI, so a bare `uvx offprompt` would run whatever someone
    publishes under that name; a command naming a path of this machine is
    refused). --global writes your user configs.

    Other servers, settings and comments stay as they are, and running it
    again changes nothing. Prints one line per agent: done, already there, or
    why not. Exits 1 if any config could not be changed, 2 for a usage error.

    Unless --no-guard, also adds the guard where the agent has a hook for it,
    a hook running `offprompt guard` before each tool call, so the agent
    cannot read the secrets it asked for (Claude Code also gets deny rules for
    .env files). Zed has no hooks.

    --mask also turns on the mask for this project, where the agent's own
    sandbox can hold the values: Claude Code's commands then read a stand-in for
    each value offprompt writes here, and its proxy puts the real one back on
    requests to the key's provider (entries in ~/.claude/settings.json, the
    sandbox on in .claude/settings.local.json; the guard's deny rules are left
    out, the hook stops its file tools). Every later write keeps it exact.
    It is refused when offprompt lives inside the project (its .venv): the
    agent's commands may write there, and so change the guard.
    """

    machine = Machine.current()
    scope, folder = _scope_and_project(global_, shared, project, machine)
    if mask and folder is None:
        raise click.UsageError("--mask is for one project; leave out --global.")
    server = _server(command, scope, machine)
    agents = _chosen(agent_names, machine)
    if folder is not None:
        _writable_guard(server, machine, folder, mask, no_guard)
    if mask:
        cli_mask.check_machine(machine, agents)
    changes = []
    hooked = False
    team_notes: list[str] = []
    for agent in agents:
        here = _scope_for(agent, scope, machine, folder)
        fallback = agent if here != scope else None
        served = _shared_serves(agent, machine, folder, no_guard) if scope == "local" else None
        if served is not None and not mask:
            click.echo(
                f"{agent.name}: the project's shared files already declare offprompt and its"
                f" guard ({served}); nothing added for you"
            )
            continue
        if (
            here == "user"
            and folder is not None
            and not yes
            and not _may_change(agent, machine, folder, server)
        ):
            continue
        change = agent.install(here, machine, folder, server)
        changes.append(change)
        click.echo(_line(change, fallback))
        if here == "user" and folder is not None and change.outcome == "updated":
            _shared_user_entry(agent, machine, folder, server)
        if scope == "local":
            _stale_shared(agent, machine, folder)
        if change.outcome in ("failed", "unsupported"):
            continue
        unrecorded = None if folder is None else cli_setups.record(machine, folder, agent, here)
        if unrecorded is not None:
            click.echo(unrecorded)
            changes.append(Change(agent.name, here, None, "failed", unrecorded))
        masked = mask and agent.name in cli_mask.MASKABLE
        guard: Change | None = None
        if not no_guard:
            private = _ignore_private(agent, here, folder, machine)
            if private.failed:
                click.echo(_failed_after(private, [change], machine))
                changes.append(private)
                continue
            guard = guard_install.install_guard(agent, here, machine, folder, server, masked=masked)
            if guard.outcome == "unsupported":
                click.echo(f"{agent.name}: {guard.detail}")
            elif guard.failed:
                click.echo(_failed_after(guard, [change], machine))
            else:
                click.echo(_line(guard))
            if guard.failed:
                changes.append(guard)
                continue
            hooked = hooked or guard.outcome in ("added", "updated")
            if agent.team_note and guard.outcome in ("added", "updated"):
                team_notes.append(agent.team_note)
        if mask and not masked:
            click.echo(cli_mask.unmasked_line(agent))
        elif (
            masked
            and folder is not None
            and not cli_mask.turn_on(agent.name, folder, machine, no_guard)
        ):
            changes.append(Change(agent.name, here, None, "failed", "the mask"))
            _unmasked_after(agent.name, [change, guard], machine)
    if hooked:
        _hook_notes(server, scope)
    if scope == "project":
        for note in dict.fromkeys(team_notes):
            click.echo(f"note: {note}")
    # An agent found on the machine but without a config for this scope is only skipped; one
    # the person named and that got nothing is a failure of what they asked for.
    if any(c.failed or (c.outcome == "unsupported" and agent_names) for c in changes):
        raise SystemExit(1)


def _hook_notes(server: ServerCommand, scope: Scope) -> None:
    """What the hook just written costs or does beyond the lines above, said once (DESIGN §9):
    a source fetched before every tool call; a team's hook on a machine without offprompt."""
    source = server_command.fetched_each_run(server)
    if source is not None:
        click.echo(
            f"note: the guard's hook starts `{server.command} --from {source}` before every tool"
            " call, and uvx fetches a git source not pinned to a commit each time (seconds a"
            " call): pin one (`@<commit>`), or have offprompt installed (`uv tool install`) and"
            " give --command 'offprompt serve'"
        )
    if scope == "project":
        known = server_command.install_source(server)
        click.echo(
            "note: teammates without offprompt: the shared hook blocks only calls that name a"
            " .env file, saying to install offprompt"
            + (f" (`pipx install {known}`)" if known else "")
            + "; every other call runs"
        )


def _writable_guard(
    server: ServerCommand, machine: Machine, folder: Path, mask: bool, no_guard: bool
) -> None:
    """DESIGN §15 "the guard cannot be written away": an offprompt inside the project is one the
    agent's sandboxed commands may change (the guard's code with it). --mask is refused, before
    anything is changed; the guard alone goes on, said in one line."""
    where = server_command.inside_project(server, machine, folder)
    if where is None:
        return
    if mask:
        fatal(
            f"--mask refused: the command the guard's hook runs lives inside this project"
            f" ({where}), where the agent's sandboxed commands may write: one of them could change"
            " the guard (or offprompt itself) and the next read would show the values. Install"
            " offprompt outside the project (`uv tool install`, `pipx install`) or give --command"
            " one that lives elsewhere, then run this again. Nothing was changed."
        )
    if not no_guard:
        click.echo(
            f"note: offprompt runs from {where}, inside this project, where the agent's commands"
            " may write: one could change the guard; install offprompt outside the project to"
            " close that (`init --mask` refuses this)"
        )


def _chosen(agent_names: Sequence[str], machine: Machine) -> list[Agent]:
    if agent_names:
        return [a for a in AGENTS if a.name in agent_names]
    found = [a for a in AGENTS if a.presence(machine).found]
    if not found:
        fatal(
            "no agent was found on this machine (see `offprompt agents`); name one with"
            f" --agent NAME ({', '.join(NAMES)})."
        )
    return found
