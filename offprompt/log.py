"""Logging to stderr with the `offprompt: ` prefix; stdout belongs to the protocol.

Callers pass names, paths and ids only, never a value. Every line on stderr starts with the
prefix: a logged name holding a line break is spelled out, not split, other libraries' records
go through the same handler, and an exception is shown as its kind and place, never as a
traceback (whose text could quote anything, a value included).
"""

import logging
import os
import sys
import threading
import unicodedata
from types import TracebackType
from typing import Any

_LOGGER_NAME = "offprompt"
PREFIX = "offprompt: "


def one_line(text: str) -> str:
    """`text` with control characters and lone surrogates spelled out as `\\uXXXX`."""
    out = []
    for ch in text:
        if unicodedata.category(ch) in {"Cc", "Cs"}:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def kind(exc: BaseException | None, tb: TracebackType | None = None) -> str:
    """An exception's type and where it was raised, never its message."""
    if exc is None:
        return "unknown"
    tb = tb or exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    where = f" at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}" if tb is not None else ""
    return f"{type(exc).__name__}{where}"


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info and record.exc_info[1] is not None:
            message += f" ({kind(record.exc_info[1], record.exc_info[2])})"
        return PREFIX + one_line(message)


def setup(default: str = "info") -> logging.Logger:
    """Configure the `offprompt` logger once, to stderr, at OFFPROMPT_LOG's level (else
    `default`); every other library's warnings go through the same prefixed handler."""
    logger = logging.getLogger(_LOGGER_NAME)
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
        logger.propagate = False
        root = logging.getLogger()
        if not root.handlers:
            other = logging.StreamHandler(sys.stderr)
            other.setFormatter(_Formatter())
            other.setLevel(logging.WARNING)
            root.addHandler(other)
    level = os.environ.get("OFFPROMPT_LOG", "").strip().lower() or default
    logger.setLevel({"debug": logging.DEBUG, "warning": logging.WARNING}.get(level, logging.INFO))
    return logger


def catch_uncaught() -> None:
    """Uncaught exceptions, in any thread, are one prefixed line with their kind, not a
    traceback. For a process that owns its stderr (`offprompt serve`)."""

    def hook(exc_type: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        if not issubclass(exc_type, KeyboardInterrupt):
            get().error("unexpected error (%s)", kind(exc, tb))

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_value is not None:
            hook(args.exc_type, args.exc_value, args.exc_traceback)

    sys.excepthook = hook
    threading.excepthook = thread_hook


def asyncio_handler(_loop: object, context: dict[str, Any]) -> None:
    """An event loop's exception handler: the loop's own message and the exception's kind only
    (the default handler prints the task's repr, which can quote its data)."""
    exc = context.get("exception")
    message = context.get("message", "error in the event loop")
    get().error("%s (%s)", message, kind(exc) if isinstance(exc, BaseException) else "no detail")


def get() -> logging.Logger:
    return logging.getLogger(_LOGGER_NAME)
