"""Random tokens, nonces, request ids and fingerprint keys, and the one way to compare them.

Pure functions over bytes and strings; every random value comes from `secrets`.
"""

import base64
import binascii
import hmac
import re
import secrets

_FP_KEY_B64U = re.compile(r"[A-Za-z0-9_-]{43}")


def new_token() -> str:
    """A page token: 16 random bytes as 32 lowercase hex digits (DESIGN §6)."""
    return secrets.token_hex(16)


def new_nonce() -> str:
    """A form nonce: 192 random bits as base64url without padding (32 characters)."""
    return secrets.token_urlsafe(24)


def new_request_id() -> str:
    """A short request id: 60 random bits as 12 lowercase base32 characters."""
    # 10 bytes encode to exactly 16 base32 characters with no padding; the first 12 carry
    # 60 uniformly random bits, enough that a process never sees two alike.
    return base64.b32encode(secrets.token_bytes(10))[:12].decode("ascii").lower()


def same(a: str, b: str) -> bool:
    """Compare two secrets in constant time; any `str` is accepted, non-ASCII included."""
    # compare_digest raises TypeError on non-ASCII str, so compare UTF-8 bytes instead.
    # surrogatepass keeps lone surrogates (possible in decoded URLs) from raising while staying
    # injective, so different strings never compare equal.
    return hmac.compare_digest(
        a.encode("utf-8", "surrogatepass"), b.encode("utf-8", "surrogatepass")
    )


def new_fp_key() -> bytes:
    """A fingerprint key: 32 random bytes (DESIGN §7)."""
    return secrets.token_bytes(32)


def encode_fp_key(key: bytes) -> str:
    """The 43-character base64url form (no padding) of a 32-byte fingerprint key."""
    if len(key) != 32:
        raise ValueError("a fingerprint key is exactly 32 bytes")
    return base64.urlsafe_b64encode(key).rstrip(b"=").decode("ascii")


def parse_fp_key(s: str) -> bytes | None:
    """The 32 bytes of a 43-character base64url `fp_key`, or None for anything else.

    Only the canonical spelling is accepted (the last character's two spare bits are zero), so
    one key has exactly one text form.
    """
    if not _FP_KEY_B64U.fullmatch(s):
        return None
    try:
        key = base64.urlsafe_b64decode(s + "=")
    except (binascii.Error, ValueError):
        return None
    if len(key) != 32 or encode_fp_key(key) != s:
        return None
    return key
