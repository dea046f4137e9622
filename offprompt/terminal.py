"""`offprompt collect`: the terminal's door into the collect core, the same request, ladder
and write as an agent's call, remote decision included (DESIGN §5, §9).

Prints the link and a live line on stderr, and the result (names, fingerprint) on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import signal
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Final, Literal, TextIO

from offprompt.collect.request import CollectRequest, check_names
from offprompt.collect.steps import Refused, Wait
from offprompt.errors import FieldPath, OffpromptError, ProjectError, RefusedRequest, UsageProblem

if TYPE_CHECKING:
    from offprompt.collect.core import Collector
    from offprompt.collect.parts import Parts
    from offprompt.collect.settings import Settings
    from offprompt.schema import Violation
    from offprompt.spec import DialogAnswer
    from offprompt.store import RequestRecord, RequestStore

WRITTEN, ERROR, USAGE, CLOSED = 0, 1, 2, 3
CLIENT = "offprompt-cli"
DEFAULT_REASON: Final = "A command in this terminal asked for these values."
"""The reason offprompt gives when --reason is not: the page says offprompt wrote it."""


@dataclass(frozen=True)
class CommandLine:
    """What the person asked for on the command line."""

    names: tuple[str, ...]
    file: str = ".env"
    reason: str | None = None
    """--reason as typed; None (not given) means `DEFAULT_REASON`, offprompt's own words."""
    providers: Mapping[str, str] | None = None
    timeout: float | None = None
    also: tuple[str, ...] = ()
    """`--also` values as typed, `KIND[:OPTION]` (each destination's `cli_form`)."""
    whole: bool = False
    """`--whole`: the value is the whole file (a file sink), whatever the file's name."""


def sink_kind(ask: CommandLine) -> str:
    """The sink `--file` names: a dotenv file by its name (`.env`, `.env.*`, `*.env`) gets
    dotenv lines; any other file, or `--whole`, the value whole (a file sink), since `offprompt
    keys` and `status` report such a file by its file alone (DESIGN §12) and would name no key
    in lines written there."""
    from offprompt.sinks.dotenv_read import is_dotenv_name

    return "file" if ask.whole or not is_dotenv_name(PurePosixPath(ask.file).name) else "dotenv"


def also_entry(text: str) -> dict[str, object]:
    """One `--also KIND[:OPTION]` as the `also` entry an agent would pass (DESIGN §13); each
    destination says what its option means (`Destination.from_cli`)."""
    from offprompt.sinks import destinations

    kind, sep, option = text.partition(":")
    entry = destinations.cli_entry(kind, option if sep else None)
    if entry is None:
        raise UsageProblem(f"--also {_shown(text)}: {kind} takes no option after ':'")
    return entry


def arguments(ask: CommandLine) -> dict[str, object]:
    """The same arguments an agent would pass to collect_secret."""
    providers = ask.providers or {}
    secrets: list[dict[str, str]] = []
    for name in ask.names:
        entry = {"name": name}
        if name in providers:
            entry["provider"] = providers[name]
        secrets.append(entry)
    args: dict[str, object] = {
        "secrets": secrets,
        "reason": DEFAULT_REASON if ask.reason is None else ask.reason,
        "sink": {"kind": sink_kind(ask), "path": ask.file},
    }
    if ask.also:
        args["also"] = [also_entry(a) for a in ask.also]
    return args


class TerminalClient:
    """The `Client` of a terminal: no host dialog to offer, and nobody to answer one."""

    name = CLIENT
    modern = False
    url_elicitation = False
    form_elicitation = False  # the terminal asks for the code itself (`_confirm`)
    can_send_requests = False

    def __init__(self, err: TextIO) -> None:
        self._err = err

    def progress(self, message: str) -> None:
        self._err.write(f"{message}…\n")

    async def elicit_url(
        self, *, url: str, message: str, elicitation_id: str, wait: float
    ) -> DialogAnswer:
        return "unsupported"

    def elicitation_complete(self, elicitation_id: str) -> None:
        pass

    async def elicit_code(self, *, message: str, wait: float) -> str | None:
        return None


def run(
    ask: CommandLine,
    asked: CollectRequest,
    *,
    cwd: Path,
    out: TextIO | None = None,
    err: TextIO | None = None,
    env: Mapping[str, str] | None = None,
    parts: Parts | None = None,
    stdin: TextIO | None = None,
) -> int:
    """Collect `asked` (what `check_usage` made of `ask` in `cwd`; it is not checked again)
    and write; returns the exit code (0 written, 1 error, 2 usage, 3 expired or cancelled).
    `out` and `err` default to sys.stdout and sys.stderr as they are now, `stdin` (where a
    remote request's confirmation code is typed) to sys.stdin; `env` to the process
    environment, read once now."""
    from offprompt.collect.settings import Settings

    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    lines = Lines(sys.stdin if stdin is None else stdin)
    settings = Settings.read(env)
    try:
        return asyncio.run(_collect(ask, asked, cwd.resolve(), (out, err, lines), settings, parts))
    except KeyboardInterrupt:
        err.write("\noffprompt: cancelled; nothing was written.\n")
        return CLOSED


def check_usage(ask: CommandLine, cwd: Path) -> CollectRequest:
    """The request `ask` makes, validated as an agent's would be, its destination included
    (resolved in the project `cwd`).

    UsageProblem for anything wrong in the arguments (names, --file, --reason, --provider);
    ProjectError when `cwd` cannot be the project, which no argument can fix (exit 1).
    """
    from offprompt import schema, sinks
    from offprompt.collect.request import validate
    from offprompt.collect.schema import request_schema

    # The names first, in the core's words: argv gives names only, and the schema's pattern
    # message would say less to a person.
    try:
        check_names(ask.names)
    except RefusedRequest as error:
        raise UsageProblem(str(error)) from None
    unknown = [n for n in (ask.providers or {}) if n not in ask.names]
    if unknown:
        raise UsageProblem(f"--provider names {_shown(unknown[0])}, which is not a NAME asked for")
    if sink_kind(ask) == "file" and len(ask.names) > 1:
        why = "--whole writes" if ask.whole else "it is no dotenv file by its name, so it gets"
        raise UsageProblem(
            f"--file {_shown(ask.file)}: {why} one value as the whole file, and"
            f" {len(ask.names)} NAMEs were given; give one NAME per such file, or a dotenv file"
            " (.env, .env.*, *.env) for several"
        )
    args = arguments(ask)
    problems = list(schema.violations(request_schema(), args))
    if problems:
        raise UsageProblem("; ".join(_said_of(p, ask) for p in problems[:5]))
    try:
        request = validate(args)
    except RefusedRequest as error:
        raise UsageProblem(_refused(error, ask)) from None
    try:
        sinks.display_of(cwd, request.sink)
    except RefusedRequest as error:  # names the path itself, as an agent is told
        raise UsageProblem(str(error)) from None
    return dataclasses.replace(request, reason_by="offprompt" if ask.reason is None else "person")


def _shown(text: str) -> str:
    """Command-line text quoted for a message: control characters and bytes that are not UTF-8
    (lone surrogates, as Python reads them from argv) escaped."""
    return repr(text)


# What the command line calls each field of the arguments it builds (`arguments`): the field's
# path with its indexes left out, the longest that matches. `{name}` is the NAME of that
# `secrets` entry (`{quoted_name}` quoted), `{also}` the `--also` value that made that `also`
# entry, quoted.
OPTIONS: Final[Mapping[tuple[str, ...], str]] = {
    ("secrets", "name"): "NAME {quoted_name}",
    ("secrets", "provider"): "--provider for {name}",
    ("reason",): "--reason",
    ("sink", "path"): "--file",
    ("also",): "--also {also}",
}
# A rule the command line says in its own words: argv's bytes that are not UTF-8 are what
# arrives as lone surrogates.
RULES: Final[Mapping[str, str]] = {"text": "must be UTF-8 text"}


def _option(path: FieldPath, ask: CommandLine) -> str | None:
    """The command line's name for the field at `path`, or None when it has none (a field the
    terminal never sets, or an entry's option said of the whole list)."""
    keys = tuple(part for part in path if isinstance(part, str))
    index = next((part for part in path if isinstance(part, int)), None)
    words: dict[str, str] = {}
    if index is not None and keys[:1] == ("secrets",) and index < len(ask.names):
        words = {"name": ask.names[index], "quoted_name": _shown(ask.names[index])}
    elif index is not None and keys[:1] == ("also",) and index < len(ask.also):
        words = {"also": _shown(ask.also[index])}
    for end in range(len(keys), 0, -1):
        template = OPTIONS.get(keys[:end])
        if template is not None:
            try:
                return template.format(**words)
            except KeyError:  # `also must have at most 4 entries`: no one --also to name
                return None
    return None


def _said_of(problem: Violation, ask: CommandLine) -> str:
    """A schema violation in the command line's terms: its option, then the rule."""
    option = _option(problem.path, ask)
    if option is None:
        return str(problem)
    return f"{option} {RULES.get(problem.keyword, problem.rule)}"


def _refused(error: RefusedRequest, ask: CommandLine) -> str:
    """A refusal of the core in the command line's terms: its option, then what the core said
    after the field's name."""
    option = _option(error.field, ask) if error.field else None
    return str(error) if option is None else option + error.rest


async def _collect(
    ask: CommandLine,
    asked: CollectRequest,
    cwd: Path,
    io: tuple[TextIO, TextIO, Lines],
    settings: Settings,
    parts: Parts | None,
) -> int:
    from offprompt import log, project, sinks
    from offprompt.collect.core import Collector

    asyncio.get_running_loop().set_exception_handler(log.asyncio_handler)
    out, err, lines = io

    try:
        if not project.usable(cwd):
            raise ProjectError(
                f"{cwd} is not a project folder offprompt can write in; run this in the project."
            )
        target = sinks.inspect_target(cwd, asked.sink, ask.names)
    except (RefusedRequest, ProjectError) as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
    if target.problem is not None:
        # Every submit would fail: say so now instead of serving a page nobody can use.
        err.write(f"offprompt: {target.problem} Nothing was written.\n")
        return ERROR
    core = Collector(settings, parts)
    made = core.create(asked, project=cwd, client=CLIENT, ttl=ask.timeout)
    if isinstance(made, Refused):
        err.write(f"offprompt: {made.message}\n")
        return USAGE if made.cause == "arguments" else ERROR
    request = made
    if request.remote:
        err.write(remote_note(settings.sandbox.reason, tunnel=_tunnel_plan(settings)))
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        step = await core.deliver(request, TerminalClient(err))
        if isinstance(step, Refused):
            err.write(f"offprompt: {step.message}\n")
            return ERROR
        _show_link(request, opened=isinstance(step, Wait), err=err)
        status = await _wait(core, request, stop, err, lines)
    except OffpromptError as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
    finally:
        if request.status == "awaiting":
            core.store.cancel(request)
        await core.close()
    return _report(request, status, out, err)


TunnelPlan = Literal["off", "run", "download"]


def _tunnel_plan(settings: Settings) -> TunnelPlan:
    """What a remote request will do for its link: no tunnel (OFFPROMPT_TUNNEL=off), run
    cloudflared, or download it first."""
    if settings.env.get("OFFPROMPT_TUNNEL", "").strip().lower() == "off":
        return "off"
    from offprompt.tunnel.binary import will_download

    return "download" if will_download(settings.env) else "run"


def remote_note(because: str, *, tunnel: TunnelPlan = "off") -> str:
    """Why this terminal's request is remote (DESIGN §5), what it will start for that (a public
    tunnel, a download) before it does, and how to say otherwise: one line."""
    if tunnel == "off":
        return (
            f"offprompt: remote mode, because {because}: your browser is taken to be on another"
            " machine, so none is started here and the link below is sealed for it."
            " If your browser is on this machine, set BROWSER or run with"
            " OFFPROMPT_SANDBOX=0.\n"
        )
    fetching = "downloads cloudflared (it is not installed) and " if tunnel == "download" else ""
    return (
        f"offprompt: remote mode, because {because}: your browser is taken to be on another"
        f" machine, so offprompt {fetching}opens a public cloudflared tunnel to a page sealed for"
        " it. To keep the page on this machine, set BROWSER (or OFFPROMPT_SANDBOX=0) if your"
        " browser is here, or OFFPROMPT_TUNNEL=off to forward the port yourself.\n"
    )


def _show_link(request: RequestRecord, *, opened: bool, err: TextIO) -> None:
    """The page's link (sealed for a remote request), whether our browser has it, and what a
    loopback link needs when there is no tunnel."""
    delivery = request.delivery
    if delivery.url is None:
        return
    err.write(f"Open this page to type {', '.join(request.names)}:\n\n  {delivery.url}\n\n")
    if opened and delivery.browser_opened:
        err.write("(opened in your browser)\n")
    if delivery.tunnel_problem is not None and delivery.port is not None:
        port = delivery.port
        err.write(
            f"offprompt: no tunnel ({delivery.tunnel_problem}): the link opens where port {port}"
            f" is forwarded to this machine (e.g. ssh -L {port}:127.0.0.1:{port}).\n"
        )


async def _wait(
    core: Collector, request: RequestRecord, stop: asyncio.Event, err: TextIO, lines: Lines
) -> str:
    store = core.store
    live = err.isatty()
    while request.status == "awaiting" and not stop.is_set():
        if request.shown_status == "confirm":
            if live:
                err.write("\r" + " " * 40 + "\r")
            await _confirm(core, request, stop, err, lines)
            continue
        left = store.expires_in(request)
        if live:
            err.write(f"\rWaiting for the page… {left // 60}:{left % 60:02d} left ")
            err.flush()
        waiter = asyncio.ensure_future(store.wait_shown(request, timeout=1.0))
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        for task in (waiter, stopper):
            task.cancel()
    if live:
        err.write("\r" + " " * 40 + "\r")
    if stop.is_set() and request.status == "awaiting":
        store.cancel(request)
    return request.status


CODE_PROMPT: Final = "Type the code the offprompt page shows: "
NO_STDIN: Final = (
    "offprompt: the page shows a confirmation code, but nothing can be typed here (stdin is "
    "closed): run `offprompt collect` in a terminal, or give the code on its stdin. Nothing "
    "was written.\n"
)


async def _confirm(
    core: Collector, request: RequestRecord, stop: asyncio.Event, err: TextIO, lines: Lines
) -> None:
    """A remote submit is held (DESIGN §17): ask for the code its page shows, on this
    terminal, and try it. The code typed is never echoed back or logged."""
    err.write(f"\nThe page holds your values until you confirm them.\n{CODE_PROMPT}")
    err.flush()
    typed = await _next_line(core.store, request, stop, lines)
    if typed is None:
        if lines.closed and request.status == "awaiting":
            err.write(NO_STDIN)
            core.store.cancel(request)
        return
    done = await core.confirm(request, typed)
    if isinstance(done, Refused):
        err.write(f"offprompt: {done.message}\n")
    elif done.confirmed == "wrong":
        left = request.delivery.tries_left
        err.write(f"That code was wrong: {left} {'try' if left == 1 else 'tries'} left.\n")
    elif done.confirmed == "none":
        err.write("offprompt: nothing is waiting for a code; waiting for the page.\n")


async def _next_line(
    store: RequestStore, request: RequestRecord, stop: asyncio.Event, lines: Lines
) -> str | None:
    """The next line typed, or None when stdin ends, the request closes or we are stopped."""
    reader = asyncio.ensure_future(lines.next())
    closed = asyncio.ensure_future(store.wait(request, timeout=store.expires_in(request) + 1))
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({reader, closed, stopper}, return_when=asyncio.FIRST_COMPLETED)
    for task in (closed, stopper):
        task.cancel()
    if not reader.done():
        reader.cancel()
        return None
    return reader.result()


class Lines:
    """Lines of `stream` (the terminal's stdin), read by a daemon thread so that waiting for
    one never holds the event loop, nor the exit (a thread blocked on a TTY cannot be
    stopped). Started on the first line asked for; `closed` once the stream has ended."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._queue: asyncio.Queue[str | None] | None = None
        self.closed = False

    async def next(self) -> str | None:
        """The next line without its line break; None at the end of the stream."""
        if self.closed:
            return None
        if self._queue is None:
            self._queue = asyncio.Queue()
            loop = asyncio.get_running_loop()
            thread = threading.Thread(target=self._pump, args=(loop, self._queue), daemon=True)
            thread.start()
        line = await self._queue.get()
        if line is None:
            self.closed = True
        return line

    def _pump(self, loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
        while True:
            try:
                raw = self._stream.readline()
            except (OSError, ValueError):  # closed under us
                raw = ""
            line = raw.rstrip("\r\n") if raw else None
            try:
                loop.call_soon_threadsafe(queue.put_nowait, line)
            except RuntimeError:  # the loop is gone: the command has finished
                return
            if line is None:
                return


def _report(request: RequestRecord, status: str, out: TextIO, err: TextIO) -> int:
    outcome = request.outcome
    if status == "written" and outcome is not None:
        out.write(outcome.headline(fingerprint=False) + "\n")
        out.write("\n".join(request.names) + "\n")
        if outcome.fingerprint:
            out.write(f"Fingerprint {outcome.fingerprint}\n")
        if outcome.mask_problem:
            err.write(f"offprompt: {outcome.mask_problem}\n")
        for d in outcome.destinations:
            # The write stands (exit 0); what did not reach a destination is said on stderr.
            line = f"{d.kind} {d.target}: {d.status} ({d.detail})\n"
            if d.status == "sent":
                out.write(line)
            else:
                err.write(f"offprompt: {line}")
        for name, why in outcome.unchecked:  # asked for, not done: said, never taken as "works"
            err.write(f"offprompt: {name} was not checked with a provider: {why}.\n")
        return WRITTEN
    if request.delivery.confirm_reason is not None:
        err.write(f"offprompt: the request was cancelled. {request.delivery.confirm_reason}\n")
        return CLOSED
    reason = "expired" if status == "expired" else "was cancelled"
    err.write(f"offprompt: the request {reason}; nothing was written.\n")
    return CLOSED
