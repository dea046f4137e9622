"""The frozen values every layer passes: one spec per destination kind in its own module,
literals defined once."""

import dataclasses
from typing import get_args

import pytest

from offprompt import spec
from offprompt.collect.schema import request_schema
from offprompt.sinks.destinations import KINDS
from offprompt.tools import schemas


def _spec_types() -> dict[str, type]:
    """Each registered kind's spec class, as its module's parse makes it."""
    entries = {
        "github": {},
        "vercel": {"environments": ["production"]},
        "cloudflare": {},
        "fly": {},
        "vault": {"path": "secret/app"},
        "aws": {"secret_id": "app"},
        "keyring": {},
    }
    return {
        kind: type(dest.parse({"kind": kind, **entries[kind]}, ("also", 0)))
        for kind, dest in KINDS.items()
    }


def test_each_destination_kind_has_its_own_spec_in_its_own_module() -> None:
    """Each kind's spec is defined in that kind's module and says that kind; `spec` itself
    names no kind (DestinationSpec is a Protocol)."""
    types = _spec_types()
    assert {k: (t.kind, t.__module__) for k, t in types.items()} == {
        k: (k, type(d).__module__) for k, d in KINDS.items()
    }
    assert not hasattr(spec, "DestinationKind")


def test_a_destination_spec_holds_only_what_its_kind_chooses() -> None:
    """No spec carries another kind's field: GitHub's environment is not Vercel's list."""
    fields = {k: {f.name for f in dataclasses.fields(t)} for k, t in _spec_types().items()}
    assert {
        "github": {"environment"},
        "vercel": {"environments"},
        "cloudflare": {"env"},
        "fly": set(),
        "vault": {"path", "namespace"},
        "aws": {"secret_id"},
        "keyring": set(),
    } == fields
    assert {k: set(d.fields) for k, d in KINDS.items()} == fields


def test_specs_of_two_kinds_are_never_equal() -> None:
    """A repeated `also` entry is found by equality, which includes the kind."""
    types = _spec_types()
    other: object = types["cloudflare"]()
    assert types["github"]() != other
    assert types["fly"]() == types["fly"]()


@pytest.mark.parametrize(
    ("enum", "literal"),
    [
        (request_schema()["properties"]["sink"]["properties"]["kind"]["enum"], spec.SinkKind),
        (
            request_schema()["properties"]["secrets"]["items"]["properties"]["generate"][
                "properties"
            ]["encoding"]["enum"],
            spec.Encoding,
        ),
        (schemas.result_output()["properties"]["status"]["enum"], spec.ShownStatus),
    ],
)
def test_schema_enums_are_the_literals(enum: list[str], literal: object) -> None:
    """The schemas take their enums from the one definition of each literal."""
    assert list(get_args(literal)) == enum


@pytest.mark.parametrize(
    ("kept", "file", "fingerprint", "headline"),
    [
        ((), ".env", "🍋 🥝 🌮 🧀", "Wrote 2 values to .env · fingerprint 🍋 🥝 🌮 🧀"),
        (("B",), ".env", None, "Wrote 1 value to .env"),
        (("A", "B"), ".env", None, ".env already held A, B"),
        ((), "", "🍋 🥝 🌮 🧀", "Sent 2 values, no file written · fingerprint 🍋 🥝 🌮 🧀"),
    ],
)
def test_the_headline_of_a_write(
    kept: tuple[str, ...], file: str, fingerprint: str | None, headline: str
) -> None:
    """The result's first line, as DESIGN §3.2 words it."""
    outcome = spec.WriteOutcome(file=file, names=("A", "B"), kept=kept, fingerprint=fingerprint)
    assert headline == outcome.headline()


def test_the_terminal_headline_leaves_the_fingerprint_to_its_own_line() -> None:
    """`fingerprint=False` (the terminal prints `Fingerprint …` on a line of its own)."""
    outcome = spec.WriteOutcome(file=".env", names=("A",), fingerprint="🍋 🥝 🌮 🧀")
    assert "Wrote 1 value to .env" == outcome.headline(fingerprint=False)
