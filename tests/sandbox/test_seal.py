"""offprompt.crypto.seal: the v1 seal opens only for its key, token and nonce, and nothing else."""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Callable

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from offprompt.crypto.seal import (
    Opened,
    SealError,
    SealKey,
    b64u_decode,
    b64u_encode,
    plaintext,
    seal,
)

TOKEN = "0123456789abcdef0123456789abcdef"
NONCE = "n" * 32
FP_KEY = b64u_encode(bytes(range(32)))


@pytest.fixture
def key() -> SealKey:
    return SealKey()


def sealed_for(key: SealKey, values: dict[str, str] | None = None, **kw: object) -> str:
    clear = plaintext(values or {"API_KEY": "v"}, **kw)  # type: ignore[arg-type]
    return seal(key.public_point, clear, token=TOKEN, nonce=NONCE)


def flip(text: str, index: int) -> str:
    """`text` (base64url) with one bit of its decoded byte `index` flipped."""
    raw = bytearray(b64u_decode(text))
    raw[index] ^= 0x01
    return b64u_encode(bytes(raw))


def test_seal_opens_to_what_was_sealed(key: SealKey, canary: str) -> None:
    """Values, allow_tracked and fp_key come back exactly."""
    opened = key.open(
        sealed_for(key, {"API_KEY": canary}, allow_tracked=True, fp_key=FP_KEY),
        token=TOKEN,
        nonce=NONCE,
    )
    assert opened == Opened(values={"API_KEY": canary}, allow_tracked=True, fp_key=FP_KEY)


def test_fp_key_is_optional(key: SealKey) -> None:
    """A plaintext without fp_key opens with fp_key None."""
    assert key.open(sealed_for(key), token=TOKEN, nonce=NONCE).fp_key is None


def test_opened_repr_holds_no_value(key: SealKey, canary: str) -> None:
    """Neither the opened record nor the key shows a value or key material in repr."""
    opened = key.open(sealed_for(key, {"API_KEY": canary}), token=TOKEN, nonce=NONCE)
    assert (canary in repr(opened), "private" in repr(key)) == (False, True)


def test_fragment_is_the_uncompressed_point(key: SealKey) -> None:
    """The link's fragment is k= and 87 base64url characters of the 65-byte 0x04 point."""
    encoded = key.fragment.removeprefix("k=")
    assert (len(encoded), b64u_decode(encoded)[0], len(b64u_decode(encoded))) == (87, 4, 65)


def test_construction_matches_design(key: SealKey, canary: str) -> None:
    """Re-deriving by DESIGN §5 by hand (ECDH x, HKDF salt=token, AAD) opens a sealed form."""
    page = ec.generate_private_key(ec.SECP256R1())
    sealed = seal(
        key.public_point, plaintext({"API_KEY": canary}), token=TOKEN, nonce=NONCE, page_key=page
    )
    version, point, iv, box = sealed.split(".")
    server = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), key.public_point)
    shared = page.exchange(ec.ECDH(), server)
    aes = HKDF(hashes.SHA256(), 32, bytes.fromhex(TOKEN), b"offprompt/v1/seal").derive(shared)
    aad = f"offprompt/v1|{TOKEN}|{NONCE}".encode()
    clear = AESGCM(aes).decrypt(b64u_decode(iv), b64u_decode(box), aad)
    mine = page.public_key().public_bytes(Encoding.X962, PublicFormat.UncompressedPoint)
    assert (version, point, json.loads(clear)["values"]["API_KEY"]) == (
        "v1",
        b64u_encode(mine),
        canary,
    )


PART = {"point": 1, "iv": 2, "box": 3}


@pytest.mark.parametrize(
    ("part", "index"),
    [("point", 1), ("point", 40), ("point", 64), ("iv", 0), ("iv", 11), ("box", 0), ("box", -1)],
)
def test_a_flipped_bit_anywhere_does_not_open(key: SealKey, part: str, index: int) -> None:
    """One flipped bit in the page point, the IV, the ciphertext or the tag → SealError."""
    parts = sealed_for(key).split(".")
    parts[PART[part]] = flip(parts[PART[part]], index)
    with pytest.raises(SealError):
        key.open(".".join(parts), token=TOKEN, nonce=NONCE)


def test_another_requests_token_does_not_open(key: SealKey) -> None:
    """The token is the HKDF salt and in the AAD: another request's token fails."""
    with pytest.raises(SealError):
        key.open(sealed_for(key), token=secrets.token_hex(16), nonce=NONCE)


def test_another_nonce_does_not_open(key: SealKey) -> None:
    """The page nonce is in the AAD: a seal made for another page load fails."""
    with pytest.raises(SealError):
        key.open(sealed_for(key), token=TOKEN, nonce="m" * 32)


def test_another_key_does_not_open(key: SealKey) -> None:
    """A seal made to another request's public key fails with this one."""
    with pytest.raises(SealError):
        SealKey().open(sealed_for(key), token=TOKEN, nonce=NONCE)


def _point_not_on_curve(key: SealKey) -> str:
    raw = bytearray(key.public_point)
    raw[-1] ^= 0x01
    return b64u_encode(bytes(raw))


def _compressed(key: SealKey) -> str:
    raw = key.public_point
    return b64u_encode(bytes([2 + (raw[-1] & 1)]) + raw[1:33])


MALFORMED: dict[str, Callable[[str, SealKey], str]] = {
    "empty": lambda s, k: "",
    "three parts": lambda s, k: s.rsplit(".", 1)[0],
    "five parts": lambda s, k: s + ".AAAA",
    "version v2": lambda s, k: "v2" + s[2:],
    "version V1": lambda s, k: "V1" + s[2:],
    "padding": lambda s, k: s + "=",
    "standard base64": lambda s, k: s.replace("-", "+").replace("_", "/") + "+/",
    "non-canonical spare bits": lambda s, k: (
        s.rsplit(".", 1)[0] + "." + _noncanonical(s.rsplit(".", 1)[1])
    ),
    "short iv": lambda s, k: ".".join(
        [*s.split(".")[:2], b64u_encode(b"\0" * 11), s.split(".")[3]]
    ),
    "tag only": lambda s, k: ".".join([*s.split(".")[:3], b64u_encode(b"\0" * 16)]),
    "point off the curve": lambda s, k: ".".join(
        [s.split(".")[0], _point_not_on_curve(k), *s.split(".")[2:]]
    ),
    "compressed point": lambda s, k: ".".join([s.split(".")[0], _compressed(k), *s.split(".")[2:]]),
    "non-ascii": lambda s, k: s[:-1] + "é",
    "whitespace": lambda s, k: s + "\n",
}


def _noncanonical(text: str) -> str:
    # The last character of a length ≡ 2 or 3 (mod 4) string has spare bits; set one.
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return text[:-1] + alphabet[alphabet.index(text[-1]) | 1]


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_seal_does_not_open(key: SealKey, case: str) -> None:
    """Wrong part counts, versions, encodings, lengths and points are all SealError."""
    with pytest.raises(SealError):
        key.open(MALFORMED[case](sealed_for(key), key), token=TOKEN, nonce=NONCE)


PLAINTEXTS = {
    "not json": b"values=1",
    "not an object": b'["values"]',
    "no values": b'{"allow_tracked":false}',
    "deeply nested": b'{"values":{},"allow_tracked":false,"fp_key":' + b"[" * 100_000 + b"}",
    "allow_tracked not bool": b'{"values":{},"allow_tracked":1}',
    "value not a string": b'{"values":{"A":1},"allow_tracked":false}',
    "values a list": b'{"values":[],"allow_tracked":false}',
    "fp_key not a string": b'{"values":{},"allow_tracked":false,"fp_key":7}',
    "unknown field": b'{"values":{},"allow_tracked":false,"extra":1}',
    "duplicate key": b'{"values":{"A":"x","A":"y"},"allow_tracked":false}',
    "NaN": b'{"values":{},"allow_tracked":false,"fp_key":NaN}',
    "not utf-8": b'{"values":{"A":"\xff"},"allow_tracked":false}',
}


@pytest.mark.parametrize("case", list(PLAINTEXTS))
def test_sealed_plaintext_that_is_not_v1_does_not_open(key: SealKey, case: str) -> None:
    """A seal that decrypts to anything but the v1 JSON shape is refused like a bad seal."""
    sealed = seal(key.public_point, PLAINTEXTS[case], token=TOKEN, nonce=NONCE)
    with pytest.raises(SealError):
        key.open(sealed, token=TOKEN, nonce=NONCE)


def test_absent_allow_tracked_means_not_allowed(key: SealKey, canary: str) -> None:
    """A plaintext without allow_tracked opens, with the override off (the safe answer)."""
    sealed = seal(
        key.public_point, b'{"values":{"A":"%s"}}' % canary.encode(), token=TOKEN, nonce=NONCE
    )
    opened = key.open(sealed, token=TOKEN, nonce=NONCE)
    assert (opened.values, opened.allow_tracked) == ({"A": canary}, False)


def test_seal_error_says_nothing_specific(key: SealKey) -> None:
    """Every failure carries the same message and no cause, so nothing tells them apart."""
    messages = set()
    for sealed in ("", "v1.a.b.c", sealed_for(key)):
        with pytest.raises(SealError) as err:
            key.open(sealed, token=TOKEN, nonce="other")
        messages.add((str(err.value), err.value.__cause__, err.value.__suppress_context__))
    assert messages == {("the sealed form does not open", None, True)}


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff\xfe", bytes(range(65))])
def test_b64u_round_trips(data: bytes) -> None:
    """Encoding then decoding gives the bytes back, without padding."""
    assert (b64u_decode(b64u_encode(data)), "=" in b64u_encode(data)) == (data, False)


@pytest.mark.parametrize("text", ["A", "AB=", "A+B_", "AB/C", "AR", "AAB", "é"])
def test_b64u_refuses_other_spellings(text: str) -> None:
    """Impossible lengths, padding, the standard alphabet and non-zero spare bits are refused."""
    with pytest.raises(ValueError, match="base64url"):
        b64u_decode(text)


def test_b64u_matches_the_standard_library() -> None:
    """Our encoding is urlsafe_b64encode without '='."""
    data = secrets.token_bytes(65)
    assert b64u_encode(data) == base64.urlsafe_b64encode(data).decode().rstrip("=")
