"""The four-emoji fingerprint (DESIGN §7) and its 64-entry table."""

import hashlib
import hmac
import json
import random
import re
import unicodedata

import pytest

from offprompt.crypto.fingerprint import EMOJI, Fingerprint, fingerprint, message

KEY = bytes(range(32))
PAIRS = [("STRIPE_SECRET_KEY", "sk_test_123"), ("RESEND_API_KEY", 're_"x\\y\n🍋')]


def independent_indices(key: bytes, pairs: list[tuple[str, str]]) -> tuple[int, int, int, int]:
    """DESIGN §7 spelled out with the hmac module and string slicing of the MAC's bits."""
    body = json.dumps([list(p) for p in pairs], separators=(",", ":"), ensure_ascii=False)
    mac = hmac.digest(key, b"offprompt/fingerprint/v1\n" + body.encode("utf-8"), "sha256")
    bits = "".join(f"{b:08b}" for b in mac[:3])
    a, b, c, d = (int(bits[i : i + 6], 2) for i in range(0, 24, 6))
    return (a, b, c, d)


def test_table_has_64_entries() -> None:
    """The table holds exactly 64 (emoji, name) pairs."""
    assert 64 == len(EMOJI)
    assert all(isinstance(e, str) and isinstance(n, str) for e, n in EMOJI)


def test_table_emoji_are_single_symbol_code_points() -> None:
    """Each emoji is one code point of category So outside the BMP's text-default symbols."""
    for emoji, name in EMOJI:
        assert 1 == len(emoji), name
        assert "So" == unicodedata.category(emoji), name
        assert 0x1F300 <= ord(emoji) <= 0x1FAFF, name


def test_table_emoji_are_unique() -> None:
    """No emoji appears twice."""
    assert 64 == len({e for e, _ in EMOJI})


def test_table_names_are_unique_lowercase_words() -> None:
    """Names are unique single lowercase words, easy to say aloud."""
    names = [n for _, n in EMOJI]
    assert 64 == len(set(names))
    assert all(re.fullmatch(r"[a-z]+", n) for n in names)


def test_table_starts_with_the_documented_examples() -> None:
    """The first four entries are the emoji DESIGN §3.2 shows in its example result."""
    assert ("🍋", "🥝", "🌮", "🧀") == tuple(e for e, _ in EMOJI[:4])


def test_known_answer_vector_is_pinned() -> None:
    """A fixed key and pairs always give the same fingerprint (the contract never drifts)."""
    fp = fingerprint(KEY, PAIRS)
    assert (51, 49, 54, 15) == fp.indices
    assert "🌈 🌵 🍀 🍕" == str(fp)
    assert ("rainbow", "cactus", "clover", "pizza") == fp.names


def test_empty_pairs_vector_is_pinned() -> None:
    """An all-zero key over no pairs has a fixed fingerprint too."""
    assert (20, 50, 38, 47) == fingerprint(bytes(32), []).indices


def test_matches_independent_computation() -> None:
    """Random keys, names and values agree with a from-scratch HMAC computation."""
    rng = random.Random(7)  # noqa: S311 - seeded on purpose: reproducible cases
    alphabet = 'aZ09_"\\\n\t\x00\x1f\x7f\u2028\u2029é漢🍋 '
    for _ in range(300):
        key = rng.randbytes(32)
        pairs = [
            (f"K{i}", "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 20))))
            for i in range(rng.randrange(0, 5))
        ]
        assert independent_indices(key, pairs) == fingerprint(key, pairs).indices


def test_message_is_prefix_and_compact_json() -> None:
    """The MAC covers the v1 prefix and compact JSON with non-ASCII kept literal."""
    expected = b'offprompt/fingerprint/v1\n[["A","\xc3\xa9\\n\\u0001"],["B",""]]'
    assert expected == message([("A", "é\n\x01"), ("B", "")])


def test_order_matters() -> None:
    """The same pairs in another order give another MAC input."""
    assert message(PAIRS) != message(list(reversed(PAIRS)))


def test_value_boundary_is_unambiguous() -> None:
    """Moving characters between a name and its value changes the message."""
    assert message([("AB", "C")]) != message([("A", "BC")])


def test_indices_split_the_first_three_bytes() -> None:
    """The four indices are the 6-bit groups of the MAC's first 24 bits, high to low."""
    for key in (bytes(32), b"\xff" * 32, KEY):
        mac = hmac.digest(key, message(PAIRS), hashlib.sha256)
        n = int.from_bytes(mac[:3], "big")
        a, b, c, d = fingerprint(key, PAIRS).indices
        assert n == (a << 18) | (b << 12) | (c << 6) | d


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_rejects_key_not_32_bytes(size: int) -> None:
    """A key of any other length is refused."""
    with pytest.raises(ValueError, match="32 bytes"):
        fingerprint(bytes(size), PAIRS)


def test_lone_surrogate_is_refused_without_quoting_the_value() -> None:
    """A value with no UTF-8 form raises ValueError that does not carry the value."""
    value = "canary-secret-\ud800"
    with pytest.raises(ValueError, match="surrogate") as info:
        fingerprint(KEY, [("A", value)])
    assert "canary-secret" not in str(info.value)
    assert info.value.__cause__ is None
    assert info.value.__suppress_context__


def test_str_is_four_emoji_space_separated() -> None:
    """str() of a fingerprint is what results show after `Fingerprint`."""
    assert "🍋 🥝 🌮 🧀" == str(Fingerprint((0, 1, 2, 3)))


def test_emoji_and_names_follow_indices() -> None:
    """The emoji and names properties read the table at the four indices."""
    fp = Fingerprint((63, 0, 63, 1))
    assert (EMOJI[63][0], EMOJI[0][0], EMOJI[63][0], EMOJI[1][0]) == fp.emoji
    assert (EMOJI[63][1], EMOJI[0][1], EMOJI[63][1], EMOJI[1][1]) == fp.names


@pytest.mark.parametrize("indices", [(0, 1, 2, 64), (-1, 0, 0, 0), (0, 1, 2)])
def test_fingerprint_rejects_bad_indices(indices: tuple[int, int, int, int]) -> None:
    """A fingerprint holds four indices within the table."""
    with pytest.raises(ValueError, match="four indices"):
        Fingerprint(indices)


def test_fingerprint_is_frozen() -> None:
    """A fingerprint cannot be changed after it is made."""
    fp = Fingerprint((0, 1, 2, 3))
    with pytest.raises(AttributeError):
        fp.indices = (3, 2, 1, 0)  # type: ignore[misc]
