"""The destination interface (DESIGN §13): a program the project is already linked to that
takes the same values on its stdin, and the records a send returns.

A kind is one module beside this one that says everything about it: its name, its `also`
entry's fields (their JSON Schema and their parse into the kind's own frozen spec), its
`--also KIND[:OPT]` form, its page label and command line, how the project is linked to it,
and the program it runs. `destinations.KINDS`, the one registration, is what the schema, the
request's validation, the CLI, the page and the send read; nothing else names a kind.

The specs: `spec.DestinationSpec` is a Protocol (a frozen value with a `kind`), and each
module defines its own frozen dataclass for it. `spec` is a leaf and cannot import the
modules, so a per-kind union there would be a second list of kinds; a generic spec with an
options mapping would leave each module reading untyped keys. The Protocol keeps both: one
list, and typed fields inside the module that reads them.

Not `interface.Sink`: that one speaks of a file (path, git, tracked, read-back) and a program
has none of those.

The environment: `link` receives the environment the request was made from (the server's, as
the host started it; `collect.settings.Settings.env`), never `os.environ` read here, so a kind
linked by a variable (a store's address, DESIGN §13.1) reads it in the one place the project's
files are read, and the send reads the same mapping again to check nothing moved.

The send: a kind whose runs do not depend on one another lists them in `calls`; a kind that
must ask first and decide (a store: is there a secret at the path already?) overrides `send`,
which gets each run's answer through the `run` it is handed (that `run` keeps the limit). A kind
that runs no program (`programs == ()`, the keyring) overrides `send` and does the work there;
nothing outside its module treats it apart.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from offprompt.errors import FieldPath
from offprompt.sinks.destinations.runner import Ran
from offprompt.spec import DestinationResult, DestinationSpec, SendStatus

__all__ = [
    "Call",
    "Destination",
    "DestinationResult",
    "Link",
    "Ran",
    "RunCall",
    "SendStatus",
    "Sent",
]

S = TypeVar("S", bound=DestinationSpec)


@dataclass(frozen=True)
class Link:
    """What the project's files (or the request's environment, for a store) said a destination
    is, at the check: `ident` goes into argv
    (OWNER/REPO, a worker or an app), `env` into the program's environment (Vercel's ids),
    `target` is how the page and results show it. The program is told all of it, so a file
    changed after the check cannot redirect the value (DESIGN §13)."""

    kind: str
    ident: str
    target: str
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()
    """Arguments that pin the rest of the checked target on every run (a store's address,
    namespace, region or endpoint, DESIGN §13.1)."""


@dataclass(frozen=True)
class Call:
    """One run of the program: the arguments after its name, and its whole stdin.

    `label` says which part this run is (a name, an environment) in a failure's detail.
    """

    args: tuple[str, ...]
    stdin: bytes = field(repr=False)
    label: str


RunCall = Callable[[Call], Ran]
"""Runs one call of the program the send was given (no shell, within what is left of the
destination's limit; a call past it is not run and answers `ok=False`)."""


@dataclass(frozen=True)
class Sent:
    """What one destination's send did: the labels sent, and each problem in words (never a
    value). `sent` in results when `problems` is empty, `failed` otherwise."""

    sent: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    done: str = ""
    """What results say after the labels when all went (a store: whether the secret was new)."""
    said: str = "sent"
    """The word results put before the labels (`saved` for a kind that keeps them itself)."""


class Destination(ABC, Generic[S]):
    """One kind of destination, over its own spec `S`. Stateless: the spec and the project come
    with every call."""

    kind: ClassVar[str]
    label: ClassVar[str]
    """What the page calls one value sent there, e.g. `GitHub Actions secret`."""
    linked_by: ClassVar[str]
    """What links a project to it, as the `also` field's description names it."""
    cli_form: ClassVar[str]
    """Its `--also` value as the CLI's help shows it, e.g. `github[:ENVIRONMENT]`."""
    programs: ClassVar[tuple[str, ...]]
    """The program's names, tried in this order on PATH; () for a kind that runs none and
    does its whole work in `send` (never missing, and its `run` runs nothing)."""
    command: ClassVar[str]
    """How the page names what runs, e.g. `gh secret set`."""
    drop_env: ClassVar[frozenset[str]] = frozenset()
    """Variables that would make the program choose another target than the project's files."""
    noise: ClassVar[tuple[re.Pattern[str], ...]] = ()
    """Lines the program signs off with that say nothing about what happened."""
    config_option: ClassVar[str] = "--config"
    """How the program is pointed at a config file (`pinned_config`)."""
    page_note: ClassVar[str] = "offprompt does this itself, in {target}: no program runs."
    """For a kind that runs no program: what the page says under its row, `{target}` standing
    for the link's target (a kind that runs one is shown by its command line)."""

    def properties(self) -> dict[str, Any]:
        """The JSON Schema of each field its `also` entry takes besides `kind` (DESIGN §13),
        merged into the one entry schema in `KINDS`' order; its description says the kind."""
        return {}

    @property
    def fields(self) -> frozenset[str]:
        """The entry's fields besides `kind`."""
        return frozenset(self.properties())

    def from_cli(self, option: str | None) -> dict[str, Any] | None:
        """The entry's fields besides `kind` for `--also KIND[:OPTION]` (None: no `:` given),
        as an agent would pass them (the request's validation checks them); None when the
        kind takes no option."""
        return {} if option is None else None

    @abstractmethod
    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> S:
        """A schema-valid `also` entry → its spec; RefusedRequest about a field under `at`
        (`("also", 0)`) otherwise."""

    @abstractmethod
    def link(self, project: Path, spec: S, env: Mapping[str, str]) -> Link:
        """What the project's own files (or, for a store, `env`: the environment the request
        was made from) link it to; NotLinked saying which link is missing."""

    def calls(self, link: Link, spec: S, values: Mapping[str, str]) -> list[Call]:
        """Every run that sends `values` (request order), each with its stdin; for a kind that
        overrides `send` instead, never called."""
        raise NotImplementedError(f"{self.kind} sends through send()")

    def send(self, link: Link, spec: S, values: Mapping[str, str], run: RunCall) -> Sent:
        """Send `values` through `run`: each of `calls`, in order, the next one whatever the
        last one did."""
        sent: list[str] = []
        problems: list[str] = []
        for call in self.calls(link, spec, values):
            ran = run(call)
            if ran.ok:
                sent.append(call.label)
            else:
                problems.append(f"{call.label}: {ran.detail}")
        return Sent(tuple(sent), tuple(problems))

    def unsafe(self, name: str, value: str) -> str | None:
        """Why the program would not receive `value` exactly, else None. Never quotes it; a
        phrase the caller completes ("…: untick it", "…, so it was not sent")."""
        return None

    def pinned_config(self, link: Link) -> tuple[str, bytes] | None:
        """A config file (its name, its bytes) holding only the checked target, which the
        program is pointed at instead of the project's own (`config_option`): a program that
        reads more of its target from its config when it starts than argv can say. None: the
        program needs none."""
        return None

    @abstractmethod
    def describe(self, link: Link, spec: S, names: Sequence[str]) -> str:
        """The command line the page shows (names and target only), from `command`."""
