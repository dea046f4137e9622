"""The keyring is a destination like the others (DESIGN §13.2): its own `send` saves the values,
with no program and nothing outside its module treating it apart, in the store its link was
checked on (the environment the request was made from, never this process's), against a real
Secret Service on a private bus (tests/keyring_service.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from keyring_service import SecretService

from offprompt.sinks import destinations
from offprompt.sinks.destinations.interface import Call, Ran, Sent
from offprompt.sinks.destinations.keyring import KeyringSpec

KEYRING = destinations.KINDS[KeyringSpec.kind]


def _no_program(call: Call) -> Ran:
    raise AssertionError("the keyring runs no program")


def test_its_send_saves_each_value_and_runs_nothing(
    keyring_env: SecretService, project: Path, canary: str
) -> None:
    """`send` itself saves each value under offprompt / NAME and says so as `saved`, never
    calling the `run` it is handed."""
    env = {"DBUS_SESSION_BUS_ADDRESS": keyring_env.address}
    link = KEYRING.link(project, KeyringSpec(), env)

    sent = KEYRING.send(link, KeyringSpec(), {"KR_SEND": canary}, _no_program)

    assert Sent(("offprompt / KR_SEND",), said="saved") == sent
    assert keyring_env.lookup("KR_SEND") == canary
    assert canary not in repr(sent)


def test_it_saves_in_the_store_its_link_was_checked_on(
    keyring_env: SecretService, project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The link keeps the session bus the request's environment named; the send opens that one,
    whatever this process's own environment says (here: none)."""
    env = {"DBUS_SESSION_BUS_ADDRESS": keyring_env.address}
    link = KEYRING.link(project, KeyringSpec(), env)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")

    sent = KEYRING.send(link, KeyringSpec(), {"KR_LINKED": canary}, _no_program)

    assert ((), "saved") == (sent.problems, sent.said)
    assert keyring_env.lookup("KR_LINKED") == canary


def test_planned_and_sent_like_any_kind(
    keyring_env: SecretService, project: Path, canary: str
) -> None:
    """Through `destinations.plan` and `send` with no PATH at all: nothing is missing, no
    program is looked for, and the result says what was saved where."""
    env = {"PATH": "", "DBUS_SESSION_BUS_ADDRESS": keyring_env.address}
    (planned,) = destinations.plan(project, [KeyringSpec()], ["KR_PLAN"], env=env)

    assert (None, None, False) == (planned.program, planned.missing, planned.runs_program)
    (result,) = destinations.send(project, [planned], {"KR_PLAN": canary}, {0}, env=env)
    assert ("sent", "saved offprompt / KR_PLAN") == (result.status, result.detail)
    assert keyring_env.lookup("KR_PLAN") == canary


def test_another_bus_at_the_send_is_a_changed_link(
    keyring_env: SecretService, project: Path, canary: str
) -> None:
    """A request whose environment names another session bus at the send than when the page
    was planned: nothing saved, the link changed."""
    env = {"PATH": "", "DBUS_SESSION_BUS_ADDRESS": keyring_env.address}
    planned = destinations.plan(project, [KeyringSpec()], ["KR_MOVED"], env=env)
    moved = {**env, "DBUS_SESSION_BUS_ADDRESS": keyring_env.address + ",guid=0"}

    (result,) = destinations.send(project, planned, {"KR_MOVED": canary}, {0}, env=moved)

    assert "failed" == result.status
    assert keyring_env.lookup("KR_MOVED") is None
