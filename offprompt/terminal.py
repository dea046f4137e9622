"""`offprompt collect`: the terminal's door into the collect core, the same request, ladder
and write as an agent's call, remote decision included (DESIGN §5, §9).

Prints the link and a live line on stderr, and the result (names, fingerprint) on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from offprompt.collect.request import CollectRequest, check_names
from offprompt.collect.steps import Answer, Refused, Wait
from offprompt.errors import OffpromptError, ProjectError, RefusedRequest

if TYPE_CHECKING:
    from offprompt.collect.parts import Parts
    from offprompt.collect.settings import Settings
    from offprompt.store import RequestRecord, RequestStore

WRITTEN, ERROR, USAGE, CLOSED = 0, 1, 2, 3
CLIENT = "offprompt-cli"


@dataclass(frozen=True)
class Ask:
    """What the person asked for on the command line."""

    names: tuple[str, ...]
    file: str = ".env"
    reason: str = "A command in this terminal asked for these values."
    providers: Mapping[str, str] | None = None
    timeout: float | None = None
    also: tuple[str, ...] = ()
    """`--also` values as typed: `github[:ENV]`, `vercel:ENV[,ENV]`, `cloudflare[:ENV]`, `fly`."""


def also_entry(text: str) -> dict[str, object]:
    """One `--also KIND[:OPTION]` as the `also` entry an agent would pass (DESIGN §13)."""
    kind, sep, option = text.partition(":")
    entry: dict[str, object] = {"kind": kind}
    if kind == "vercel":
        entry["environments"] = option.split(",") if option else []
    elif sep and kind == "github":
        entry["environment"] = option
    elif sep and kind == "cloudflare":
        entry["env"] = option
    elif sep:
        raise UsageProblem(f"--also {_shown(text)}: {kind} takes no option after ':'")
    return entry


def arguments(ask: Ask) -> dict[str, object]:
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
        "reason": ask.reason,
        "sink": {"kind": "dotenv", "path": ask.file},
    }
    if ask.also:
        args["also"] = [also_entry(a) for a in ask.also]
    return args


class TerminalClient:
    """The `Client` of a terminal: no host dialog to offer, and nobody to answer one."""

    name = CLIENT
    modern = False
    url_elicitation = False
    can_send_requests = False

    def __init__(self, err: TextIO) -> None:
        self._err = err

    def progress(self, message: str) -> None:
        self._err.write(f"{message}…\n")

    async def elicit_url(
        self, *, url: str, message: str, elicitation_id: str, wait: float
    ) -> Answer:
        return "unsupported"

    def elicitation_complete(self, elicitation_id: str) -> None:
        pass


def run(
    ask: Ask,
    *,
    cwd: Path,
    out: TextIO = sys.stdout,
    err: TextIO = sys.stderr,
    env: Mapping[str, str] | None = None,
    parts: Parts | None = None,
) -> int:
    """Collect and write; returns the exit code (0 written, 1 error, 2 usage, 3 expired or
    cancelled). `env` defaults to the process environment, read once now."""
    from offprompt.collect.settings import Settings

    settings = Settings.read(env)
    try:
        return asyncio.run(_collect(ask, cwd.resolve(), out, err, settings, parts))
    except KeyboardInterrupt:
        err.write("\noffprompt: cancelled; nothing was written.\n")
        return CLOSED


class UsageProblem(OffpromptError):
    """What is wrong with the command line; `offprompt collect` exits 2 with it."""


def check_usage(ask: Ask, cwd: Path) -> CollectRequest:
    """The request `ask` makes, validated as an agent's would be, its destination included
    (resolved in the project `cwd`).

    UsageProblem for anything wrong in the arguments (names, --file, --reason, --provider);
    ProjectError when `cwd` cannot be the project, which no argument can fix (exit 1).
    """
    from offprompt import schema, sinks
    from offprompt.tools import arguments as tool_arguments
    from offprompt.tools import schemas

    # The names first, in the core's words: argv gives names only, and the schema's pattern
    # message would say less to a person.
    try:
        check_names(ask.names)
    except RefusedRequest as error:
        raise UsageProblem(str(error)) from None
    unknown = [n for n in (ask.providers or {}) if n not in ask.names]
    if unknown:
        raise UsageProblem(f"--provider names {_shown(unknown[0])}, which is not a NAME asked for")
    args = arguments(ask)
    problems = list(schema.errors(schemas.collect_input(), args))
    if problems:
        raise UsageProblem("; ".join(_cli_terms(p, ask) for p in problems[:5]))
    try:
        request = tool_arguments.collect_request(args)
    except RefusedRequest as error:
        raise UsageProblem(_cli_terms(str(error), ask)) from None
    try:
        sinks.display_of(cwd, request.sink)
    except RefusedRequest as error:  # names the path itself, as an agent is told
        raise UsageProblem(str(error)) from None
    return request


def _shown(text: str) -> str:
    """Command-line text quoted for a message: control characters and bytes that are not UTF-8
    (lone surrogates, as Python reads them from argv) escaped."""
    return repr(text)


def _cli_terms(message: str, ask: Ask) -> str:
    """A tool-argument message in the command line's terms (`secrets[0].name` → NAME 'X')."""
    for i, name in enumerate(ask.names):
        message = message.replace(f"secrets[{i}].provider", f"--provider for {name}")
        message = message.replace(f"secrets[{i}].name", f"NAME {_shown(name)}")
    for i, text in reversed(list(enumerate(ask.also))):
        message = re.sub(rf"\balso\[{i}\](\.[a-z]+)?", f"--also {_shown(text)}", message)
    # From argv, bytes that are not UTF-8 are what arrives as lone surrogates.
    message = message.replace(
        "must be valid Unicode text (it holds a lone surrogate)", "must be UTF-8 text"
    )
    for field, option in (("reason ", "--reason "), ("sink.path ", "--file ")):
        if message.startswith(field):
            message = option + message[len(field) :]
    return message


async def _collect(
    ask: Ask, cwd: Path, out: TextIO, err: TextIO, settings: Settings, parts: Parts | None
) -> int:
    from offprompt import log, project, sinks
    from offprompt.collect.core import Collector

    asyncio.get_running_loop().set_exception_handler(log.asyncio_handler)

    try:
        asked = check_usage(ask, cwd)
    except UsageProblem as problem:
        err.write(f"offprompt: {problem}\n")
        return USAGE
    except ProjectError as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
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
        status = await _wait(core.store, request, stop, err)
    except OffpromptError as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
    finally:
        if request.status == "awaiting":
            core.store.cancel(request)
        await core.close()
    return _report(request, status, out, err)


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
    store: RequestStore, request: RequestRecord, stop: asyncio.Event, err: TextIO
) -> str:
    live = err.isatty()
    while request.status == "awaiting" and not stop.is_set():
        left = store.expires_in(request)
        if live:
            err.write(f"\rWaiting for the page… {left // 60}:{left % 60:02d} left ")
            err.flush()
        waiter = asyncio.ensure_future(store.wait(request, timeout=1.0))
        stopper = asyncio.ensure_future(stop.wait())
        await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
        for task in (waiter, stopper):
            task.cancel()
    if live:
        err.write("\r" + " " * 40 + "\r")
    if stop.is_set() and request.status == "awaiting":
        store.cancel(request)
    return request.status


def _report(request: RequestRecord, status: str, out: TextIO, err: TextIO) -> int:
    from offprompt.tools.results import headline

    outcome = request.outcome
    if status == "written" and outcome is not None:
        out.write(headline(outcome.file, request.names, outcome.kept, None) + "\n")
        out.write("\n".join(request.names) + "\n")
        if outcome.fingerprint:
            out.write(f"Fingerprint {outcome.fingerprint}\n")
        for d in outcome.destinations:
            # The write stands (exit 0); what did not reach a destination is said on stderr.
            line = f"{d.kind} {d.target}: {d.status} ({d.detail})\n"
            if d.status == "sent":
                out.write(line)
            else:
                err.write(f"offprompt: {line}")
        return WRITTEN
    reason = "expired" if status == "expired" else "was cancelled"
    err.write(f"offprompt: the request {reason}; nothing was written.\n")
    return CLOSED
