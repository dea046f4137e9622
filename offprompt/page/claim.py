"""The claim (DESIGN §17): the first browser to open a request's page holds it, by a cookie
bound to that request, and every POST must carry that cookie.

Pure: it reads and sets `Delivery.browser` and says which browser a request came from; the
page server sets the cookie on its answer.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal

from offprompt.crypto.tokens import same

if TYPE_CHECKING:
    from offprompt.store import RequestRecord

__all__ = ["COOKIE", "Holder", "cookie_header", "holder", "take"]

COOKIE: Final = "offprompt_claim"
"""The claim cookie's name; its value is 128 random bits, one per request."""

Holder = Literal["this", "none", "other"]
"""`this`: the browser that claimed the request; `none`: nobody has claimed it yet; `other`: a
second browser (no cookie, or another one)."""


def holder(request: RequestRecord, cookies: Mapping[str, str]) -> Holder:
    """Which browser sent `cookies`, for `request`."""
    held = request.delivery.browser
    if held is None:
        return "none"
    sent = cookies.get(COOKIE, "")
    return "this" if sent and same(sent, held) else "other"


def take(request: RequestRecord) -> str:
    """Claim `request` for a new browser: the cookie value to hand it. Only when unclaimed."""
    if request.delivery.browser is not None:
        raise RuntimeError(f"request {request.id} is claimed already")
    value = secrets.token_urlsafe(16)
    request.delivery.browser = value
    return value


def cookie_header(request: RequestRecord, value: str, *, secure: bool) -> str:
    """The Set-Cookie header of a claim: this request's pages only, never sent cross-site,
    out of script's reach, and only over https where the page is (the tunnel)."""
    attrs = [
        f"{COOKIE}={value}",
        f"Path=/r/{request.token}",
        "HttpOnly",
        "SameSite=Strict",
    ]
    if secure:
        attrs.append("Secure")
    return "; ".join(attrs)
