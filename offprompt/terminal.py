"""`offprompt collect` from a terminal: the same request, page and write, without an agent.

Prints the link and a live line on stderr, and the result (names, fingerprint) on stdout.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from offprompt.errors import OffpromptError, ProjectError, RefusedRequest

if TYPE_CHECKING:
    from offprompt.requests import Request
    from offprompt.tools.service import Service

WRITTEN, ERROR, CLOSED = 0, 1, 3
CLIENT = "offprompt-cli"


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


async def _collect(ask: Ask, cwd: Path, out: TextIO, err: TextIO) -> int:
    from offprompt import browser, project
    from offprompt.mcp import schema
    from offprompt.tools import schemas
    from offprompt.tools.service import Service, parse_arguments

    args = arguments(ask)
    problems = list(schema.errors(schemas.collect_input(), args))
    if problems:
        err.write(f"offprompt: {'; '.join(problems[:5])}.\n")
        return ERROR
    service = Service(cwd=cwd)
    try:
        specs, sink = parse_arguments(args)
        if not project.usable(cwd):
            raise ProjectError(
                f"{cwd} is not a project folder offprompt can write in; run this in the project."
            )
        from offprompt import sinks

        shown = sinks.display_of(cwd, sink)
    except (RefusedRequest, ProjectError) as error:
        err.write(f"offprompt: {error}\n")
        return ERROR
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
    if not names:
        return "name at least one key, e.g. offprompt collect STRIPE_SECRET_KEY"
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return f"{name} is named twice"
        seen.add(name)
    return None
