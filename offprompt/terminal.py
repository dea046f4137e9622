"""`offprompt collect` from a terminal: the same request, page and write, without an agent.

Prints the link and a live line on stderr, and the result (names, fingerprint) on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from offprompt.errors import OffpromptError, ProjectError, RefusedRequest
from offprompt.spec import SecretSpec, SinkSpec

if TYPE_CHECKING:
    from offprompt.requests import Request
    from offprompt.tools.service import Service

WRITTEN, ERROR, USAGE, CLOSED = 0, 1, 2, 3
CLIENT = "offprompt-cli"
MAX_NAMES = 12  # DESIGN §3.1: a request asks for 1-12 keys


@dataclass(frozen=True)
class Ask:
    """What the person asked for on the command line."""

    names: tuple[str, ...]
    file: str = ".env"
    reason: str = "A command in this terminal asked for these values."
    providers: Mapping[str, str] | None = None
    timeout: float | None = None


def arguments(ask: Ask) -> dict[str, object]:
    """The same arguments an agent would pass to collect_secret."""
    providers = ask.providers or {}
    secrets: list[dict[str, str]] = []
    for name in ask.names:
        entry = {"name": name}
        if name in providers:
            entry["provider"] = providers[name]
        secrets.append(entry)
    return {"secrets": secrets, "reason": ask.reason, "sink": {"kind": "dotenv", "path": ask.file}}


def run(ask: Ask, *, cwd: Path, out: TextIO = sys.stdout, err: TextIO = sys.stderr) -> int:
    """Collect and write; returns the exit code (0 written, 1 error, 3 expired or cancelled)."""
    try:
        return asyncio.run(_collect(ask, cwd.resolve(), out, err))
    except KeyboardInterrupt:
        err.write("\noffprompt: cancelled; nothing was written.\n")
        return CLOSED


class UsageProblem(OffpromptError):
    """What is wrong with the command line; `offprompt collect` exits 2 with it."""


def check_usage(ask: Ask, cwd: Path) -> tuple[tuple[SecretSpec, ...], SinkSpec, str]:
    """The request `ask` makes, in the project `cwd`, and its destination as results show it.

    UsageProblem for anything wrong in the arguments (names, --file, --reason, --provider);
    ProjectError when `cwd` cannot be the project, which no argument can fix (exit 1).
    """
    from offprompt import sinks
    from offprompt.mcp import schema
    from offprompt.tools import schemas
    from offprompt.tools.service import parse_arguments

    problem = names_ok(ask.names)
    if problem:
        raise UsageProblem(problem)
    unknown = [n for n in (ask.providers or {}) if n not in ask.names]
    if unknown:
        raise UsageProblem(f"--provider names {_shown(unknown[0])}, which is not a NAME asked for")
    args = arguments(ask)
    problems = list(schema.errors(schemas.collect_input(), args))
    if problems:
        raise UsageProblem("; ".join(_cli_terms(p, ask) for p in problems[:5]))
    try:
        specs, sink = parse_arguments(args)
    except RefusedRequest as error:
        raise UsageProblem(_cli_terms(str(error), ask)) from None
    try:
        shown = sinks.display_of(cwd, sink)
    except RefusedRequest as error:
        raise UsageProblem(f"--file {_shown(ask.file)}: {error}") from None
    return specs, sink, shown


def _shown(text: str) -> str:
    """Command-line text quoted for a message: control characters and bytes that are not UTF-8
    (lone surrogates, as Python reads them from argv) escaped."""
    return repr(text)


def _cli_terms(message: str, ask: Ask) -> str:
    """A tool-argument message in the command line's terms (`secrets[0].name` → NAME 'X')."""
    for i, name in enumerate(ask.names):
        message = message.replace(f"secrets[{i}].provider", f"--provider for {name}")
        message = message.replace(f"secrets[{i}].name", f"NAME {_shown(name)}")
    # From argv, bytes that are not UTF-8 are what arrives as lone surrogates.
    message = message.replace(
        "must be valid Unicode text (it holds a lone surrogate)", "must be UTF-8 text"
    )
    for field, option in (("reason ", "--reason "), ("sink.path ", "--file ")):
        if message.startswith(field):
            message = option + message[len(field) :]
    return message


async def _collect(ask: Ask, cwd: Path, out: TextIO, err: TextIO) -> int:
    from offprompt import browser, log, project, sinks
    from offprompt.tools.service import Service

    asyncio.get_running_loop().set_exception_handler(log.asyncio_handler)

    try:
        specs, sink, shown = check_usage(ask, cwd)
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
        target = sinks.inspect_target(cwd, sink, ask.names)
    except (RefusedRequest, ProjectError) as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
    if target.problem is not None:
        # Every submit would fail: say so now instead of serving a page nobody can use.
        err.write(f"offprompt: {target.problem} Nothing was written.\n")
        return ERROR
    service = Service(cwd=cwd)
    ttl = ask.timeout if ask.timeout is not None else service.settings.ttl
    request = service.store.create(
        specs, sink, cwd, ask.reason, ttl=ttl, client=CLIENT, display=shown
    )
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        page = await service.page()
        url = page.url_for(request)
        err.write(f"Open this page to type {', '.join(request.names)}:\n\n  {url}\n\n")
        if await browser.open_url(url):
            err.write("(opened in your browser)\n")
        status = await _wait(service, request, stop, err)
    except OffpromptError as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
    finally:
        if request.status == "awaiting":
            service.store.cancel(request)
        await service.close()
    return _report(request, status, out, err)


async def _wait(service: Service, request: Request, stop: asyncio.Event, err: TextIO) -> str:
    store = service.store
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


def _report(request: Request, status: str, out: TextIO, err: TextIO) -> int:
    from offprompt.tools.results import headline

    outcome = request.outcome
    if status == "written" and outcome is not None:
        out.write(headline(outcome.file, request.names, outcome.kept, None) + "\n")
        out.write("\n".join(request.names) + "\n")
        if outcome.fingerprint:
            out.write(f"Fingerprint {outcome.fingerprint}\n")
        return WRITTEN
    reason = "expired" if status == "expired" else "was cancelled"
    err.write(f"offprompt: the request {reason}; nothing was written.\n")
    return CLOSED


def names_ok(names: Sequence[str]) -> str | None:
    """A usage problem with the names, or None."""
    from offprompt.tools.schemas import NAME_PATTERN

    if not names:
        return "name at least one key, e.g. offprompt collect STRIPE_SECRET_KEY"
    if len(names) > MAX_NAMES:
        return f"{len(names)} names were given; ask for at most {MAX_NAMES} at once"
    seen: set[str] = set()
    for name in names:
        if not re.fullmatch(NAME_PATTERN, name) or len(name) > 128:
            return (
                f"{_shown(name)} is not a key name: capitals, digits and _, starting with a"
                " capital, at most 128 characters (e.g. STRIPE_SECRET_KEY)"
            )
        if name in seen:
            return f"{name} is named twice"
        seen.add(name)
    return None
