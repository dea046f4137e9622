"""The `offprompt` command line: click commands that glue the other modules together.

Exit codes: 0 ok, 1 error (one `offprompt: …` sentence on stderr, from `_fatal`), 2 usage.
"""

from __future__ import annotations

import json
import os
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click

from offprompt import __version__
from offprompt.hosts import AGENTS, NAMES, Agent, Change, ConfigError, Machine, Scope

# Help is laid out for 80 columns whatever the terminal, so it reads the same everywhere and
# README's copy of it can be checked word for word (tests/cli/test_cli_readme.py).
_CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 80, "terminal_width": 80}

# A .env this large is not a .env (the sinks refuse the same size).
_MAX_DOTENV_BYTES = 16 * 1024 * 1024


def _fatal(message: str) -> NoReturn:
    """Say what went wrong and what to do, on stderr, and exit 1."""
    click.echo(f"offprompt: {message}", err=True)
    raise SystemExit(1)


@click.group(
    context_settings=_CONTEXT,
    epilog="""\b
Start with `offprompt init` in your project folder, then ask your agent for a
key. Exit codes: 0 done, 1 error, 2 wrong usage.""",
)
@click.version_option(__version__, prog_name="offprompt")
def cli() -> None:
    """Let a coding agent ask you for secrets without the model seeing them.

    An agent asks offprompt (an MCP server) for API keys or database URLs; you
    type them on a page that opens in your browser; offprompt writes them to the
    project's .env and tells the agent only the key names and a four-emoji
    fingerprint, which the page shows too.
    """


@cli.command(short_help="Run the MCP server on stdin/stdout (agents start this).")
def serve() -> None:
    """Run the MCP server on stdin/stdout.

    Agent hosts start this themselves (`offprompt init` tells them how); it
    speaks MCP on stdin/stdout and logs to stderr.
    """
    raise SystemExit(_serve())


def _serve() -> int:
    from offprompt.mcp.stdio import run
    from offprompt.server_app import make_app

    return run(make_app)


# --- Agents' configs: init, remove, agents -----------------------------------------------------

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
    help="Your user configs (every project) instead of the project's.",
)
_no_guard_option = click.option(
    "--no-guard",
    is_flag=True,
    help="Leave the guard out: the hook that keeps the agent from reading .env.",
)
_project_option = click.option(
    "--project",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    metavar="DIR",
    help="The project folder.  [default: the current folder]",
)


def _scope_and_project(
    global_: bool, project: Path | None, machine: Machine
) -> tuple[Scope, Path | None]:
    if global_:
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
            _fatal(
                f"{folder} is your {'home' if not_a_project == machine.home else 'root'} folder,"
                " not a project. Run this in the project's folder, pass --project DIR, or add"
                " --global to change your user configs."
            )
    return "project", folder


def _line(change: Change) -> str:
    if change.outcome == "unsupported":
        return f"{change.agent}: skipped: {change.detail}"
    if change.outcome == "failed":
        return f"{change.agent}: failed: {change.detail}"
    return f"{change.agent}: {change.detail}"


@cli.command(
    short_help="Declare offprompt in your agents' configs.",
    epilog="""\b
Examples:
  offprompt init
  offprompt init --agent codex --agent cursor
  offprompt init --global --agent windsurf
  offprompt init --command 'uvx offprompt serve'""",
)
@_agent_option
@_global_option
@_project_option
@_no_guard_option
@click.option(
    "--command",
    metavar="TEXT",
    help="The command the agent runs to start offprompt, split like a shell"
    " would.  [default: this offprompt's absolute path and `serve`, or `uvx"
    " offprompt serve` when run by uvx]",
)
def init(
    agent_names: Sequence[str],
    global_: bool,
    project: Path | None,
    no_guard: bool,
    command: str | None,
) -> None:
    """Declare the offprompt MCP server in your agents' configs.

    Without --agent: every agent found on this machine (its program on PATH or
    its settings folder present; see `offprompt agents`). Writes the project's
    configs (.mcp.json, .codex/config.toml, .cursor/mcp.json, .vscode/mcp.json,
    .gemini/settings.json, .zed/settings.json) or, with --global, your user
    configs. Other servers, settings and comments stay as they are, and running
    it again changes nothing. Prints one line per agent: done, already there, or
    why not. Exits 1 if any config could not be changed.

    Unless --no-guard, also adds the guard where the agent has a hook for it, a
    hook running `offprompt guard` before each tool call, so the agent cannot read
    the secrets it asked for: .claude/settings.json (with deny rules for .env
    files), .codex/hooks.json, .gemini/settings.json, .cursor/hooks.json,
    .github/hooks/offprompt.json (VS Code), ~/.codeium/windsurf/hooks.json. Zed
    has no hooks.
    """
    from offprompt.hosts import command as server_command

    machine = Machine.current()
    scope, folder = _scope_and_project(global_, project, machine)
    if command is not None:
        try:
            server = server_command.from_override(command, machine)
        except ValueError as e:
            raise click.BadParameter(str(e), param_hint="--command") from None
    else:
        server = server_command.resolve(machine)
    agents = _chosen(agent_names, machine)
    changes = []
    for agent in agents:
        change = agent.install(scope, machine, folder, server)
        changes.append(change)
        click.echo(_line(change))
        if no_guard or change.outcome in ("failed", "unsupported"):
            continue
        guard = agent.install_guard(scope, machine, folder, server)
        unsupported = guard.outcome == "unsupported"
        click.echo(f"{agent.name}: {guard.detail}" if unsupported else _line(guard))
        if guard.failed:
            changes.append(guard)
    # An agent found on the machine but without a config for this scope is only skipped; one
    # the person named and that got nothing is a failure of what they asked for.
    if any(c.failed or (c.outcome == "unsupported" and agent_names) for c in changes):
        raise SystemExit(1)


def _chosen(agent_names: Sequence[str], machine: Machine) -> list[Agent]:
    if agent_names:
        return [a for a in AGENTS if a.name in agent_names]
    found = [a for a in AGENTS if a.presence(machine).found]
    if not found:
        _fatal(
            "no agent was found on this machine (see `offprompt agents`); name one with"
            f" --agent NAME ({', '.join(NAMES)})."
        )
    return found


@cli.command(
    short_help="Take offprompt out of your agents' configs.",
    epilog="""\b
Examples:
  offprompt remove
  offprompt remove --global --agent claude-code""",
)
@_agent_option
@_global_option
@_project_option
@_no_guard_option
def remove(agent_names: Sequence[str], global_: bool, project: Path | None, no_guard: bool) -> None:
    """Take the offprompt MCP server out of your agents' configs.

    Undoes `offprompt init` given the same options: only the offprompt entry
    goes; other servers, settings and comments stay, and a config file (or
    agent folder) left empty is deleted. Without --agent: every agent offprompt
    knows. Also takes out the guard `init` added, unless --no-guard. Exits 1
    if any config could not be changed.
    """
    machine = Machine.current()
    scope, folder = _scope_and_project(global_, project, machine)
    printed = failed = False
    for agent in AGENTS:
        named = agent.name in agent_names
        if agent_names and not named:
            continue
        change = agent.remove(scope, machine, folder)
        failed = failed or change.failed
        wanted = named or change.outcome in ("removed", "failed")
        if wanted or (change.outcome == "absent" and agent.presence(machine).found):
            click.echo(_line(change))
            printed = True
        if no_guard:
            continue
        guard = agent.remove_guard(scope, machine, folder)
        failed = failed or guard.failed
        if guard.outcome in ("removed", "failed"):
            click.echo(_line(guard))
            printed = True
    if not printed:
        where = "your user configs" if scope == "user" else f"the configs of {folder}"
        click.echo(f"offprompt is not declared in {where}; nothing to remove.")
    if failed:
        raise SystemExit(1)


@cli.command(short_help="List known agents, whether found, where offprompt is declared.")
@_project_option
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array instead.")
def agents(project: Path | None, as_json: bool) -> None:
    """List the agents offprompt knows, whether each is on this machine, where
    offprompt is declared, and whether the guard keeps .env from the agent.

    An agent is found when its program is on PATH or its settings folder
    exists. Looks at the project's configs (the current folder, or --project)
    and at your user configs; for each config declaring offprompt, shows the
    command the agent will run.
    """
    machine = Machine.current()
    folder = (project or Path.cwd()).resolve()
    # $HOME holds user configs, not a project's: a .mcp.json there is not a project declaration.
    scopes: tuple[Scope, ...] = (
        ("user",) if folder == machine.home.resolve() else ("project", "user")
    )
    report = []
    for agent in AGENTS:
        presence = agent.presence(machine)
        declared = []
        problems = []
        guarded: list[tuple[Scope, Path]] = []
        for scope in scopes:
            try:
                d = agent.declaration(scope, machine, folder)
                where = agent.guarded(scope, machine, folder)
            except ConfigError as e:
                problems.append(str(e))
                continue
            if d is not None:
                declared.append(d)
            if where is not None:
                guarded.append((scope, where))
        report.append((agent, presence, declared, problems, guarded))
    if as_json:
        items = [
            {
                "name": agent.name,
                "title": agent.title,
                "found": presence.found,
                "evidence": presence.evidence,
                "declared": [
                    {
                        "scope": d.scope,
                        "path": str(d.path),
                        "command": list(d.command) if d.command is not None else None,
                    }
                    for d in declared
                ],
                "problems": problems,
                "guarded": [{"scope": sc, "path": str(p)} for sc, p in guarded],
                "unguarded": agent.unguarded or None,
            }
            for agent, presence, declared, problems, guarded in report
        ]
        click.echo(json.dumps(items, indent=2, ensure_ascii=False))
        return
    width = max(len(n) for n in NAMES) + 2
    for agent, presence, declared, problems, guarded in report:
        state = "found" if presence.found else "not found"
        click.echo(f"{agent.name:<{width}}{state} ({presence.evidence})")
        for d in declared:
            runs = shlex.join(d.command) if d.command is not None else "(no command)"
            click.echo(f"{'':<{width}}declared in {machine.shown(d.path)}: {runs}")
        for _, where in guarded:
            click.echo(f"{'':<{width}}guarded by {machine.shown(where)}")
        if agent.unguarded and (declared or presence.found):
            click.echo(f"{'':<{width}}not guarded: {agent.unguarded}")
        elif declared and not guarded:
            click.echo(f"{'':<{width}}not guarded: run `offprompt init` to add the guard")
        for problem in problems:
            click.echo(f"{'':<{width}}{problem}")


# --- The journal and .env key names: fingerprints, keys ----------------------------------------


@cli.command(short_help="Show the writes offprompt made and their fingerprints.")
@click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Only writes into this project folder.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print a JSON array of {at, project, file, names, kept, fingerprint, client, request_id}.",
)
def fingerprints(project: Path | None, as_json: bool) -> None:
    """Show the writes offprompt made, newest first: when, project, file, key
    names, fingerprint and agent.

    Check that a fingerprint the agent reports matches the one the page showed
    you. Values are never recorded, so they are never shown. The journal is
    journal.jsonl in $OFFPROMPT_STATE_DIR, else in your user state folder.
    """
    from offprompt.journal import Journal

    journal = Journal()
    entries = journal.read()
    if project is not None:
        wanted = os.path.realpath(project)
        entries = [e for e in entries if os.path.realpath(e.project) == wanted]
    if as_json:
        click.echo(json.dumps([e.to_dict() for e in entries], indent=2, ensure_ascii=False))
        return
    if not entries:
        where = f" for {project}" if project is not None else ""
        click.echo(f"No writes recorded{where} (journal: {journal.path}).")
        return
    machine = Machine.current()
    rows = [("WHEN", "PROJECT", "FILE", "NAMES", "FINGERPRINT", "CLIENT")]
    for e in entries:
        names = ", ".join(n + (" (kept)" if n in e.kept else "") for n in e.names)
        rows.append(
            (
                e.at,
                machine.shown(Path(e.project)),
                e.file,
                names,
                e.fingerprint or "-",
                e.client or "-",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        cells = [cell.ljust(w) for cell, w in zip(row, widths, strict=False)]
        click.echo("  ".join([*cells, row[-1]]).rstrip())


@cli.command(short_help="Print the key names a .env file sets, never the values.")
@click.argument("file", type=click.Path(path_type=Path), default=".env")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of names instead.")
def keys(file: Path, as_json: bool) -> None:
    """Print the key names a .env file sets, one per line, never their values.

    FILE defaults to .env in the current folder. This is how an agent (or a
    script) sees what a .env holds without reading the secrets in it.
    """
    from offprompt.sinks import dotenv

    text = _read_dotenv(file)
    names = dotenv.keys(text)
    for line in dotenv.bad_lines(text):
        click.echo(
            f"offprompt: line {line} of {file} is not a KEY=value statement; skipped"
            " (python-dotenv skips it too).",
            err=True,
        )
    if as_json:
        click.echo(json.dumps(list(names)))
    else:
        for name in names:
            click.echo(name)


@cli.command(
    short_help="Say which keys a .env still needs, never the values.",
    epilog="""\b
Examples:
  offprompt status
  offprompt status config/.env.local
  offprompt status STRIPE_SECRET_KEY DATABASE_URL --json""",
)
@click.argument("args", nargs=-1, metavar="[FILE] [NAME...]")
@click.option("--json", "as_json", is_flag=True, help="Print the JSON secret_status answers.")
def status(args: tuple[str, ...], as_json: bool) -> None:
    """Say which keys are set, empty, missing or a placeholder in a .env file
    in this folder, never their values: the secret_status tool's answer.

    FILE defaults to .env; a first argument that looks like a key name
    (STRIPE_SECRET_KEY) is a NAME. Without NAME..., the keys are those of the
    example file beside FILE (.env.example, .env.sample, .env.template or
    .env.dist), else those FILE sets. A set key offprompt knows by name is
    checked against its provider's rules. Exit codes: 0 all set, 1 error, 2
    wrong usage, 4 something missing.
    """
    from offprompt import status as key_status
    from offprompt.errors import ProjectError, RefusedRequest, Unreadable

    file = ".env"
    names = list(args)
    if names and not key_status.looks_like_name(names[0]):
        file = names.pop(0)
    try:
        found = key_status.report(Path.cwd(), file, names or None)
    except RefusedRequest as e:
        raise click.UsageError(str(e).replace("The sink path", "FILE", 1)) from None
    except (ProjectError, Unreadable) as e:
        _fatal(str(e))
    if as_json:
        click.echo(json.dumps(found.to_json(), indent=2, ensure_ascii=False))
    else:
        for line in key_status.table(found):
            click.echo(line)
    raise SystemExit(4 if found.missing else 0)


def _read_dotenv(file: Path) -> str:
    try:
        # Read at most one byte past the limit: `keys /dev/stdin < .env` works, `keys /dev/zero`
        # stops instead of filling memory.
        with file.open("rb") as f:
            data = f.read(_MAX_DOTENV_BYTES + 1)
    except FileNotFoundError:
        _fatal(f"{file} does not exist; name the .env file to read (offprompt keys FILE).")
    except IsADirectoryError:
        _fatal(f"{file} is a folder; name the .env file inside it.")
    except OSError as e:
        _fatal(f"could not read {file} ({(e.strerror or type(e).__name__).lower()}).")
    if len(data) > _MAX_DOTENV_BYTES:
        _fatal(f"{file} is larger than 16 MiB; it is not a .env file.")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        _fatal(f"{file} is not UTF-8 text, so it is not a .env file offprompt can read.")


def _provider_pairs(values: Sequence[str]) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for value in values:
        name, sep, ref = value.partition("=")
        if not sep or not name or not ref:
            raise click.BadParameter(
                f"{value!r} is not NAME=REF, e.g. STRIPE_KEY=stripe/secret_key"
            )
        pairs[name] = ref
    return pairs


@cli.command(short_help="Ask for values on the page from a terminal and write them.")
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option(
    "--file",
    "file",
    default=".env",
    show_default=True,
    metavar="PATH",
    help="The .env file to write, relative to this folder.",
)
@click.option("--reason", metavar="TEXT", help="Why the values are needed, shown on the page.")
@click.option(
    "--provider",
    "providers",
    multiple=True,
    metavar="NAME=REF",
    help="Where a key comes from, e.g. STRIPE_KEY=stripe/secret_key (repeatable).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(1, 86400),
    metavar="S",
    help="Seconds to wait for the page (default 300, or OFFPROMPT_TTL).",
)
@click.option(
    "--also",
    "also",
    multiple=True,
    metavar="KIND[:OPT]",
    help="Also send to a platform this project is linked to: github[:ENVIRONMENT], "
    "vercel:ENV[,ENV] (production, preview, development), cloudflare[:ENV], fly "
    "(repeatable, at most 4).",
)
def collect(
    names: tuple[str, ...],
    file: str,
    reason: str | None,
    providers: tuple[str, ...],
    timeout: float | None,
    also: tuple[str, ...],
) -> None:
    """Open the page for NAME... in your browser and write what you type to
    the .env file in this folder, as an agent's request would.

    Prints the names written and `Fingerprint e1 e2 e3 e4`, the four emoji the
    page shows too. Exit codes: 0 written, 1 error, 2 wrong usage, 3 expired or
    cancelled (Ctrl-C cancels).
    """
    from offprompt import log, terminal
    from offprompt.errors import ProjectError, UsageProblem

    log.setup(default="warning")  # the page server's warnings, prefixed; not its info lines

    ask = terminal.CommandLine(
        names=names,
        file=file,
        reason=reason or terminal.CommandLine.reason,
        providers=_provider_pairs(providers),
        timeout=timeout,
        also=also,
    )
    try:
        terminal.check_usage(ask, Path.cwd())
    except UsageProblem as problem:
        raise click.UsageError(str(problem)) from None
    except ProjectError:
        pass  # not a usage error: `run` says so and exits 1
    raise SystemExit(terminal.run(ask, cwd=Path.cwd()))


@cli.command(short_help="The hook agents run before each tool call (reads stdin).")
def guard() -> None:
    """Judge one tool call for an agent's hook before the tool runs.

    Reads one hook event (JSON) on stdin: Claude Code's or Codex's PreToolUse,
    Gemini CLI's BeforeTool, Cursor's, VS Code's or Windsurf's. Exits 2 with one
    line on stderr when the call would read, print, copy, overwrite or send a
    .env file or a file offprompt wrote (the agent sees that line); exits 0
    otherwise. Cursor and Copilot also get the answer as JSON on stdout.
    `offprompt init` sets it up.
    """
    from offprompt.hosts.guard import main as guard_main

    raise SystemExit(guard_main())


def main() -> None:
    cli(prog_name="offprompt")
