"""The destination interface (DESIGN §13): a program the project is already linked to that
takes the same values on its stdin, and the records a send returns.

One module per kind (`github`, `vercel`, `cloudflare`, `fly`), picked from
`destinations.KINDS` by the spec's `kind`; each takes its own frozen spec (`spec.GithubSpec`…).
Not `interface.Sink`: that one speaks of a file (path, git, tracked, read-back) and a program
has none of those.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from offprompt.errors import FieldPath
from offprompt.spec import DestinationResult, DestinationSpec, SendStatus

__all__ = ["Call", "Destination", "DestinationResult", "Link", "SendStatus"]

S = TypeVar("S", bound=DestinationSpec)


@dataclass(frozen=True)
class Link:
    """What the project's files said a destination is, at the check: `ident` goes into argv
    (OWNER/REPO, a worker or an app), `env` into the program's environment (Vercel's ids),
    `target` is how the page and results show it. The program is told all of it, so a file
    changed after the check cannot redirect the value (DESIGN §13)."""

    kind: str
    ident: str
    target: str
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Call:
    """One run of the program: the arguments after its name, and its whole stdin.

    `label` says which part this run is (a name, an environment) in a failure's detail.
    """

    args: tuple[str, ...]
    stdin: bytes = field(repr=False)
    label: str


class Destination(ABC, Generic[S]):
    """One kind of destination, over its own spec `S`. Stateless: the spec and the project come
    with every call."""

    kind: ClassVar[str]
    programs: ClassVar[tuple[str, ...]]
    """The program's names, tried in this order on PATH."""
    command: ClassVar[str]
    """How the page names what runs, e.g. `gh secret set`."""
    fields: ClassVar[frozenset[str]] = frozenset()
    """The entry's fields besides `kind` (DESIGN §13)."""
    drop_env: ClassVar[frozenset[str]] = frozenset()
    """Variables that would make the program choose another target than the project's files."""
    noise: ClassVar[tuple[re.Pattern[str], ...]] = ()
    """Lines the program signs off with that say nothing about what happened."""
    config_option: ClassVar[str] = "--config"
    """How the program is pointed at a config file (`pinned_config`)."""

    @abstractmethod
    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> S:
        """A schema-valid `also` entry → its spec; RefusedRequest about a field under `at`
        (`("also", 0)`) otherwise."""

    @abstractmethod
    def link(self, project: Path, spec: S) -> Link:
        """What the project's own files link it to; NotLinked saying which link is missing."""

    @abstractmethod
    def calls(self, link: Link, spec: S, values: Mapping[str, str]) -> list[Call]:
        """Every run that sends `values` (request order), each with its stdin."""

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
