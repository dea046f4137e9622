"""`Prepared`: a checked submission, frozen, its values out of repr, its digest binding every
value and option (the confirmation code is made from it, DESIGN §17)."""

import dataclasses

import pytest

from offprompt.spec import Prepared


def make(**kw: object) -> Prepared:
    base: dict[str, object] = {
        "values": {"API_KEY": "canary-value-1", "SESSION": "made-here"},
        "supplied": ("API_KEY",),
        "server_made": ("SESSION",),
        "checked": (("API_KEY", "ok"),),
        "allow_tracked": False,
        "fp_key": bytes(32),
        "also": (0,),
    }
    base.update(kw)
    return Prepared(**base)  # type: ignore[arg-type]


def test_repr_holds_no_value_and_no_fingerprint_key() -> None:
    """Neither a value nor the fingerprint key is in repr."""
    text = repr(make())
    assert "canary-value-1" not in text
    assert "made-here" not in text
    assert "values" not in text
    assert "fp_key" not in text


def test_it_is_frozen_all_the_way_down() -> None:
    """No field can be set, and the values cannot be changed through the mapping."""
    prepared = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        prepared.allow_tracked = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        prepared.values["API_KEY"] = "other"  # type: ignore[index]


def test_also_is_kept_sorted_and_unique() -> None:
    """The ticked destinations are a set of indices, in one order."""
    assert make(also=(2, 0, 2)).also == (0, 2)


def test_the_digest_is_stable() -> None:
    """The same submission has the same 32-byte digest."""
    assert make().digest() == make().digest()
    assert len(make().digest()) == 32


@pytest.mark.parametrize(
    "change",
    [
        {"values": {"API_KEY": "canary-value-2", "SESSION": "made-here"}},
        {"values": {"API_KEY": "canary-value-1", "SESSION": "made-else"}},
        {"supplied": ("API_KEY", "SESSION"), "server_made": ()},
        {"checked": (("API_KEY", "rejected"),)},
        {"allow_tracked": True},
        {"fp_key": bytes([1] * 32)},
        {"fp_key": None},
        {"also": ()},
        {"also": (0, 1)},
    ],
)
def test_the_digest_binds_every_value_and_option(change: dict[str, object]) -> None:
    """Any other value, name, verdict or option gives another digest."""
    assert make(**change).digest() != make().digest()
