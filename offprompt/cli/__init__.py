"""The `offprompt` command line: click commands that glue the other modules together; the
agents' commands are in agents.py (init), remove.py (remove) and doctor.py (agents), beside it.

Exit codes: 0 ok, 1 error (one `offprompt: …` sentence on stderr, from `fatal`), 2 usage (guard:
blocked), 3 collect's request expired or cancelled, 4 status found a key missing; the top-level
help lists them all.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import NoReturn

import click

from offprompt import __version__
from offprompt.cli import agents as cli_agents
from offprompt.cli import doctor as cli_doctor
from offprompt.cli import remove as cli_remove
from offprompt.cli.base import CONTEXT, fatal

# A .env this large is not a .env (the sinks refuse the same size).
_MAX_DOTENV_BYTES = 16 * 1024 * 1024


@click.group(
    context_settings=CONTEXT,
    epilog="""\b
Start with `offprompt init` in your project folder, then ask your agent for a
key.

\b
Exit codes:
  0  done (collect: written; status: every key set)
  1  error: one `offprompt: ...` line on stderr says what to do
  2  wrong usage (guard: the tool call is blocked)
  3  collect: the request expired or was cancelled
  4  status: a key is missing, empty or a placeholder""",
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
    speaks MCP on stdin/stdout and logs to stderr. Started on a terminal, it
    says so in one line on stderr and serves all the same.
    """
    raise SystemExit(_serve())


def _serve() -> int:
    from offprompt.mcp.stdio import run
    from offprompt.tools.app import make_app

    return run(make_app)


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
    help="Print a JSON array of {at (UTC), project, file, names, kept, fingerprint,"
    " client, request_id}.",
)
def fingerprints(project: Path | None, as_json: bool) -> None:
    """Show the writes offprompt made, newest first: when (in local time),
    project, file, key names, fingerprint and agent.

    Check that a fingerprint the agent reports matches the one the page showed
    you. Values are never recorded, so they are never shown. The journal is
    journal.jsonl in $OFFPROMPT_STATE_DIR, else in your user state folder.
    """
    from offprompt.write.journal import Journal

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
    from offprompt.agents import Machine
    from offprompt.table import lines, local_time

    machine = Machine.current()
    rows = [("LOCAL TIME", "PROJECT", "FILE", "NAMES", "FINGERPRINT", "CLIENT")]
    for e in entries:
        refused = {n for n, status in e.checked if status == "rejected"}
        names = ", ".join(
            n
            + (" (kept)" if n in e.kept else "")
            + (" (refused by its provider)" if n in refused else "")
            for n in e.names
        )
        rows.append(
            (
                local_time(e.at),
                machine.shown(Path(e.project)),
                e.file,
                names,
                e.fingerprint or "-",
                e.client or "-",
            )
        )
    for line in lines(rows):
        click.echo(line)


def _keyring_names(as_json: bool) -> None:
    """`keys --keyring`: the names offprompt saved in the keyring, from its own list (DESIGN
    §13.2); the keyring itself is not opened, so no value is ever read here."""
    from offprompt import oskeyring

    names = oskeyring.saved_names()
    if as_json:
        click.echo(json.dumps(list(names)))
        return
    if not names:
        click.echo(
            "offprompt: no key saved in your keyring yet; `--also keyring` saves one.", err=True
        )
    for name in names:
        click.echo(name)


def _store_names(as_json: bool) -> None:
    """`keys --stores`: each place `also` sent this project's values (a team's store, the
    keyring, a platform), by kind and target as the page showed it, with the names sent there,
    from the journal (DESIGN §13.1): no store is opened, so no value is ever read here."""
    from offprompt.write.journal import Journal

    here = os.path.realpath(Path.cwd())
    sent: dict[tuple[str, str], list[str]] = {}
    for e in reversed(Journal().read()):  # oldest first: names in the order they were sent
        if os.path.realpath(e.project) != here:
            continue
        for kind, target, status in e.destinations:
            if status == "sent":
                names = sent.setdefault((kind, target), [])
                names.extend(n for n in e.names if n not in e.kept and n not in names)
    if as_json:
        shown = [{"kind": k, "target": t, "names": n} for (k, t), n in sent.items()]
        click.echo(json.dumps(shown, ensure_ascii=False))
        return
    if not sent:
        click.echo("offprompt: nothing from this project was sent to a store yet.", err=True)
    for (kind, target), names in sent.items():
        click.echo(f"{kind} {target}: {', '.join(names)}")


@cli.command(short_help="Print the key names a .env file sets, never the values.")
@click.argument("file", type=click.Path(path_type=Path), default=".env")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON array of names instead.")
@click.option(
    "--keyring",
    "in_keyring",
    is_flag=True,
    help="Print the names offprompt saved in your OS keyring instead (names only).",
)
@click.option(
    "--stores",
    "in_stores",
    is_flag=True,
    help="Print each store (or platform) `also` sent this project's values to, with the names"
    " sent there, instead (names only).",
)
def keys(file: Path, as_json: bool, in_keyring: bool, in_stores: bool) -> None:
    """Print the key names a .env file sets, one per line, never their values.

    FILE defaults to .env in the current folder; with no .env there yet, it
    prints nothing and exits 0. FILE must be a file inside this folder's project,
    as for `offprompt status`. This is how an agent (or a script) sees what a .env
    holds without reading the secrets in it. With --keyring, it prints the names
    offprompt saved in your OS keyring (`--also keyring`) instead, from its own
    list: the keyring is not opened. With --stores, it prints each team store
    (or platform) `also` sent this project's values to and the names sent there,
    from the journal: no store is opened. Exit codes: 0 done, 1 error, 2 wrong
    usage.
    """
    from offprompt import status as key_status
    from offprompt.errors import Unreadable

    if in_keyring and in_stores:
        _wrong_usage("--keyring and --stores cannot be used together.")
    if in_keyring:
        _keyring_names(as_json)
        return
    if in_stores:
        _store_names(as_json)
        return
    if file == Path(".env") and not os.path.lexists(file):
        # A project before its first key: nothing to list, which is not an error.
        click.echo(
            "offprompt: no .env in this folder yet, so no keys; `offprompt collect NAME`"
            " (or an agent's collect_secret) writes one.",
            err=True,
        )
        if as_json:
            click.echo("[]")
        return
    target, data = _read_dotenv(file)
    try:  # what status shows of the file: the same function, rules and time limit
        shown = key_status.how_shown(target, data, str(file))
    except Unreadable as e:
        fatal(str(e))
    if shown.read is None:
        # Never a name from inside a value (DESIGN §12): such a "name" is a stretch of it.
        click.echo(f"offprompt: {file} shows no key names: {shown.whole}.", err=True)
        click.echo("[]" if as_json else "", nl=as_json)
        return
    parsed = shown.read
    names = parsed.keys
    for line in parsed.bad_lines:
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
    (STRIPE_SECRET_KEY) is a NAME, and a lower-case one that is no file here
    is refused as a misspelt NAME. Without NAME..., the keys are those of the
    example file beside FILE (.env.example, .env.sample, .env.template or
    .env.dist), else those FILE sets. A set key offprompt knows by name is
    checked against its provider's rules. Exit codes: 0 all set, 1 error, 2
    wrong usage, 4 something missing.
    """
    from offprompt import status as key_status
    from offprompt.errors import ProjectError, RefusedRequest, Unreadable
    from offprompt.names import MAX_NAME_LENGTH

    file = ".env"
    names = list(args)
    if names and not key_status.looks_like_name(names[0]):
        word = names[0]
        # Only a word that upper-cased is a name a request may hold (DESIGN §3.1, ≤128): a
        # longer one is a FILE, refused below as too long.
        if (
            key_status.looks_like_name(word.upper())
            and len(word) <= MAX_NAME_LENGTH
            and not os.path.lexists(word)
        ):
            _wrong_usage(
                f"{word!r} is not a file here, and key names are upper case:"
                f" did you mean {word.upper()}?"
            )
        file = names.pop(0)
    try:
        found = key_status.report(Path.cwd(), file, names or None)
    except RefusedRequest as e:
        # One line, exit 2: a name or FILE offprompt refuses, however long it is.
        _wrong_usage(str(e).replace("The sink path", "FILE", 1))
    except (ProjectError, Unreadable) as e:
        fatal(str(e))
    if as_json:
        click.echo(json.dumps(found.to_json(), indent=2, ensure_ascii=False))
    else:
        for line in key_status.table(found):
            click.echo(line)
    raise SystemExit(4 if found.missing else 0)


def _wrong_usage(message: str) -> NoReturn:
    """A refused argument: one line on stderr, exit 2 (DESIGN §9)."""
    click.echo(f"offprompt: {message}", err=True)
    raise SystemExit(2)


def _read_dotenv(file: Path) -> tuple[Path, bytes]:
    """The file `file` resolves to and its bytes, found inside this folder's project the way
    `status` finds it and read by a walk from the project's folder: a path outside it
    (`../other/.env`, `/proc/self/environ`, a link out) is refused as `status` refuses it, a
    FIFO or a device at once, without a read."""
    from offprompt.disk import walk
    from offprompt.errors import ProjectError, RefusedRequest, WriteError
    from offprompt.sinks import atomic, paths
    from offprompt.spec import SinkSpec

    if atomic.is_staged(file):
        fatal(f"{file} {atomic.STAGED_REFUSAL}.")
    project = Path.cwd()
    try:
        root = paths.real_project(project)
        target = paths.resolve_target(project, SinkSpec(kind="dotenv", path=str(file)))
    except RefusedRequest as e:
        if _is_folder_inside(project, file):
            fatal(f"{file} is a folder; name the .env file inside it.")
        _wrong_usage(str(e).replace("The sink path", "FILE", 1))
    except ProjectError as e:
        fatal(str(e))
    try:
        folder = atomic.reach_parent(root, target, str(file), unreadable=True)
    except WriteError as e:
        fatal(str(e).split("; offprompt never", 1)[0] + ".")
    data = None
    if folder is not None:
        with folder:
            try:
                data = folder.read(target.name, _MAX_DOTENV_BYTES)
            except walk.NotRegular:
                fatal(f"{file} is not a regular file; name the .env file to read.")
            except walk.TooLarge:
                fatal(f"{file} is larger than 16 MiB; it is not a .env file.")
            except OSError as e:
                if e.errno == errno.ENAMETOOLONG:
                    _wrong_usage(
                        "FILE is a path longer than this file system allows; name another file."
                    )
                fatal(f"could not read {file} ({(e.strerror or type(e).__name__).lower()}).")
    if data is None:
        fatal(f"{file} does not exist; name the .env file to read (offprompt keys FILE).")
    return target, data


def _is_folder_inside(project: Path, file: Path) -> bool:
    """Whether `file` is a folder inside `project` (told apart for its own message)."""
    try:
        root = Path(os.path.realpath(project))
        real = Path(os.path.realpath(project / file))
        return real != root and real.is_relative_to(root) and real.is_dir()
    except (OSError, ValueError):
        return False


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


class _AlsoOption(click.Option):
    """`--also`, whose help names each destination's form: read from the destinations when the
    help is shown, so no other command pays for importing them."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from offprompt.sinks.destinations import cli_help

        self.help = cli_help()
        return super().get_help_record(ctx)


@cli.command(short_help="Ask for values on the page from a terminal and write them.")
@click.argument("names", nargs=-1, metavar="NAME...")
@click.option(
    "--file",
    "file",
    default=".env",
    show_default=True,
    metavar="PATH",
    help=(
        "The .env file to write, relative to this folder. A file that is no dotenv file by"
        " its name (.env, .env.*, *.env) gets one NAME's value as the whole file."
    ),
)
@click.option(
    "--whole",
    is_flag=True,
    help=(
        "Write one NAME's value as the whole --file, as is (for a value no .env quoting"
        " carries, or a key file)."
    ),
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
@click.option("--also", "also", multiple=True, metavar="KIND[:OPT]", cls=_AlsoOption)
def collect(
    names: tuple[str, ...],
    file: str,
    reason: str | None,
    providers: tuple[str, ...],
    timeout: float | None,
    also: tuple[str, ...],
    whole: bool,
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
        reason=reason or None,
        providers=_provider_pairs(providers),
        timeout=timeout,
        also=also,
        whole=whole,
    )
    try:  # checked once, here: `run` takes the request as checked
        asked = terminal.check_usage(ask, Path.cwd())
    except UsageProblem as problem:
        raise click.UsageError(str(problem)) from None
    except ProjectError as error:  # no argument can fix the folder: an error, not usage
        fatal(str(error))
    raise SystemExit(terminal.run(ask, asked, cwd=Path.cwd()))


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
    from offprompt.guard.hook import main as guard_main

    raise SystemExit(guard_main())


for _command in (cli_agents.init, cli_remove.remove, cli_doctor.agents):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="offprompt")
