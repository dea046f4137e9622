"""The frozen values every layer passes: one spec per destination kind, literals defined once."""

import dataclasses
from typing import get_args

import pytest

from offprompt import spec
from offprompt.collect.schema import request_schema
from offprompt.sinks.destinations import KINDS
from offprompt.tools import schemas


def test_each_destination_kind_has_its_own_spec_and_module() -> None:
    """`DestinationKind`, the specs of the `DestinationSpec` union and `destinations.KINDS`
    name the same kinds, in the same order."""
    specs = tuple(s.kind for s in get_args(spec.DestinationSpec))
    assert (get_args(spec.DestinationKind), get_args(spec.DestinationKind)) == (specs, tuple(KINDS))


def test_a_destination_spec_holds_only_what_its_kind_chooses() -> None:
    """No spec carries another kind's field: GitHub's environment is not Vercel's list."""
    fields = {
        s.kind: {f.name for f in dataclasses.fields(s)} for s in get_args(spec.DestinationSpec)
    }
    assert {
        "github": {"environment"},
        "vercel": {"environments"},
        "cloudflare": {"env"},
        "fly": set(),
    } == fields


def test_specs_of_two_kinds_are_never_equal() -> None:
    """A repeated `also` entry is found by equality, which includes the kind."""
    other: object = spec.CloudflareSpec()
    assert spec.GithubSpec() != other
    assert spec.FlySpec() == spec.FlySpec()


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
        (schemas.result_output()["properties"]["status"]["enum"], spec.RequestStatus),
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
