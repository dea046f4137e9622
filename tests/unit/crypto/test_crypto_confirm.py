"""The confirmation code (DESIGN §17): 7 Crockford base32 characters from an HMAC, read back
whatever the person's case, spacing and look-alike letters."""

import hashlib

import pytest

from offprompt.crypto.confirm import (
    ALPHABET,
    code_for,
    matches,
    new_confirm_key,
    normalize,
    shown,
)

KEY = bytes(range(32))
DIGEST = hashlib.sha256(b"a submission").digest()


def test_a_code_is_seven_crockford_characters() -> None:
    """35 bits in Crockford's alphabet: no I, L, O or U."""
    code = code_for(KEY, "req1", DIGEST)
    assert len(code) == 7
    assert set(code) <= set(ALPHABET)
    assert not set(code) & set("ILOU")


def test_the_code_is_the_hmac_of_the_request_and_submission() -> None:
    """The same key, id and digest give the same code; each of them changes it."""
    code = code_for(KEY, "req1", DIGEST)
    assert code == code_for(KEY, "req1", DIGEST)
    others = {
        code_for(bytes(32), "req1", DIGEST),
        code_for(KEY, "req2", DIGEST),
        code_for(KEY, "req1", hashlib.sha256(b"another").digest()),
    }
    assert code not in others


def test_codes_spread_over_the_alphabet() -> None:
    """Every character position takes many values over many keys (no fixed prefix)."""
    codes = [code_for(new_confirm_key(), "req1", DIGEST) for _ in range(400)]
    for i in range(7):
        assert len({c[i] for c in codes}) > 20


def test_a_confirm_key_is_32_random_bytes() -> None:
    """Per request: 32 bytes, never the same twice."""
    a, b = new_confirm_key(), new_confirm_key()
    assert (len(a), len(b)) == (32, 32)
    assert a != b


def test_a_short_key_is_refused() -> None:
    """The key is exactly 32 bytes."""
    with pytest.raises(ValueError, match="32 bytes"):
        code_for(b"short", "req1", DIGEST)


def test_shown_puts_a_hyphen_after_the_fourth() -> None:
    """The page shows ABCD-EFG."""
    assert shown("ABCDEFG") == "ABCD-EFG"


@pytest.mark.parametrize(
    "typed",
    ["ABCD-EFG", "abcd-efg", "abcdefg", " AB CD EF G ", "ABCD\u2013EFG", "abcd\u2010efg"],
)
def test_normalize_ignores_case_blanks_and_hyphens(typed: str) -> None:
    """What the person types is read as the page's code."""
    assert normalize(typed) == "ABCDEFG"


def test_normalize_reads_look_alike_letters() -> None:
    """Crockford's rule: I and L are 1, O is 0."""
    assert normalize("ilo-0123") == "1100123"


@pytest.mark.parametrize(
    "typed",
    ["", "ABCDEF", "ABCDEFGH", "ABCD-EFU", "ABCD_EFG", "ABCD.EFG", "ABCDEF\u00e9", "A" * 65],
)
def test_normalize_refuses_what_is_not_a_code(typed: str) -> None:
    """Wrong length, a U, punctuation or another letter: not a code."""
    assert normalize(typed) is None


def test_matches_accepts_the_code_as_typed_and_refuses_others() -> None:
    """A typed code matches after normalizing; any other does not."""
    code = code_for(KEY, "req1", DIGEST)
    assert matches(code, shown(code).lower())
    assert matches(code, " ".join(code))
    other = ("1" if code[0] != "1" else "2") + code[1:]
    assert not matches(code, other)
    assert not matches(code, "")
    assert not matches(code, "not a code at all")
