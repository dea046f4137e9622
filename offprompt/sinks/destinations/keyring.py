"""The OS's own keyring (DESIGN §13.2): each value saved under service `offprompt`, username the
key's name, so later requests in any project can fill it from the page.

Not a program (`programs == ()`): its `send` saves the values itself, through
`offprompt.oskeyring`, which reaches the real store directly and refuses anything else. "Linked"
means that store is usable now, opened with the environment the request was made from: a missing
extra, no Secret Service or a locked one is refused before any page. The link keeps the session
bus it was checked on, and the send opens that one again (a changed one is a changed link).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Final

from offprompt import oskeyring
from offprompt.errors import FieldPath, NotLinked
from offprompt.sinks.destinations.interface import Destination, Link, RunCall, Sent

__all__ = ["DESTINATION", "KeyringDestination", "KeyringSpec"]

KIND: Final = "keyring"
# What finds the store on this system: the session bus the Secret Service answers on (Linux).
_STORE_ENV: Final = ("DBUS_SESSION_BUS_ADDRESS",)


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
    page_note = (
        "In this computer's {target}, under service offprompt, replacing what is saved there"
        " under those names. Later requests in any project can fill them from there."
    )

    def parse(self, raw: Mapping[str, Any], at: FieldPath) -> KeyringSpec:
        return KeyringSpec()

    def link(self, project: Path, spec: KeyringSpec, env: Mapping[str, str]) -> Link:
        try:
            store = oskeyring.open_keyring(env)
        except oskeyring.KeyringUnavailable as e:
            raise NotLinked(
                f"offprompt saves only in this computer's own keyring, and none can be used: {e}."
            ) from None
        # The variables the store was found by (the Secret Service's session bus on Linux):
        # what the send opens again, never os.environ.
        found_by = tuple((k, env[k]) for k in _STORE_ENV if env.get(k))
        return Link(kind=self.kind, ident=oskeyring.SERVICE, target=store.where, env=found_by)

    def send(self, link: Link, spec: KeyringSpec, values: Mapping[str, str], run: RunCall) -> Sent:
        """Save each value in the store the link was checked on; no program runs (`run` is
        never called). What was saved and each problem, value-free."""
        saved: list[str] = []
        problems: list[str] = []
        try:
            store = oskeyring.open_keyring(dict(link.env))
        except oskeyring.KeyringUnavailable as e:
            return Sent(problems=(f"the keyring cannot be used now: {e}",), said="saved")
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
        labels = tuple(f"{oskeyring.SERVICE} / {n}" for n in saved)
        return Sent(labels, tuple(problems), said="saved")

    def describe(self, link: Link, spec: KeyringSpec, names: Sequence[str]) -> str:
        return ", ".join(f"{oskeyring.SERVICE} / {n}" for n in names)


DESTINATION: Final = KeyringDestination()
