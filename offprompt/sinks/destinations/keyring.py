"""The OS's own keyring (DESIGN §13.2): each value saved under service `offprompt`, username the
key's name, so later requests in any project can fill it from the page.

Not a program: offprompt saves the values itself (`in_process`), through `offprompt.oskeyring`,
which reaches the real store directly and refuses anything else. "Linked" means that store is
usable now: a missing extra, no Secret Service or a locked one is refused before any page.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt import oskeyring
from offprompt.errors import FieldPath, NotLinked
from offprompt.sinks.destinations.interface import Call, Destination, Link

__all__ = ["DESTINATION", "KeyringDestination", "KeyringSpec"]

KIND: Final = "keyring"


@dataclass(frozen=True)
class KeyringSpec:
    """The keyring of this computer; nothing to choose (the service is always `offprompt`)."""

    kind: ClassVar[str] = KIND


class KeyringDestination(Destination[KeyringSpec]):
    kind = KIND
    label = "Save in your keyring"
    linked_by = (
        "this computer's own keyring for kind keyring (saved once, offered on later pages in"
        " any project; needs the keyring extra)"
    )
    cli_form = "keyring"
    programs = ()
    command = "saved by offprompt itself"
    in_process = True

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> KeyringSpec:
        return KeyringSpec()

    def link(self, project: Path, spec: KeyringSpec, env: Mapping[str, str]) -> Link:
        try:
            store = oskeyring.open_keyring(env)
        except oskeyring.KeyringUnavailable as e:
            raise NotLinked(
                f"offprompt saves only in this computer's own keyring, and none can be used: {e}."
            ) from None
        return Link(kind=self.kind, ident=oskeyring.SERVICE, target=store.where)

    def calls(self, link: Link, spec: KeyringSpec, values: Mapping[str, str]) -> list[Call]:
        return []  # no program runs: `save` does it

    def save(
        self, link: Link, spec: KeyringSpec, values: Mapping[str, str]
    ) -> tuple[list[str], list[str]]:
        saved: list[str] = []
        problems: list[str] = []
        try:
            store = oskeyring.open_keyring(os.environ)
        except oskeyring.KeyringUnavailable as e:
            return [], [f"the keyring cannot be used now: {e}"]
        for name, value in values.items():
            try:
                store.replace(name, value)
            except oskeyring.KeyringUnavailable as e:
                problems.append(f"{name}: {e}")
            except Exception as e:  # the store's own error: by its class only, never its text
                problems.append(f"{name}: the keyring refused it ({type(e).__name__})")
            else:
                saved.append(name)
        if saved:
            try:
                oskeyring.record_saved(saved)
            except OSError as e:
                problems.append(f"the list of saved names could not be kept ({type(e).__name__})")
        return [f"{oskeyring.SERVICE} / {n}" for n in saved], problems

    def describe(self, link: Link, spec: KeyringSpec, names: Sequence[str]) -> str:
        return ", ".join(f"{oskeyring.SERVICE} / {n}" for n in names)


DESTINATION: Final = KeyringDestination()
