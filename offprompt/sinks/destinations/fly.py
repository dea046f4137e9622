"""Fly.io secrets: `fly secrets import --app APP` (or `flyctl`) with `NAME=VALUE` lines on stdin.

Linked when `fly.toml` names the app; `--app` passes the app checked, since flyctl would read
fly.toml again when it starts. flyctl's line format has changed between versions
(quotes, comments and `\"\"\"` blocks read differently), so only values every version reads as
written, bare ones, are sent; any other is reported, never sent altered.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt.errors import FieldPath, NotLinked
from offprompt.sinks.destinations import linked
from offprompt.sinks.destinations.interface import Call, Destination, Link

__all__ = ["DESTINATION", "FlyDestination", "FlySpec"]

KIND: Final = "fly"
_APP: Final = re.compile(r"[a-z0-9][a-z0-9-]{0,62}")
# Read back unchanged by every flyctl parser (plain split at the first `=`, the one that strips
# quotes and comments, and go-envparse).
_BARE: Final = re.compile(r"[A-Za-z0-9_@%+=:,./-]+")


@dataclass(frozen=True)
class FlySpec:
    """Fly.io secrets of the app fly.toml names; nothing to choose."""

    kind: ClassVar[str] = KIND


class FlyDestination(Destination[FlySpec]):
    kind = KIND
    label = "Fly.io secret"
    linked_by = "fly.toml's app"
    cli_form = "fly"
    programs = ("fly", "flyctl")
    command = "fly secrets import"
    drop_env = frozenset({"FLY_APP"})  # names an app instead of fly.toml

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> FlySpec:
        return FlySpec()

    def link(self, project: Path, spec: FlySpec, env: Mapping[str, str]) -> Link:
        try:
            config = linked.read_config(project, "fly.toml")
        except ValueError as e:
            raise NotLinked(f"the project's Fly.io link is unusable: {e}.") from None
        if config is None:
            raise NotLinked(
                "the project is not linked to Fly.io: there is no fly.toml (run `fly launch` "
                "or `fly config save -a APP` in the project)."
            )
        app = config.get("app")
        if not isinstance(app, str) or not app:
            raise NotLinked(
                'the project is not linked to Fly.io: fly.toml names no app (set app = "my-app").'
            )
        if not _APP.fullmatch(app):
            raise NotLinked(f"fly.toml names the app {app!r}, which is not a Fly.io app name.")
        return Link(kind=self.kind, ident=app, target=app)

    def calls(self, link: Link, spec: FlySpec, values: Mapping[str, str]) -> list[Call]:
        if not values:
            return []
        lines = "".join(f"{name}={value}\n" for name, value in values.items())
        return [
            Call(
                args=("secrets", "import", "--app", link.ident),
                stdin=lines.encode("utf-8"),
                label=", ".join(values),
            )
        ]

    def unsafe(self, name: str, value: str) -> str | None:
        if _BARE.fullmatch(value):
            return None
        return (
            f"fly secrets import would not read {name}'s value exactly (it holds blanks, quotes, "
            "#, $, \\ or line breaks)"
        )

    def describe(self, link: Link, spec: FlySpec, names: Sequence[str]) -> str:
        return f"{self.command} ({', '.join(names)}) --app {link.ident}"


DESTINATION: Final = FlyDestination()
