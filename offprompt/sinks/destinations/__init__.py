"""More destinations (DESIGN §13): programs the project is already linked to, sent the same
values after the local write, each on its stdin.

One module per kind implements `interface.Destination` and says everything about it; `KINDS`
registers them, and the `also` schema, its parse, the CLI's `--also`, the page and the send
all read it. `linked` reads the project's files, `runner` runs the programs (through the one
runner, disk.process) and reduces what they print to a line; a kind that runs no program
(the keyring) does its work in its own `send`, and nothing here treats it apart.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from offprompt.disk import paths, walk
from offprompt.errors import NotLinked, RefusedRequest
from offprompt.sinks.destinations import (
    aws,
    cloudflare,
    fly,
    github,
    keyring,
    runner,
    vault,
    vercel,
)
from offprompt.sinks.destinations.interface import (
    Call,
    Destination,
    DestinationResult,
    Link,
    SendStatus,
)
from offprompt.spec import DestinationSpec

__all__ = [
    "KINDS",
    "MAX_ALSO",
    "Destination",
    "DestinationResult",
    "Link",
    "Planned",
    "SendStatus",
    "check_values",
    "cli_entry",
    "cli_help",
    "destination_for",
    "entry_schema",
    "linked_by",
    "parse",
    "pinned_args",
    "plan",
    "send",
]

MAX_ALSO = 4

# The registration: every kind an `also` entry may name, in the order the schema, the CLI's
# help and the page list them. A new destination is one module beside these and one entry here.
KINDS: dict[str, Destination[Any]] = {
    d.kind: d
    for d in (
        github.DESTINATION,
        vercel.DESTINATION,
        cloudflare.DESTINATION,
        fly.DESTINATION,
        vault.DESTINATION,
        aws.DESTINATION,
        keyring.DESTINATION,
    )
}


def _drop_env() -> frozenset[str]:
    """Every kind's targeting variables, kept from every program: one kind's could steer
    another."""
    return frozenset().union(*(d.drop_env for d in KINDS.values()))


def entry_schema() -> dict[str, Any]:
    """The JSON Schema of one `also` entry: `kind`, then each kind's own fields, in `KINDS`'
    order (an entry's fields that its kind does not take are refused by `parse`)."""
    properties: dict[str, Any] = {"kind": {"type": "string", "enum": list(KINDS)}}
    for dest in KINDS.values():
        properties.update(dest.properties())
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["kind"],
        "properties": properties,
    }


def linked_by() -> str:
    """What links a project to each kind, for the `also` field's description."""
    return ", ".join(d.linked_by for d in KINDS.values())


def cli_help() -> str:
    """The CLI's `--also` help: each kind's `KIND[:OPT]` form."""
    forms = ", ".join(d.cli_form for d in KINDS.values())
    return (
        f"Also send to a platform this project is linked to, or a team's store: {forms} "
        f"(repeatable, at most "
        f"{MAX_ALSO})."
    )


def cli_entry(kind: str, option: str | None) -> dict[str, Any] | None:
    """`--also KIND[:OPTION]` (option None: no `:`) as the `also` entry an agent would pass;
    None when the kind takes no option. An unknown kind passes as typed, so the request's
    validation says it in the agent's words."""
    dest = KINDS.get(kind)
    fields = dest.from_cli(option) if dest is not None else ({} if option is None else None)
    return None if fields is None else {"kind": kind, **fields}


def destination_for(kind: str) -> Destination[Any]:
    try:
        return KINDS[kind]
    except KeyError:
        known = ", ".join(repr(k) for k in KINDS)
        raise RefusedRequest(f"Unknown destination kind {kind!r}; use {known}.") from None


def parse(raw: Sequence[Mapping[str, Any]]) -> tuple[DestinationSpec, ...]:
    """Schema-valid `also` entries → specs; RefusedRequest naming the entry otherwise."""
    if len(raw) > MAX_ALSO:
        raise RefusedRequest(f"also names {len(raw)} destinations; name at most {MAX_ALSO}.")
    specs: list[DestinationSpec] = []
    for i, entry in enumerate(raw):
        at = ("also", i)
        kind = str(entry.get("kind", ""))
        dest = destination_for(kind)
        extra = sorted(set(entry) - {"kind"} - dest.fields)
        if extra:
            raise RefusedRequest.about(at, f" ({kind}) takes no {', '.join(extra)}.")
        spec = cast(DestinationSpec, dest.parse(entry, at))
        if spec in specs:
            raise RefusedRequest.about(at, " repeats an earlier destination; list each once.")
        specs.append(spec)
    return tuple(specs)


@dataclass(frozen=True)
class Planned:
    """One destination as the page shows it before the submit: its link, the command line,
    and the program's path on PATH (None: missing, said on the page before the submit, or a
    kind that runs none)."""

    spec: DestinationSpec
    link: Link
    command: str
    program: str | None

    @property
    def kind(self) -> str:
        return self.spec.kind

    @property
    def label(self) -> str:
        """What the page calls one value sent there."""
        return destination_for(self.kind).label

    @property
    def runs_program(self) -> bool:
        """A program is run to send (else the kind's own `send` does the work, `page_note`
        says where)."""
        return bool(destination_for(self.kind).programs)

    @property
    def page_note(self) -> str:
        """For a kind that runs no program: what the page says under its row (`{target}`
        stands for the link's target)."""
        return destination_for(self.kind).page_note

    @property
    def missing(self) -> str | None:
        """Why it cannot run, else None."""
        if self.program is not None or not destination_for(self.kind).programs:
            return None
        names = " or ".join(destination_for(self.kind).programs)
        return f"{names} is not installed here (not found on PATH)"


def plan(
    project: Path,
    specs: Sequence[DestinationSpec],
    names: Sequence[str],
    env: Mapping[str, str] | None = None,
) -> tuple[Planned, ...]:
    """Each spec's link from the project's own files, and its program; NotLinked (a refusal
    that says which link is missing) for the first that is not linked."""
    env = os.environ if env is None else env
    out: list[Planned] = []
    for i, spec in enumerate(specs):
        dest = destination_for(spec.kind)
        try:
            link = dest.link(project, spec, env)
        except NotLinked as e:
            raise NotLinked(f"also[{i}] ({spec.kind}): {e}") from None
        program = runner.find_program(dest.programs, env)
        out.append(Planned(spec, link, dest.describe(link, spec, names), program))
    return tuple(out)


def check_values(
    planned: Sequence[Planned], values: Mapping[str, str], ticked: Collection[int]
) -> dict[str, str]:
    """{name: reason} for each value a ticked destination's program would not receive exactly,
    so the page can say so before anything is written; {} when all can. No I/O."""
    problems: dict[str, str] = {}
    for i, p in enumerate(planned):
        if i not in ticked:
            continue
        dest = destination_for(p.kind)
        for name, value in values.items():
            why = dest.unsafe(name, value)
            if why is not None and name not in problems:
                problems[name] = f"{why}: untick {p.kind} on this page, or change the value"
    return problems


def send(
    project: Path,
    planned: Sequence[Planned],
    values: Mapping[str, str],
    ticked: Collection[int],
    *,
    env: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[DestinationResult, ...]:
    """Send `values` to each ticked destination, in order; never raises for a destination
    that fails. Blocking (run it off the event loop): each destination as a whole, every name
    and environment it takes, gets at most `timeout` seconds (runner.TIMEOUT_SECONDS, read at
    the call, when None)."""
    env = os.environ if env is None else env
    timeout = runner.TIMEOUT_SECONDS if timeout is None else timeout
    every = [v for v in values.values() if v]
    return tuple(
        _send_one(project, p, values, i in ticked, env, every, timeout)
        for i, p in enumerate(planned)
    )


@contextlib.contextmanager
def _config_folder(dest: Destination[Any], link: Link) -> Iterator[Path | None]:
    """A private folder for a pinned config while the program runs; None (and no folder made)
    for a program that needs none."""
    if dest.pinned_config(link) is None:
        yield None
        return
    with paths.private_temp_folder("offprompt-config-") as folder:
        yield folder


def pinned_args(dest: Destination[Any], link: Link, folder: Path) -> tuple[str, ...]:
    """The arguments that point `dest`'s program at a config of the checked target alone,
    written into `folder` (private, outside the project, gone after the send); () when the
    program needs none. The file holds names and ids, never a value."""
    pinned = dest.pinned_config(link)
    if pinned is None:
        return ()
    name, data = pinned
    path = folder / name
    walk.write_new(path, data)
    return (dest.config_option, str(path))


def _send_one(
    project: Path,
    planned: Planned,
    values: Mapping[str, str],
    ticked: bool,
    env: Mapping[str, str],
    every: Sequence[str],
    timeout: float,
) -> DestinationResult:
    dest = destination_for(planned.kind)
    shown = planned.link.target

    def result(status: SendStatus, detail: str) -> DestinationResult:
        return DestinationResult(kind=planned.kind, target=shown, status=status, detail=detail)

    if not ticked:
        return result("skipped", "unticked on the page")
    if not values:
        return result("skipped", "no value was typed for it (kept or generated only)")
    # Read the link again: the program must go where the page said, or nowhere.
    try:
        now = dest.link(project, planned.spec, env)
    except NotLinked as e:
        return result("failed", f"the link changed since the page opened: {e}")
    if now != planned.link:
        return result("failed", "the project's link changed since the page opened; not sent")
    program = runner.find_program(dest.programs, env)
    if program is None and dest.programs:
        return result("skipped", planned.missing or "the program is not installed")
    problems: list[str] = []
    sendable: dict[str, str] = {}
    for name, value in values.items():
        why = dest.unsafe(name, value)
        if why is None:
            sendable[name] = value
        else:
            problems.append(f"{why}, so it was not sent")
    # Every kind's targeting variables dropped, then the checked target's own set (Vercel's).
    child = {**runner.child_env(env, _drop_env()), **dict(now.env)}
    deadline = time.monotonic() + timeout
    with _config_folder(dest, now) as folder:
        pinned = pinned_args(dest, now, folder) if folder is not None else ()

        def run(call: Call) -> runner.Ran:
            left = deadline - time.monotonic()
            if program is None:  # a kind that runs no program (`programs` empty) sends itself
                return runner.Ran(False, f"{planned.kind} runs no program")
            if left <= 0:
                return runner.Ran(False, f"not run, the {timeout:g} s limit was used up")
            return runner.run(
                program,
                (*call.args, *pinned),
                call.stdin,
                cwd=project,
                env=child,
                values=every,
                timeout=left,
                noise=dest.noise,
                limit=timeout,
            )

        done = dest.send(now, planned.spec, sendable, run)
    problems.extend(done.problems)
    if problems:
        went = f" ({done.said} {', '.join(done.sent)})" if done.sent else ""
        return result("failed", "; ".join(problems) + went)
    return result("sent", f"{done.said} {', '.join(done.sent)}{done.done}")
