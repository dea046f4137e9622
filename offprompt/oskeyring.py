"""The operating system's own keyring (DESIGN §13.2): one key kept once, filled into later
requests from the page, in any project.

Only a real store, reached directly: the Secret Service on Linux (through SecretStorage, on the
session bus the environment names), the macOS Keychain, the Windows Credential Locker. Never
keyring's chain of backends, which would pick a plaintext file (`keyrings.alt`) or the null
backend without a word. A store that is missing, or locked so that only a prompt could open it,
is `KeyringUnavailable`, saying which and how to get one; offprompt never asks to unlock one.

Each item is saved under service `offprompt`, username the key's name, so
`secret-tool lookup service offprompt username NAME` finds it; every earlier item there,
whoever saved it, is deleted first. The names offprompt saved (names only) are kept beside the
journal, for `offprompt keys --keyring`.

Third-party code (keyring, SecretStorage, jeepney) is imported only when a store is opened.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from offprompt.statedir import journal_path

__all__ = [
    "INSTALL",
    "NAMES_FILE",
    "SERVICE",
    "KeyringUnavailable",
    "NotInKeyring",
    "OsKeyring",
    "fill",
    "offered",
    "open_keyring",
    "record_saved",
    "saved_names",
]

SERVICE: Final = "offprompt"
NAMES_FILE: Final = "keyring.json"
"""Beside the journal: the names offprompt saved in the keyring, never a value."""
TIMEOUT: Final = 10.0
"""Seconds one keyring call may take: a store that does not answer is a refusal, not a hang."""
INSTALL: Final = "pip install 'offprompt[keyring]'"
_APPLICATION: Final = "offprompt"

T = TypeVar("T")


class KeyringUnavailable(Exception):
    """No real keyring can be used here; the message says which, and how to get one.

    Outside the error root on purpose: the callers turn it into their own refusal (NotLinked
    before a page, a 400 on a submit, a line from the CLI). Never holds a value.
    """


class NotInKeyring(Exception):
    """A key the person ticked to fill from the keyring is not there (any more): the message
    names the keys and the keyring, never a value.

    Outside the error root on purpose: the page's answer table (`page.answers`) gives it its
    400, naming the keyring, and nothing is written.
    """


class OsKeyring(Protocol):
    """A usable store: `where` names it for the page, results and the CLI."""

    where: str

    def has(self, name: str) -> bool:
        """Whether an item is saved for `name` (its value is not read)."""
        ...

    def get(self, name: str) -> str | None:
        """The value saved for `name`, or None."""
        ...

    def replace(self, name: str, value: str) -> None:
        """Delete every item saved for `name`, whoever saved it, then save `value`."""
        ...


def _bounded(call: Callable[[], T], what: str) -> T:
    """`call` in a daemon thread, given TIMEOUT seconds: a bus or daemon that never answers, or
    any error of the store's, turns into KeyringUnavailable, and a thread left waiting never
    delays the exit."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["ok"] = call()
        except BaseException as exc:  # handed to the caller below
            box["err"] = exc

    worker = threading.Thread(target=run, name="offprompt-keyring", daemon=True)
    worker.start()
    worker.join(TIMEOUT)
    if worker.is_alive():
        raise KeyringUnavailable(f"the {what} did not answer within {TIMEOUT:g} s")
    err = box.get("err")
    if isinstance(err, KeyringUnavailable):
        raise err
    if err is not None:
        # The store's own error, by its class only: its text is the store's, not ours to show.
        raise KeyringUnavailable(f"the {what} failed ({type(err).__name__})") from None
    result: T = box["ok"]
    return result


class _SecretService:
    """The Secret Service (GNOME Keyring, KWallet, KeePassXC) on the session bus `address`."""

    where = "Secret Service keyring"

    def __init__(self, address: str) -> None:
        self._address = address

    def _with(self, use: Callable[[Any], T]) -> T:
        """`use(collection)` on a fresh connection to the default collection, checked
        unlocked; KeyringUnavailable otherwise (never a prompt to unlock it)."""
        import secretstorage
        from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]
        from secretstorage.exceptions import SecretStorageException

        def run() -> T:
            try:
                conn = open_dbus_connection(bus=self._address)
            except (OSError, ValueError) as exc:
                raise KeyringUnavailable(
                    f"the session bus could not be reached ({type(exc).__name__})"
                ) from None
            try:
                if not secretstorage.check_service_availability(conn):
                    raise KeyringUnavailable("no Secret Service runs on the session bus")
                try:
                    collection = secretstorage.Collection(conn)
                except SecretStorageException:
                    raise KeyringUnavailable(
                        "the Secret Service has no default collection"
                    ) from None
                if collection.is_locked():
                    raise KeyringUnavailable(
                        "the Secret Service's default collection is locked; unlock it (log in"
                        " to the desktop, or open your keyring app) and ask again"
                    )
                return use(collection)
            except SecretStorageException as exc:
                raise KeyringUnavailable(
                    f"the Secret Service refused ({type(exc).__name__})"
                ) from None
            finally:
                conn.close()

        return _bounded(run, "Secret Service")

    @staticmethod
    def _query(name: str) -> dict[str, str]:
        return {"service": SERVICE, "username": name}

    def check(self) -> None:
        self._with(lambda collection: None)

    def has(self, name: str) -> bool:
        return self._with(lambda c: any(True for _ in c.search_items(self._query(name))))

    def get(self, name: str) -> str | None:
        def read(collection: Any) -> str | None:
            for item in collection.search_items(self._query(name)):
                secret: bytes = item.get_secret()
                return secret.decode("utf-8")
            return None

        return self._with(read)

    def replace(self, name: str, value: str) -> None:
        def save(collection: Any) -> None:
            for item in list(collection.search_items(self._query(name))):
                item.delete()
            attributes = {**self._query(name), "application": _APPLICATION}
            label = f"offprompt: {name}"
            collection.create_item(label, attributes, value.encode("utf-8"))

        self._with(save)


class _KeyringClass:
    """keyring's own class for the macOS Keychain or the Windows Credential Locker, used
    directly: never `keyring.get_keyring()`, which walks the chain."""

    def __init__(self, backend: Any, where: str) -> None:
        self._backend = backend
        self.where = where

    def check(self) -> None:
        priority = _bounded(lambda: float(type(self._backend).priority), self.where)
        if priority <= 0:
            raise KeyringUnavailable(f"the {self.where} cannot be used here")

    def has(self, name: str) -> bool:
        return self.get(name) is not None

    def get(self, name: str) -> str | None:
        value: str | None = _bounded(lambda: self._backend.get_password(SERVICE, name), self.where)
        return value

    def replace(self, name: str, value: str) -> None:
        def save() -> None:
            # Its delete removes one item at a time: until none is left, then the new one.
            for _ in range(64):
                if self._backend.get_password(SERVICE, name) is None:
                    break
                self._backend.delete_password(SERVICE, name)
            self._backend.set_password(SERVICE, name, value)

        _bounded(save, self.where)


def open_keyring(env: Mapping[str, str] | None = None) -> OsKeyring:
    """The OS's own keyring, checked usable now; KeyringUnavailable saying which and how to
    get one otherwise."""
    env = os.environ if env is None else env
    try:
        import keyring  # noqa: F401  (the extra: it brings SecretStorage on Linux)
    except ImportError:
        raise KeyringUnavailable(
            f"the keyring extra is not installed; install it with {INSTALL}"
        ) from None
    store: _SecretService | _KeyringClass
    try:
        if sys.platform == "darwin":
            from keyring.backends import macOS

            store = _KeyringClass(macOS.Keyring(), "macOS Keychain")
        elif sys.platform == "win32":
            from keyring.backends import Windows

            store = _KeyringClass(Windows.WinVaultKeyring(), "Windows Credential Locker")
        else:
            import secretstorage  # noqa: F401

            address = env.get("DBUS_SESSION_BUS_ADDRESS", "")
            if not address:
                raise KeyringUnavailable(
                    "no Secret Service: DBUS_SESSION_BUS_ADDRESS is not set (no desktop session"
                    " here). Run offprompt in a desktop session with GNOME Keyring, KWallet or"
                    " KeePassXC's Secret Service on; a plaintext file keyring is never used"
                )
            store = _SecretService(address)
    except ImportError:
        raise KeyringUnavailable(
            f"this system's keyring backend could not be loaded; reinstall it with {INSTALL}"
        ) from None
    store.check()
    return store


def _names_path(env: Mapping[str, str] | None) -> Path:
    return journal_path(env).parent / NAMES_FILE


def saved_names(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The names offprompt saved in the keyring, sorted; () when it never saved one (or the
    list cannot be read: then nothing is offered, and nothing is lost)."""
    try:
        data = json.loads(_names_path(env).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    names = data.get("names") if isinstance(data, dict) else None
    if not isinstance(names, list):
        return ()
    return tuple(sorted({n for n in names if isinstance(n, str)}))


def record_saved(names: Iterable[str], env: Mapping[str, str] | None = None) -> None:
    """Add `names` to the saved list (names only), replaced whole, readable by the owner only."""
    from offprompt.disk import paths

    path = _names_path(env)
    merged = sorted({*saved_names(env), *names})
    paths.make_private_folders(path.parent)
    paths.replace_file(path, json.dumps({"names": merged}).encode("utf-8"))


def offered(names: Iterable[str], env: Mapping[str, str] | None = None) -> frozenset[str]:
    """Which of `names` the page may offer to fill: those the keyring holds an item for under
    offprompt / NAME, asked by name only (no value is read on Linux). An unusable keyring, or
    none, offers none (the field is typed, as on any page)."""
    wanted = list(names)
    try:
        store = open_keyring(env)
        return frozenset(n for n in wanted if store.has(n))
    except KeyringUnavailable:
        return frozenset()


def fill(
    values: Mapping[str, str], ticked: Iterable[str], env: Mapping[str, str] | None = None
) -> dict[str, str]:
    """`values` with each ticked name whose field is blank filled from the keyring;
    NotInKeyring naming the keyring and the missing names (or why it cannot be read)."""
    blank = [n for n in ticked if not values.get(n, "").strip(" \t\r\n")]
    if not blank:
        return dict(values)
    try:
        store = open_keyring(env)
    except KeyringUnavailable as exc:
        raise NotInKeyring(
            f"Nothing was written: {', '.join(blank)} cannot be read from your keyring ({exc})."
        ) from None
    out = dict(values)
    missing: list[str] = []
    for name in blank:
        try:
            value = store.get(name)
        except KeyringUnavailable:
            value = None
        if value is None or not value.strip(" \t\r\n"):
            missing.append(name)
        else:
            out[name] = value
    if missing:
        raise NotInKeyring(
            f"Nothing was written: {', '.join(missing)} is no longer saved in your keyring"
            f" ({store.where}, service {SERVICE}). Type the value, or untick it."
        )
    return out
