"""The OS's own keyring (DESIGN §13.2), against a real Secret Service: what is saved, what is
replaced, and every way a keyring that cannot be used is refused with words saying which."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from keyring_service import SecretService, programs_or_skip, running

from offprompt import oskeyring


def test_replace_leaves_exactly_one_item_whoever_saved_the_others(
    keyring_env: SecretService, canary: str
) -> None:
    """Items another program saved under offprompt / NAME are deleted first: one remains, ours."""
    keyring_env.store("KR_ONE", "old-value-one")
    keyring_env.store("KR_ONE", "old-value-two", application="someone-else")
    assert keyring_env.count("KR_ONE") == 2
    store = oskeyring.open_keyring()
    store.replace("KR_ONE", canary)
    assert keyring_env.count("KR_ONE") == 1
    assert keyring_env.lookup("KR_ONE") == canary
    assert store.has("KR_ONE")
    assert store.get("KR_ONE") == canary
    assert not store.has("KR_NEVER_SAVED")


def test_no_session_bus_is_refused_saying_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a session bus there is no Secret Service: refused, never a file keyring."""
    pytest.importorskip("keyring", reason="the keyring extra is not installed")
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    with pytest.raises(oskeyring.KeyringUnavailable, match="DBUS_SESSION_BUS_ADDRESS"):
        oskeyring.open_keyring()


def test_a_bus_that_is_not_there_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object
) -> None:
    """A session bus address nothing listens on: refused, saying the bus was not reached."""
    pytest.importorskip("keyring", reason="the keyring extra is not installed")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={tmp_path}/no-bus")
    with pytest.raises(oskeyring.KeyringUnavailable, match="session bus"):
        oskeyring.open_keyring()


def test_the_extra_missing_is_refused_saying_how_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the keyring extra: refused, naming the pip command."""
    monkeypatch.setitem(sys.modules, "keyring", None)  # an import of it now fails, as uninstalled
    with pytest.raises(oskeyring.KeyringUnavailable, match=r"offprompt\[keyring\]"):
        oskeyring.open_keyring()


def test_saved_names_hold_names_only(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, canary: str
) -> None:
    """The list beside the journal holds names, merged, never a value."""
    monkeypatch.setenv("OFFPROMPT_STATE_DIR", str(tmp_path))
    oskeyring.record_saved(["B_KEY", "A_KEY"])
    oskeyring.record_saved(["A_KEY", "C_KEY"])
    assert oskeyring.saved_names() == ("A_KEY", "B_KEY", "C_KEY")
    text = (tmp_path / oskeyring.NAMES_FILE).read_text()  # type: ignore[operator]
    assert canary not in text


def test_a_locked_keyring_is_refused_without_a_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Secret Service whose default collection is locked: refused saying so, never unlocked
    (that would prompt); a service of its own, so the session's stays unlocked."""
    programs_or_skip()
    import secretstorage
    from jeepney.io.blocking import open_dbus_connection  # type: ignore[import-untyped]

    (tmp_path / "locked").mkdir()
    with running(tmp_path / "locked") as service:
        conn = open_dbus_connection(bus=service.address)
        try:
            secretstorage.Collection(conn).lock()
        finally:
            conn.close()
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", service.address)
        with pytest.raises(oskeyring.KeyringUnavailable, match="locked"):
            oskeyring.open_keyring()
