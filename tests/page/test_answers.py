"""The page's answer table: a row for every error a submit can end in, and the answers the
page has always given (DESIGN §6, §16)."""

from __future__ import annotations

import importlib
import inspect
import logging
import pkgutil
import secrets
from collections.abc import Iterator

import pytest

from offprompt.errors import (
    CheckRejected,
    OffpromptError,
    RequestClosed,
    TrackedFile,
    UnsafeValue,
    ValidationFailed,
    WriteError,
)
from offprompt.page.answers import ANSWERS, NOT_THIS_PAGE, answer_for
from offprompt.page.forms import FormUnreadable
from offprompt.page.submission import BadFpKey, NotSealed, SealUnopened, WrongNonce


def _subclasses(cls: type[BaseException]) -> Iterator[type[BaseException]]:
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def _every_module(package: str) -> Iterator[str]:
    root = importlib.import_module(package)
    for found in pkgutil.walk_packages(root.__path__, package + "."):
        if not found.name.endswith("__main__"):
            yield found.name


def _error_classes() -> set[type[BaseException]]:
    """Every class of the error root, wherever in offprompt it is defined, and every exception
    the page defines itself (the unreadable form, each bad post)."""
    for name in _every_module("offprompt"):
        importlib.import_module(name)
    found: set[type[BaseException]] = {OffpromptError, *_subclasses(OffpromptError)}
    for name in ["offprompt.page", *_every_module("offprompt.page")]:
        module = importlib.import_module(name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if issubclass(cls, BaseException) and cls.__module__ == name:
                found.add(cls)
    return found


def test_every_error_class_has_its_own_row() -> None:
    """A new error class fails here until someone decides how the page answers it."""
    missing = sorted(c.__qualname__ for c in _error_classes() if c not in ANSWERS)
    assert missing == []


def test_the_page_defines_the_errors_this_test_derives() -> None:
    """The derivation finds the page's own errors, so the test above is not vacuous."""
    found = _error_classes()
    for cls in (FormUnreadable, WrongNonce, NotSealed, SealUnopened, BadFpKey, TrackedFile):
        assert cls in found


def test_anything_else_is_the_handler_boundarys_500() -> None:
    """An error without a row gets its nearest base class's answer, or the boundary's 500."""

    class Odd(WriteError):
        pass

    assert answer_for(Odd("x")) is ANSWERS[WriteError]
    assert answer_for(KeyError("x")) is ANSWERS[Exception]
    assert ANSWERS[Exception].status_of(KeyError()) == 500


@pytest.mark.parametrize(
    ("error", "shape", "status"),
    [
        (RequestClosed("r1"), "closed", 0),
        (CheckRejected({}), "check", 409),
        (ValidationFailed({"API_KEY": ["Required"]}), "form", 422),
        (TrackedFile("tracked"), "form", 422),
        (UnsafeValue("unsafe"), "form", 422),
        (WriteError("disk full"), "form", 500),
        (WrongNonce(), "message", 403),
        (NotSealed(), "message", 400),
        (SealUnopened(), "message", 403),
        (BadFpKey(), "form", 422),
    ],
)
def test_each_error_keeps_its_answer(error: BaseException, shape: str, status: int) -> None:
    """The shapes and statuses of DESIGN §6 and §16, unchanged."""
    answer = answer_for(error)
    assert (answer.shape, answer.status_of(error)) == (shape, status)


@pytest.mark.parametrize("status", [400, 413, 415])
def test_an_unreadable_form_answers_its_own_status(status: int) -> None:
    """413, 415 or 400, as `read_form` decided, with the status's default text."""
    answer = answer_for(FormUnreadable(status))
    assert (answer.shape, answer.status_of(FormUnreadable(status))) == ("message", status)
    assert answer.says(FormUnreadable(status)) is None


def test_a_wrong_nonce_and_an_unopened_seal_say_the_same() -> None:
    """Nobody can tell from the answer which of the two it was (DESIGN §5)."""
    nonce, sealed = answer_for(WrongNonce()), answer_for(SealUnopened())
    assert nonce.says(WrongNonce()) == sealed.says(SealUnopened()) == NOT_THIS_PAGE
    assert nonce.status == sealed.status == 403


def test_texts_and_log_lines_of_the_submitters_errors() -> None:
    """What the page shows and logs for each of the Submitter's errors."""
    failed = ValidationFailed({"API_KEY": ["Required"], "OTHER": ["Too long"]})
    assert answer_for(failed).says(failed) is None
    assert answer_for(failed).logged(failed) == "422 (API_KEY, OTHER)"
    tracked = TrackedFile(".env is tracked by git")
    assert answer_for(tracked).says(tracked) == ".env is tracked by git"
    assert answer_for(tracked).tracked
    write = WriteError("no space left")
    assert answer_for(write).says(write) == "Nothing was written: no space left"
    assert answer_for(write).logged(write) == "500, nothing written (WriteError)"
    assert answer_for(write).level == logging.WARNING


def test_an_unexpected_error_never_shows_or_logs_its_message() -> None:
    """The boundary's answer names the error's type and line, never what it says."""
    canary = "canary-" + secrets.token_hex(8)
    try:
        raise ValueError(canary)
    except ValueError as exc:
        answer = answer_for(exc)
        shown, logged = answer.says(exc) or "", answer.logged(exc)
    assert canary not in shown
    assert canary not in logged
    assert logged.startswith("500, write failed (ValueError at ")
    assert shown == "offprompt could not handle that. Nothing was written. Try again."
    assert answer.level == logging.ERROR
