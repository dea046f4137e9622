"""What the page answers a submit that wrote nothing (DESIGN §6, §16): one row per error class.

`answer_for` finds an error's row by its class, nearest first; the submit handler renders it.
Texts name keys, rules and kinds only: an error's own message is value-free by design.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from offprompt.errors import (
    CheckRejected,
    ConfigError,
    NoBinary,
    NotLinked,
    OffpromptError,
    PortUnavailable,
    ProjectError,
    Refusal,
    RefusedRequest,
    RequestClosed,
    RpcError,
    TrackedFile,
    TunnelFailed,
    Unreadable,
    UnsafeValue,
    UsageProblem,
    ValidationFailed,
    WriteError,
)
from offprompt.oskeyring import NotInKeyring
from offprompt.page.forms import FormUnreadable
from offprompt.page.submission import (
    BadFpKey,
    BadSubmission,
    NotSealed,
    SealUnopened,
    WrongNonce,
)

__all__ = ["ANSWERS", "NOT_THIS_PAGE", "Answer", "answer_for", "kind"]

Shape = Literal["message", "form", "check", "closed"]
"""`message`: the refusal page, or `{"error"}` in JSON. `form`: the form again with the reason
beside it, or `{"errors", "error"?, "tracked"?}`. `check`: the 409 with each provider's verdict
and a "Write anyway" form. `closed`: the closed request's 409 or 410 (`_closed`)."""

# A wrong nonce and a seal that does not open get this same answer (DESIGN §5).
NOT_THIS_PAGE: Final = "This form is out of date or was not made by this page. Reload it."


@dataclass(frozen=True)
class Answer:
    """One row: the answer's shape and status (0: the error's own, a FormUnreadable's), the
    text shown (None: the status's default), whether it is about a git-tracked file, and the
    log line after `page: request <id>: ` at `level` (none when `note` is empty).

    `text` and `note` may name `{error}` (the error's own value-free message), `{type}` (its
    class), `{where}` (its class and the line it came from), `{fields}` (a ValidationFailed's
    failing names) and `{refused}` (the names a provider refused)."""

    shape: Shape
    status: int = 0
    text: str | None = None
    tracked: bool = False
    level: int = logging.INFO
    note: str = ""

    def status_of(self, exc: BaseException) -> int:
        """The HTTP status this answer has for `exc`."""
        return exc.status if isinstance(exc, FormUnreadable) and not self.status else self.status

    def says(self, exc: BaseException) -> str | None:
        """The text shown for `exc`, or None for the status's default."""
        return None if self.text is None else self.text.format_map(_parts(exc))

    def logged(self, exc: BaseException) -> str:
        """The log line for `exc` (empty: not logged)."""
        return self.note.format_map(_parts(exc))


def kind(exc: BaseException) -> str:
    """The type and where it came from, never str(exc): a message could quote anything."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
    return f"{type(exc).__name__}{where}"


def _parts(exc: BaseException) -> dict[str, str]:
    fields = exc.errors if isinstance(exc, ValidationFailed) else {}
    verdicts = exc.verdicts if isinstance(exc, CheckRejected) else {}
    return {
        "error": str(exc),
        "type": type(exc).__name__,
        "where": kind(exc),
        "fields": ", ".join(fields),
        "refused": ", ".join(n for n, v in verdicts.items() if v.status == "rejected"),
    }


_NOTHING_WRITTEN: Final = Answer(
    "form",
    500,
    "Nothing was written: {error}",
    level=logging.WARNING,
    note="500, nothing written ({type})",
)
_SEALED_ONLY: Final = "Values for a remote request must be sealed by the page. Reload it."

ANSWERS: Final[Mapping[type[BaseException], Answer]] = {
    # The post itself (forms.read_form, submission.read_submission): nothing was tried.
    FormUnreadable: Answer("message"),
    BadSubmission: Answer("message", 400),
    WrongNonce: Answer(
        "message",
        403,
        NOT_THIS_PAGE,
        level=logging.WARNING,
        note="refused a POST with a wrong nonce",
    ),
    NotSealed: Answer(
        "message",
        400,
        _SEALED_ONLY,
        level=logging.WARNING,
        note="refused an unsealed POST for a remote request",
    ),
    SealUnopened: Answer(
        "message",
        403,
        NOT_THIS_PAGE,
        level=logging.WARNING,
        note="refused a seal that does not open",
    ),
    BadFpKey: Answer("form", 422, "The page sent a malformed fingerprint key. Reload it."),
    # The Submitter's: the request stays open for another try, but when it is closed.
    RequestClosed: Answer("closed"),
    CheckRejected: Answer("check", 409, note="409 (provider refused {refused})"),
    ValidationFailed: Answer("form", 422, note="422 ({fields})"),
    NotInKeyring: Answer("form", 400, "{error}", note="400 (not in the keyring)"),
    TrackedFile: Answer("form", 422, "{error}", tracked=True, note="422 (tracked by git)"),
    UnsafeValue: Answer("form", 422, "{error}", note="422 (unsafe value)"),
    WriteError: _NOTHING_WRITTEN,
    ProjectError: _NOTHING_WRITTEN,
    RefusedRequest: _NOTHING_WRITTEN,
    NotLinked: _NOTHING_WRITTEN,
    # No submit raises these today; if one ever does, it is answered as any other refusal.
    Unreadable: _NOTHING_WRITTEN,
    Refusal: _NOTHING_WRITTEN,
    RpcError: _NOTHING_WRITTEN,
    UsageProblem: _NOTHING_WRITTEN,
    ConfigError: _NOTHING_WRITTEN,
    NoBinary: _NOTHING_WRITTEN,
    TunnelFailed: _NOTHING_WRITTEN,
    PortUnavailable: _NOTHING_WRITTEN,
    OffpromptError: _NOTHING_WRITTEN,
    # The handler boundary: anything else, logged by its kind, and the request left open.
    Exception: Answer(
        "form",
        500,
        "offprompt could not handle that. Nothing was written. Try again.",
        level=logging.ERROR,
        note="500, write failed ({where})",
    ),
}


def answer_for(exc: BaseException) -> Answer:
    """The row of `exc`'s class, or of its nearest base class that has one."""
    for cls in type(exc).__mro__:
        row = ANSWERS.get(cls)
        if row is not None:
            return row
    return ANSWERS[Exception]
