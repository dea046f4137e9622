"""The confirmation code of a remote request (DESIGN §17): 7 Crockford base32 characters from an
HMAC keyed by a per-request secret over the request id and the held submission's digest.

Pure functions over bytes and strings. The code is shown only on the person's page; it comes
back through the host, is compared here, and is never logged or put in a result.
"""

import hashlib
import hmac
import secrets
from typing import Final

ALPHABET: Final = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
"""Crockford's base32: no I, L, O or U, so what is read off a screen is hard to mistype."""
LENGTH: Final = 7
"""Characters in a code: 35 bits."""
MAX_TYPED: Final = 64
"""The longest text `normalize` reads; anything longer is not a code, however it is spaced."""

_DOMAIN: Final = b"offprompt/confirm/v1\n"
# What a person may type for a character Crockford leaves out: they read alike.
_READ_AS: Final = {"I": "1", "L": "1", "O": "0"}
_IGNORED: Final = frozenset(" \t\r\n-\u2010\u2011\u2012\u2013\u2014\u2212")
"""Blanks and the hyphens (ASCII and the look-alikes a copy from a page may bring)."""


def new_confirm_key() -> bytes:
    """A request's confirmation key: 32 random bytes, kept in memory while the request lives."""
    return secrets.token_bytes(32)


def code_for(key: bytes, request_id: str, digest: bytes) -> str:
    """The code for the submission with this `digest` (`Prepared.digest`) held for
    `request_id`: the first 35 bits of HMAC-SHA256(key, domain | id | digest), in base32."""
    if len(key) != 32:
        raise ValueError("a confirmation key is exactly 32 bytes")
    ident = request_id.encode("utf-8", "surrogatepass")
    message = _DOMAIN + len(ident).to_bytes(2, "big") + ident + digest
    mac = hmac.new(key, message, hashlib.sha256).digest()
    n = int.from_bytes(mac[:5], "big") >> (40 - 5 * LENGTH)
    return "".join(ALPHABET[(n >> (5 * (LENGTH - 1 - i))) & 31] for i in range(LENGTH))


def shown(code: str) -> str:
    """The code as the page shows it: a hyphen after the fourth character (`ABCD-EFG`)."""
    return f"{code[:4]}-{code[4:]}"


def normalize(typed: str) -> str | None:
    """What the person typed as a code: case, blanks and hyphens ignored, I and L read as 1, O
    as 0; None when that is not 7 characters of the alphabet."""
    if len(typed) > MAX_TYPED:
        return None
    out: list[str] = []
    for char in typed:
        if char in _IGNORED:
            continue
        upper = char.upper()
        upper = _READ_AS.get(upper, upper)
        if len(upper) != 1 or upper not in ALPHABET:
            return None
        out.append(upper)
    return "".join(out) if len(out) == LENGTH else None


def matches(code: str, typed: str) -> bool:
    """Whether `typed` is `code`, as `normalize` reads it; compared in constant time."""
    normal = normalize(typed)
    if normal is None:
        return False
    return hmac.compare_digest(code.encode("ascii"), normal.encode("ascii"))
