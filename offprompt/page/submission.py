"""A posted form, plain or sealed (DESIGN §5, §6, §16), read into one typed `Submission`.

Pure: no I/O and no change to the request. Bad input raises one `BadSubmission` kind, which the
page's answer table (`page.answers`) turns into the answer it has always had.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from offprompt.crypto.tokens import parse_fp_key, same
from offprompt.write.submit import is_blank

if TYPE_CHECKING:
    from offprompt.crypto.seal import Opened
    from offprompt.store import Held, RequestRecord

__all__ = [
    "BadFpKey",
    "BadSubmission",
    "NotSealed",
    "SealUnopened",
    "Submission",
    "WrongNonce",
    "read_submission",
]


class BadSubmission(Exception):
    """A post this request does not accept; each kind has its row in `page.answers`.

    Outside the error root on purpose, like `forms.FormUnreadable`: the submit handler answers
    it at once. The messages name the kind only, never a field's content.
    """

    def __init__(self) -> None:
        super().__init__(type(self).__name__)


class WrongNonce(BadSubmission):
    """The post's `nonce` is not the page's current one."""


class NotSealed(BadSubmission):
    """A remote request's post carries fields besides `nonce` and `sealed`: values crossed a
    tunnel unsealed."""


class SealUnopened(BadSubmission):
    """The seal does not open with this request's key, token and nonce (or the key is gone)."""


class BadFpKey(BadSubmission):
    """The page sent an `fp_key` that is not 43 characters of base64url (32 bytes)."""


@dataclass(frozen=True)
class Submission:
    """What one post asks for, read once: the values by name (the request's names only), the
    tracked-file override, the page's fingerprint key, the ticked `also` destinations by index
    (those the request has), the provider check's box (true under "Write anyway", which checks
    again) and "Write anyway" itself, the nonce it carried, and the names ticked to fill from
    the keyring (DESIGN §13.2; the request's names only, in request order)."""

    values: Mapping[str, str] = field(repr=False)
    allow_tracked: bool = False
    fp_key: bytes | None = field(default=None, repr=False)
    also: tuple[int, ...] = ()
    check: bool = False
    anyway: bool = False
    nonce: str = field(default="", repr=False)
    keyring: tuple[str, ...] = ()

    def confirming(self, held: Held | None) -> Submission:
        """When this post is the "Write anyway" of the refused submit `held` (DESIGN §16): its
        values under any posted again, and its choices as it made them, which this post may
        narrow (untick a destination, drop the tracked-file override) but never widen; else
        this submission as it is."""
        if not (self.anyway and held is not None):
            return self
        posted = {k: v for k, v in self.values.items() if not is_blank(v)}
        return replace(
            self,
            values=MappingProxyType({**held.values, **posted}),
            allow_tracked=held.allow_tracked and self.allow_tracked,
            also=tuple(i for i in held.also if i in self.also),
        )


def read_submission(form: Mapping[str, str], request: RequestRecord) -> Submission:
    """The post `form` for `request` as one Submission; a remote request's from its seal.

    Checked in the order the page has always checked: the nonce (WrongNonce), then for a
    remote request only `nonce` and `sealed` posted (NotSealed) and a seal that opens
    (SealUnopened), then the fingerprint key (BadFpKey).
    """
    nonce = form.get("nonce", "")
    if not same(nonce, request.nonce):
        raise WrongNonce
    if request.remote:
        opened = _opened(form, request)
        return _typed(
            request,
            nonce,
            values=opened.values,
            allow_tracked=opened.allow_tracked,
            fp_key=opened.fp_key or "",
            ticked=frozenset(opened.also),
            check=opened.check,
            anyway=opened.anyway,
            keyring=frozenset(opened.keyring),
        )
    return _typed(
        request,
        nonce,
        values=form,
        allow_tracked=form.get("allow_tracked") == "1",
        fp_key=form.get("fp_key", ""),
        ticked=frozenset(i for i in range(len(request.also)) if form.get(f"also.{i}") == "1"),
        check=form.get("check") == "1",
        anyway=form.get("anyway") == "1",
        keyring=frozenset(n for n in request.names if form.get(f"keyring.{n}") == "1"),
    )


def _opened(form: Mapping[str, str], request: RequestRecord) -> Opened:
    if set(form) != {"nonce", "sealed"}:
        raise NotSealed
    from offprompt.crypto.seal import SealError

    key = request.delivery.seal_key  # the collect core made it; None once the request closed
    try:
        if key is None:
            raise SealError
        return key.open(form["sealed"], token=request.token, nonce=request.nonce)
    except SealError:
        raise SealUnopened from None


def _typed(
    request: RequestRecord,
    nonce: str,
    *,
    values: Mapping[str, str],
    allow_tracked: bool,
    fp_key: str,
    ticked: frozenset[int],
    check: bool,
    anyway: bool,
    keyring: frozenset[str],
) -> Submission:
    key: bytes | None = None
    if fp_key:
        # Made by a page script with a bug; a key of our own would show the person a
        # fingerprint that can never match the one their page computed.
        key = parse_fp_key(fp_key)
        if key is None:
            raise BadFpKey
    return Submission(
        values=MappingProxyType(
            {s.name: values[s.name] for s in request.secrets if s.name in values}
        ),
        allow_tracked=allow_tracked,
        fp_key=key,
        # A destination runs only when its box came back ticked: a post of the values alone
        # (or a script that knows nothing of them) sends to the sink only (DESIGN §13).
        also=tuple(i for i in range(len(request.also)) if i in ticked),
        check=anyway or check,
        anyway=anyway,
        nonce=nonce,
        keyring=tuple(n for n in request.names if n in keyring),
    )
