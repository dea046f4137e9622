"""`offprompt remove` (DESIGN §9 "Remove touches this project only"): what `init` added, taken out
of this project, or of every project offprompt set up (`--everywhere`), keeping an agent's user
config while another project relies on it (setups.py). Glue only, like agents.py.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

import click

from offprompt.agents import AGENTS, Agent, ConfigError, Machine, Scope, gitignore, guard_install
from offprompt.cli import mask as cli_mask
from offprompt.cli import setups as cli_setups
from offprompt.cli.agents import (
    _agent_option,
    _global_option,
    _line,
    _mask_option,
    _no_guard_option,
    _scope_and_project,
    _scope_for,
    _shared_option,
    project_option,
)
from offprompt.cli.base import fatal
from offprompt.disk import paths, undo

__all__ = ["remove"]

_keep_mask_option = click.option(
    "--keep-mask",
    is_flag=True,
    help="Leave the mask init --mask added for this project (and the git exclude line of a"
    " personal file it keeps).",
)


@click.command(
    short_help="Take offprompt out of your agents' configs.",
    epilog="""\b
Examples:
  offprompt remove
  offprompt remove --shared
  offprompt remove --global --agent claude-code
  offprompt remove --everywhere""",
)
@_agent_option
@_shared_option
@_global_option
@project_option
@_no_guard_option
@_mask_option
@_keep_mask_option
@click.option(
    "--everywhere",
    is_flag=True,
    help="Every project offprompt set up on this machine, then your user configs: what to run"
    " before uninstalling offprompt.",
)
def remove(
    agent_names: Sequence[str],
    shared: bool,
    global_: bool,
    project: Path | None,
    no_guard: bool,
    mask: bool,
    keep_mask: bool,
    everywhere: bool,
) -> None:
    """Take the offprompt MCP server out of your agents' configs.

    Undoes `offprompt init` given the same options (none: your personal
    settings for this project; --shared: the project's own files; --global:
    your user configs): only the offprompt entry goes; other servers, settings
    and comments stay, and a config file (or agent folder) left empty is
    deleted. Without --agent: every agent offprompt knows. Also takes out the
    guard `init` added, and the line it added to .git/info/exclude, unless
    --no-guard, and the mask init --mask and the writes added for this project
    unless --keep-mask. An agent whose offprompt lives in your user config
    (Codex, Cursor, …) keeps it while another project offprompt set up uses it.
    --everywhere does this for every project offprompt set up on this machine,
    then for your user configs. Exits 1 if any config could not be changed.
    """
    machine = Machine.current()
    if everywhere:
        if global_ or shared or project is not None or agent_names:
            raise click.UsageError(
                "--everywhere takes no --global, --shared, --project or --agent."
            )
        _remove_everywhere(machine, no_guard)
        return
    if mask and keep_mask:
        raise click.UsageError("--mask and --keep-mask do not go together.")
    scope, folder = _scope_and_project(global_, shared, project, machine)
    if mask and folder is None:
        raise click.UsageError("--mask is for one project; leave out --global.")
    printed, failed = _remove(machine, scope, folder, agent_names, no_guard, keep_mask)
    if not printed:
        where = {
            "user": "your user configs",
            "project": f"the shared configs of {folder}",
            "local": f"your configs for {folder}",
        }[scope]
        click.echo(f"offprompt is not declared in {where}; nothing to remove.")
    if failed:
        raise SystemExit(1)


def _remove_everywhere(machine: Machine, no_guard: bool) -> None:
    """Say every project offprompt set up, then take out each, then the user configs."""
    try:
        found = cli_setups.everything(machine)
    except ConfigError as e:
        fatal(
            f"{e}; nothing was changed. Take offprompt out of each project with `offprompt remove`."
        )
    places = list(dict.fromkeys((Path(s.project), s.scope) for s in found if s.scope != "user"))
    places += [(Path(s.project), "local") for s in found if s.scope == "user"]
    places = list(dict.fromkeys(places))
    click.echo(
        f"offprompt remove --everywhere: {len({p for p, _ in places})} project(s) offprompt set"
        " up, then your user configs:"
    )
    for where, scope in places:
        click.echo(f"  {machine.shown(where)}{' (shared files)' if scope == 'project' else ''}")
    failed = False
    kept: list[Path] = []
    for where, scope in places:
        if not where.is_dir():
            click.echo(f"{machine.shown(where)}: skipped: the folder is gone")
            cli_setups.forget(machine, where, [a.name for a in AGENTS])
            continue
        # A team's files git tracks are the team's: taking them out here would take offprompt
        # (and its guard) from every teammate at the next `git commit -a`.
        team = _committed(machine, where) if scope == "project" else {}
        kept += [path for paths in team.values() for path in paths]
        cli_setups.forget(machine, where, list(team))
        failed = _remove(machine, scope, where, (), no_guard, False, keep=set(team))[1] or failed
    failed = _remove(machine, "user", None, (), no_guard, False)[1] or failed
    if not kept and not failed:
        # No mask of ours is left that could deny the undo records' folder (a team's file
        # kept above may hold one): it goes too, when empty.
        state = cli_mask.record_path(machine).parent
        undo.remove_records_if_empty(state)
        paths.remove_folder_if_empty(state)  # made by init for them, and now empty
    if kept:
        click.echo(
            "committed team files, not touched: run `offprompt remove --shared` in that project"
            " to take them out"
        )
        for path in kept:
            click.echo(f"  {machine.shown(path)}")
    if failed:
        raise SystemExit(1)


def _team_files(agent: Agent, machine: Machine, folder: Path) -> list[Path]:
    """The project's own files `init --shared` writes for `agent` (its entry, its hook)."""
    paths = [agent.location("project", machine, folder).path]
    guard = agent.guard_file("project", machine, folder)
    paths.append(guard.path if guard is not None else None)
    return [p for p in paths if p is not None]


def _committed(machine: Machine, folder: Path) -> dict[str, list[Path]]:
    """Each agent whose shared files in `folder` git tracks, with those files."""
    out: dict[str, list[Path]] = {}
    for agent in AGENTS:
        found = gitignore.tracked(folder, _team_files(agent, machine, folder))
        if found:
            out[agent.name] = found
    return out


def _remove(
    machine: Machine,
    scope: Scope,
    folder: Path | None,
    agent_names: Sequence[str],
    no_guard: bool,
    keep_mask: bool,
    *,
    keep: Collection[str] = (),
) -> tuple[bool, bool]:
    """`remove` in one scope, leaving the agents named in `keep` as they are: (whether a line
    was said, whether anything failed)."""
    printed = failed = False
    committed = _committed(machine, folder) if scope == "project" and folder else {}
    taken: list[Path] = []
    for name in cli_mask.MASKABLE if not keep_mask else ():
        if folder is not None and scope == "local" and (not agent_names or name in agent_names):
            # First, while settings.local.json is still one git ignores.
            said = cli_mask.turn_off_if_on(name, folder, machine)
            failed = failed or said is False
            printed = printed or said is not None
    gone = []
    for agent in AGENTS:
        named = agent.name in agent_names
        if (agent_names and not named) or agent.name in keep:
            continue
        here = _scope_for(agent, scope, machine, folder)
        kept = (
            None
            if folder is None or here != "user"
            else cli_setups.user_kept(machine, folder, agent)
        )
        if kept is not None:
            if named or agent.presence(machine).found:
                click.echo(f"{agent.name}: kept in your user config: {kept}")
                printed = True
            gone.append(agent.name)
            continue
        fallback = agent if here != scope else None
        change = agent.remove(here, machine, folder)
        failed = failed or change.failed
        if not change.failed:
            gone.append(agent.name)
        if change.outcome == "removed":
            taken += [p for p in committed.get(agent.name, ()) if p == change.path]
        wanted = named or change.outcome in ("removed", "failed")
        if wanted or (change.outcome == "absent" and agent.presence(machine).found):
            click.echo(_line(change, fallback))
            printed = True
        if no_guard:
            continue
        guard = guard_install.remove_guard(agent, here, machine, folder)
        failed = failed or guard.failed
        if guard.outcome == "removed":
            taken += [p for p in committed.get(agent.name, ()) if p == guard.path]
        if guard.outcome in ("removed", "failed"):
            click.echo(_line(guard))
            printed = True
        if guard.failed or folder is None:
            continue
        for path in agent.private_files(here, folder):
            said, broke = _release(agent, folder, path, machine, keep_mask)
            printed, failed = printed or said, failed or broke
    if taken:
        click.echo(
            f"note: git tracks {', '.join(machine.shown(p) for p in taken)}: these are your"
            " team's committed files; committing this change takes offprompt and its guard"
            " away from every teammate"
        )
        printed = True
    if folder is not None:
        cli_setups.forget(machine, folder, gone)
    elif scope == "user":
        cli_setups.forget_user(
            machine, [a.name for a in AGENTS if not agent_names or a.name in agent_names]
        )
    return printed, failed


def _release(
    agent: Agent, folder: Path, path: Path, machine: Machine, keep_mask: bool
) -> tuple[bool, bool]:
    """Take `path`'s line out of .git/info/exclude, unless the personal file is still there
    (then git would offer it for commit): (said, failed)."""
    if path.exists():
        if keep_mask:
            click.echo(
                f"{agent.name}: kept {machine.shown(path)} and its line in .git/info/exclude"
                " (the mask is still on)"
            )
            return True, False
        return False, False
    try:
        exclude = gitignore.release(folder, path, machine.shown(path))
    except ConfigError as e:
        click.echo(f"{agent.name}: failed: {e}")
        return True, True
    if exclude is not None:
        click.echo(f"{agent.name}: took {machine.shown(path)} out of {exclude}")
        return True, False
    return False, False
