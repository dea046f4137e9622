"""Tokens, nonces, request ids, fingerprint keys and constant-time comparison."""

import base64
import re

import pytest

from offprompt.crypto import tokens


def test_token_is_32_lowercase_hex() -> None:
    """A page token is 16 random bytes written as 32 lowercase hex digits."""
    token = tokens.new_token()
    assert re.fullmatch(r"[0-9a-f]{32}", token)
    assert 16 == len(bytes.fromhex(token))


def test_tokens_differ() -> None:
    """Two tokens are never alike."""
    assert 100 == len({tokens.new_token() for _ in range(100)})


def test_nonce_is_base64url_without_padding_and_at_least_128_bits() -> None:
    """A nonce uses only the base64url alphabet, has no padding and carries ≥128 bits."""
    nonce = tokens.new_nonce()
    assert re.fullmatch(r"[A-Za-z0-9_-]+", nonce)
    assert len(base64.urlsafe_b64decode(nonce + "=" * (-len(nonce) % 4))) * 8 >= 128


def test_request_id_is_12_lowercase_base32() -> None:
    """A request id is 12 characters of lowercase base32."""
    assert re.fullmatch(r"[a-z2-7]{12}", tokens.new_request_id())


def test_request_ids_do_not_collide() -> None:
    """Ten thousand request ids are all different."""
    assert 10_000 == len({tokens.new_request_id() for _ in range(10_000)})


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("abc", "abc", True),
        ("abc", "abd", False),
        ("abc", "abcd", False),
        ("", "", True),
        ("", "a", False),
        ("clé", "clé", True),
        ("clé", "cle", False),
        ("🍋🥝", "🍋🥝", True),
        ("🍋🥝", "🍋🌮", False),
        ("\ud800", "\ud800", True),
        ("\ud800", "\udc00", False),
        ("é", "e\u0301", False),
    ],
)
def test_same_compares_any_text(a: str, b: str, expected: bool) -> None:
    """`same` accepts non-ASCII and lone surrogates and never equates different strings."""
    assert expected == tokens.same(a, b)


def test_fp_key_is_32_bytes() -> None:
    """A new fingerprint key is 32 random bytes."""
    key = tokens.new_fp_key()
    assert 32 == len(key)
    assert key != tokens.new_fp_key()


def test_fp_key_round_trips_through_its_text_form() -> None:
    """A key encodes to 43 base64url characters and parses back to the same bytes."""
    key = tokens.new_fp_key()
    text = tokens.encode_fp_key(key)
    assert 43 == len(text)
    assert key == tokens.parse_fp_key(text)


def test_parse_fp_key_reads_a_known_key() -> None:
    """The key 0x00..0x1f parses from its well-known base64url spelling."""
    assert bytes(range(32)) == tokens.parse_fp_key("AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "A" * 42,
        "A" * 44,
        "A" * 42 + "=",
        "A" * 43 + "=",
        "A" * 42 + "+",
        "A" * 42 + "/",
        "A" * 42 + " ",
        " " + "A" * 42,
        "A" * 43 + "\n",
        "A" * 42 + "é",
        "A" * 42 + "\uff21",
        "A" * 42 + "B",
        "A" * 42 + "_",
    ],
)
def test_parse_fp_key_rejects(text: str) -> None:
    """Anything but exactly 43 canonical base64url characters is not a key."""
    assert tokens.parse_fp_key(text) is None


def test_parse_fp_key_accepts_every_canonical_last_character() -> None:
    """The four last characters whose spare bits are zero are all accepted."""
    for last in "AQgw":
        assert tokens.parse_fp_key("A" * 42 + last) is not None


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_encode_fp_key_rejects_wrong_length(size: int) -> None:
    """Only a 32-byte key has a text form."""
    with pytest.raises(ValueError, match="32 bytes"):
        tokens.encode_fp_key(bytes(size))
