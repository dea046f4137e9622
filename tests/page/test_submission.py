"""`read_submission`: a plain form and a seal read into the same typed Submission; bad posts fail
as their own kind, in the order the page has always checked them."""

from __future__ import annotations

import dataclasses
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from offprompt.crypto.seal import SealKey, b64u_encode, plaintext, seal
from offprompt.page.submission import (
    BadFpKey,
    BadSubmission,
    NotSealed,
    SealUnopened,
    Submission,
    WrongNonce,
    read_submission,
)
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import Held, RequestRecord, RequestStore

if TYPE_CHECKING:
    from offprompt.sinks.destinations import Planned

FP_KEY = b64u_encode(bytes(range(32)))


def _pair(tmp_path: Path, destinations: int = 2) -> tuple[RequestRecord, RequestRecord]:
    """One request twice, remote (with its key) and local: same names, token and nonce."""
    remote = RequestStore().create(
        (SecretSpec("API_KEY"), SecretSpec("OTHER_KEY")),
        SinkSpec(),
        tmp_path,
        "r",
        ttl=300,
        remote=True,
    )
    # read_submission counts the destinations only; the planned ones themselves are not read.
    remote.also = cast("tuple[Planned, ...]", (object(),) * destinations)
    remote.delivery.seal_key = SealKey()
    return remote, dataclasses.replace(remote, remote=False)


def _sealed(req: RequestRecord, values: dict[str, str], **kw: Any) -> str:
    key = req.delivery.seal_key
    assert key is not None
    return seal(key.public_point, plaintext(values, **kw), token=req.token, nonce=req.nonce)


CASES: list[tuple[dict[str, str], dict[str, Any]]] = [
    ({}, {}),
    ({"check": "1"}, {"check": True}),
    (
        {"allow_tracked": "1", "fp_key": FP_KEY, "also.1": "1", "check": "1"},
        {"allow_tracked": True, "fp_key": FP_KEY, "also": [1], "check": True},
    ),
    ({"anyway": "1", "also.0": "1", "also.1": "1"}, {"anyway": True, "also": [0, 1]}),
]


@pytest.mark.parametrize(("options", "sealed_options"), CASES)
def test_a_form_and_a_seal_that_mean_the_same_read_the_same(
    tmp_path: Path, options: dict[str, str], sealed_options: dict[str, Any]
) -> None:
    """The seal's plaintext becomes the same Submission a plain post of it would."""
    remote, local = _pair(tmp_path)
    canary = "canary-" + secrets.token_hex(8)
    values = {"API_KEY": canary, "OTHER_KEY": ""}
    form = {"nonce": local.nonce, **values, **options}
    from_form = read_submission(form, local)
    posted = {"nonce": remote.nonce, "sealed": _sealed(remote, values, **sealed_options)}
    assert read_submission(posted, remote) == from_form
    assert dict(from_form.values) == values


def test_every_option_is_read_into_its_field(tmp_path: Path) -> None:
    """Each posted option lands in its own typed field."""
    _, local = _pair(tmp_path)
    form = {"nonce": local.nonce, "API_KEY": "x", "allow_tracked": "1", "fp_key": FP_KEY}
    form |= {"also.1": "1", "check": "1"}
    expected = Submission(
        values={"API_KEY": "x"},
        allow_tracked=True,
        fp_key=bytes(range(32)),
        also=(1,),
        check=True,
        nonce=local.nonce,
    )
    assert read_submission(form, local) == expected


def test_unasked_names_and_unknown_destinations_are_dropped(tmp_path: Path) -> None:
    """Only the request's names and destinations survive, from a form or a seal alike."""
    remote, local = _pair(tmp_path, destinations=1)
    form = {"nonce": local.nonce, "API_KEY": "a", "EXTRA": "b", "also.0": "1", "also.5": "1"}
    sealed = _sealed(remote, {"API_KEY": "a", "EXTRA": "b"}, also=[0, 5])
    for read in (
        read_submission(form, local),
        read_submission({"nonce": remote.nonce, "sealed": sealed}, remote),
    ):
        assert (dict(read.values), read.also) == ({"API_KEY": "a"}, (0,))


def test_a_box_is_ticked_only_by_its_exact_name_and_one(tmp_path: Path) -> None:
    """`also.01`, `also.0=on` and `check=true` tick nothing, as a plain post never did."""
    _, local = _pair(tmp_path)
    form = {"nonce": local.nonce, "also.01": "1", "also.0": "on", "check": "true"}
    read = read_submission(form, local)
    assert (read.also, read.check, read.allow_tracked, read.anyway) == ((), False, False, False)


def test_write_anyway_checks_again(tmp_path: Path) -> None:
    """`anyway` without `check` still asks the providers (DESIGN §16)."""
    _, local = _pair(tmp_path)
    read = read_submission({"nonce": local.nonce, "anyway": "1"}, local)
    assert (read.check, read.anyway) == (True, True)


def test_a_wrong_nonce_is_refused_before_anything_else(tmp_path: Path) -> None:
    """A wrong nonce wins over a bad fp_key, and over a good seal."""
    remote, local = _pair(tmp_path)
    with pytest.raises(WrongNonce):
        read_submission({"nonce": "x" + local.nonce, "fp_key": "bad"}, local)
    sealed = _sealed(remote, {"API_KEY": "a"})
    with pytest.raises(WrongNonce):
        read_submission({"sealed": sealed}, remote)


@pytest.mark.parametrize(
    "extra", [{"API_KEY": "a"}, {"fp_key": FP_KEY}, {}], ids=["value", "option", "no-seal"]
)
def test_a_remote_post_must_carry_only_the_nonce_and_its_seal(
    tmp_path: Path, extra: dict[str, str]
) -> None:
    """Any plain field beside the seal (or no seal at all) is NotSealed."""
    remote, _ = _pair(tmp_path)
    form = {"nonce": remote.nonce, **extra}
    if extra:
        form["sealed"] = _sealed(remote, {"API_KEY": "a"})
    with pytest.raises(NotSealed):
        read_submission(form, remote)


def test_a_seal_that_does_not_open_is_refused(tmp_path: Path) -> None:
    """Garbage, another nonce's seal, another request's key and a dropped key all fail alike."""
    remote, _ = _pair(tmp_path)
    other, _ = _pair(tmp_path)
    key = remote.delivery.seal_key
    assert key is not None
    bad = [
        "v1.garbage",
        seal(key.public_point, plaintext({}), token=remote.token, nonce="other"),
        _sealed(other, {"API_KEY": "a"}),
    ]
    for text in bad:
        with pytest.raises(SealUnopened):
            read_submission({"nonce": remote.nonce, "sealed": text}, remote)
    good = _sealed(remote, {"API_KEY": "a"})
    remote.delivery.seal_key = None
    with pytest.raises(SealUnopened):
        read_submission({"nonce": remote.nonce, "sealed": good}, remote)


def test_a_malformed_fingerprint_key_is_refused_from_a_form_or_a_seal(tmp_path: Path) -> None:
    """An fp_key that is not 32 bytes of canonical base64url is BadFpKey; an empty one is none."""
    remote, local = _pair(tmp_path)
    with pytest.raises(BadFpKey):
        read_submission({"nonce": local.nonce, "fp_key": FP_KEY[:-1]}, local)
    posted = {"nonce": remote.nonce, "sealed": _sealed(remote, {}, fp_key="AAAA")}
    with pytest.raises(BadFpKey):
        read_submission(posted, remote)
    assert read_submission({"nonce": local.nonce, "fp_key": ""}, local).fp_key is None


def test_every_bad_post_is_one_kind_of_bad_submission() -> None:
    """The handler catches one type for all of them."""
    for kind in (WrongNonce, NotSealed, SealUnopened, BadFpKey):
        assert issubclass(kind, BadSubmission)
        assert str(kind()) == kind.__name__


def test_no_value_or_key_is_in_the_repr(tmp_path: Path) -> None:
    """A logged Submission shows its options, never a value, the fp_key or the nonce."""
    _, local = _pair(tmp_path)
    canary = "canary-" + secrets.token_hex(8)
    read = read_submission({"nonce": local.nonce, "API_KEY": canary, "fp_key": FP_KEY}, local)
    for hidden in (canary, FP_KEY, repr(bytes(range(32))), local.nonce):
        assert hidden not in repr(read)


def test_write_anyway_puts_the_held_values_under_those_posted_again() -> None:
    """Held values stand unless posted again, blank ones do not count (DESIGN §16)."""
    held = Held({"API_KEY": "held-a", "OTHER_KEY": "held-b"})
    posted = Submission(values={"API_KEY": " \t", "OTHER_KEY": "new-b"}, anyway=True)
    confirmed = posted.confirming(held)
    assert dict(confirmed.values) == {"API_KEY": "held-a", "OTHER_KEY": "new-b"}
    assert dataclasses.replace(confirmed, values=posted.values) == posted


@pytest.mark.parametrize(("anyway", "held"), [(False, Held({"API_KEY": "held"})), (True, None)])
def test_without_anyway_or_held_values_the_post_is_as_sent(anyway: bool, held: Held | None) -> None:
    """Only a "Write anyway" post with something held takes the held values."""
    posted = Submission(values={"API_KEY": "sent"}, anyway=anyway)
    assert posted.confirming(held) is posted


@pytest.mark.parametrize(
    ("held", "posted", "expected"),
    [
        # The held submit's choices stand when the post repeats them...
        ((True, (0, 1)), (True, (0, 1)), (True, (0, 1))),
        # ...a post may narrow them: untick a destination, drop the tracked-file override...
        ((True, (0, 1)), (False, (1,)), (False, (1,))),
        # ...but never widen them: a box the person left unticked stays unticked.
        ((False, ()), (True, (0, 1)), (False, ())),
        ((False, (1,)), (True, (0, 1)), (False, (1,))),
    ],
)
def test_write_anyway_may_narrow_the_held_choices_never_widen_them(
    held: tuple[bool, tuple[int, ...]],
    posted: tuple[bool, tuple[int, ...]],
    expected: tuple[bool, tuple[int, ...]],
) -> None:
    """DESIGN §16: "Write anyway" confirms the held submit as the person sent it."""
    before = Held({"API_KEY": "held"}, allow_tracked=held[0], also=held[1])
    post = Submission(values={}, allow_tracked=posted[0], also=posted[1], anyway=True)
    confirmed = post.confirming(before)
    assert (confirmed.allow_tracked, confirmed.also) == expected
