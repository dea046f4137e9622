"""Sealing for remote requests (DESIGN §5): ECDH P-256, HKDF-SHA256 and AES-256-GCM, no I/O.

The server holds a `SealKey` per remote request and opens what the page sealed; `seal` is the
same construction from the page's side, used by tests to play the page. Imports `cryptography`,
so callers import this module only when a remote request needs it.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

__all__ = [
    "VERSION",
    "Opened",
    "SealError",
    "SealKey",
    "b64u_decode",
    "b64u_encode",
    "open_sealed",
    "plaintext",
    "seal",
]

VERSION: Final = "v1"
INFO: Final = b"offprompt/v1/seal"
POINT_BYTES: Final = 65  # 0x04 || X || Y, uncompressed
IV_BYTES: Final = 12
TAG_BYTES: Final = 16
MAX_SEALED: Final = 64 * 1024  # a POST body is capped at 64 KiB anyway

_B64U: Final = re.compile(r"[A-Za-z0-9_-]*")
_TOKEN: Final = re.compile(r"[0-9a-f]{32}")
_FIELDS: Final = frozenset(
    {"values", "allow_tracked", "fp_key", "also", "check", "anyway", "keyring"}
)
_MAX_ALSO_INDEX: Final = 63


class SealError(Exception):
    """A seal that does not open. Says nothing about why: every cause gets the same answer.

    Outside the error root on purpose: crypto is pure, and the page turns it into a 403 at once.
    """

    def __init__(self) -> None:
        super().__init__("the sealed form does not open")


@dataclass(frozen=True)
class Opened:
    """What a seal held: the values by name, the tracked-file override, the page's fp_key,
    the ticked `also` destinations by index (absent: none ticked, DESIGN §13), and the
    provider check's box and "Write anyway" (absent: false, DESIGN §16), and the names to
    fill from the keyring (DESIGN §13.2; absent: none)."""

    values: Mapping[str, str] = field(repr=False)
    allow_tracked: bool
    fp_key: str | None = field(default=None, repr=False)
    also: tuple[int, ...] = ()
    check: bool = False
    anyway: bool = False
    keyring: tuple[str, ...] = ()


def b64u_encode(data: bytes) -> str:
    """Base64url without padding."""
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64u_decode(text: str) -> bytes:
    """The bytes of canonical unpadded base64url; ValueError for any other spelling.

    Canonical means re-encoding gives the same text back (spare bits zero), so one byte string
    has exactly one accepted form.
    """
    if not _B64U.fullmatch(text) or len(text) % 4 == 1:
        raise ValueError("not unpadded base64url")
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise ValueError("not unpadded base64url") from None
    if b64u_encode(data) != text:
        raise ValueError("not canonical base64url")
    return data


def _aad(token: str, nonce: str) -> bytes:
    return f"offprompt/v1|{token}|{nonce}".encode()


def _salt(token: str) -> bytes:
    if not _TOKEN.fullmatch(token):
        raise ValueError("a page token is 32 lowercase hex digits")
    return bytes.fromhex(token)


def _aes_key(private: ec.EllipticCurvePrivateKey, point: bytes, token: str) -> bytes:
    """HKDF-SHA256 over the ECDH x-coordinate, salted with the token's 16 bytes."""
    if len(point) != POINT_BYTES or point[0] != 0x04:
        raise ValueError("a public point is 65 bytes, uncompressed")
    # from_encoded_point refuses a point that is not on P-256 (ValueError).
    peer = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    shared = private.exchange(ec.ECDH(), peer)
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=_salt(token), info=INFO).derive(shared)


def _point(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
    )


class SealKey:
    """One remote request's P-256 key pair. The private half never leaves this object."""

    def __init__(self) -> None:
        self._private = ec.generate_private_key(ec.SECP256R1())
        self.public_point: bytes = _point(self._private)

    def __repr__(self) -> str:
        return "SealKey(<private>)"

    @property
    def fragment(self) -> str:
        """The link's fragment, `k=<base64url of the public point>` (without the `#`)."""
        return "k=" + b64u_encode(self.public_point)

    def open(self, sealed: str, *, token: str, nonce: str) -> Opened:
        """What the page sealed for this request's `token` and page `nonce`; else SealError."""
        return open_sealed(self._private, sealed, token=token, nonce=nonce)


def open_sealed(
    private: ec.EllipticCurvePrivateKey, sealed: str, *, token: str, nonce: str
) -> Opened:
    """Open `v1.<page point>.<iv>.<ciphertext+tag>`; SealError whatever the reason."""
    try:
        if len(sealed) > MAX_SEALED:
            raise ValueError("too long")
        version, point, iv, box = sealed.split(".")  # ValueError unless exactly four parts
        if version != VERSION:
            raise ValueError("unknown version")
        iv_bytes, box_bytes = b64u_decode(iv), b64u_decode(box)
        if len(iv_bytes) != IV_BYTES or len(box_bytes) <= TAG_BYTES:
            raise ValueError("wrong length")
        key = _aes_key(private, b64u_decode(point), token)
        clear = AESGCM(key).decrypt(iv_bytes, box_bytes, _aad(token, nonce))
        return _parse(clear)
    except (ValueError, TypeError, InvalidTag, RecursionError):
        # RecursionError: anyone holding the link can seal, so a plaintext nested too deeply
        # for json is possible; it is a bad seal like any other.
        raise SealError from None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError("a key appears twice")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _parse(clear: bytes) -> Opened:
    data = json.loads(
        clear.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constant
    )
    if not isinstance(data, dict) or not set(data) <= _FIELDS:
        raise ValueError("not a v1 plaintext")
    values = data.get("values")
    allow = data.get("allow_tracked", False)  # absent: the safe answer, not allowed
    fp_key = data.get("fp_key")
    if not isinstance(values, dict) or not isinstance(allow, bool):
        raise ValueError("not a v1 plaintext")
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise ValueError("values are strings")
    if fp_key is not None and not isinstance(fp_key, str):
        raise ValueError("fp_key is a string")
    also = data.get("also", [])
    if not isinstance(also, list) or not all(
        type(i) is int and 0 <= i <= _MAX_ALSO_INDEX for i in also
    ):
        raise ValueError("also is a list of indices")
    check, anyway = data.get("check", False), data.get("anyway", False)
    if not isinstance(check, bool) or not isinstance(anyway, bool):
        raise ValueError("check and anyway are booleans")
    keyring = data.get("keyring", [])
    if not isinstance(keyring, list) or not all(isinstance(n, str) for n in keyring):
        raise ValueError("keyring is a list of names")
    return Opened(
        values=dict(values),
        allow_tracked=allow,
        fp_key=fp_key,
        also=tuple(sorted(set(also))),
        check=check,
        anyway=anyway,
        keyring=tuple(dict.fromkeys(keyring)),
    )


def plaintext(
    values: Mapping[str, str],
    *,
    allow_tracked: bool = False,
    fp_key: str | None = None,
    also: Sequence[int] | None = None,
    check: bool | None = None,
    anyway: bool | None = None,
    keyring: Sequence[str] | None = None,
) -> bytes:
    """The v1 plaintext JSON a page seals."""
    data: dict[str, Any] = {"values": dict(values), "allow_tracked": allow_tracked}
    if fp_key is not None:
        data["fp_key"] = fp_key
    if also is not None:
        data["also"] = list(also)
    if check is not None:
        data["check"] = check
    if anyway is not None:
        data["anyway"] = anyway
    if keyring is not None:
        data["keyring"] = list(keyring)
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def seal(
    public_point: bytes,
    clear: bytes,
    *,
    token: str,
    nonce: str,
    iv: bytes | None = None,
    page_key: ec.EllipticCurvePrivateKey | None = None,
) -> str:
    """Seal `clear` to a request's public point as the page does (its own fresh key pair)."""
    page_key = page_key or ec.generate_private_key(ec.SECP256R1())
    iv = os.urandom(IV_BYTES) if iv is None else iv
    box = AESGCM(_aes_key(page_key, public_point, token)).encrypt(iv, clear, _aad(token, nonce))
    return ".".join((VERSION, b64u_encode(_point(page_key)), b64u_encode(iv), b64u_encode(box)))
