"""The last check before a .env is written: every written name reads back as its value for
python-dotenv, Node and bash, whatever the other lines do; else a reason naming the line to fix.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping

from offprompt.sinks import dotenv, nodeenv, shell

__all__ = ["hidden"]

# Each reader is asked in its own terms: python-dotenv itself (`dotenv_values`), Node 22/24
# through a port of their parser (fuzzed against the official binaries), bash through a
# conservative tracker of where its commands start.
# Existing lines are never rewritten to make room: the person is told which line to fix.


def hidden(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    """Why some name in `written` would not read back from `new_text`, or None when all do.

    The reason names keys and line numbers of `old_text` (unchanged, since nothing is written
    then), never a value.
    """
    for check in (_python_dotenv, _node, _bash):
        why = check(new_text, old_text, written, shown)
        if why is not None:
            return why
    return None


def _python_dotenv(
    new_text: str, old_text: str, written: Mapping[str, str], shown: str
) -> str | None:
    # python-dotenv itself, as an app calls it (defaults, interpolation on), on the bytes about
    # to be written, decoded the way `dotenv_values(path)` opens the file (universal newlines).
    from dotenv import dotenv_values

    stream = io.TextIOWrapper(io.BytesIO(new_text.encode("utf-8")), encoding="utf-8")
    # Its warning for each line it skips numbers the text about to be written; the reason below
    # names the line of the file as it is, so the warning would only mislead.
    logger = logging.getLogger("dotenv.main")
    logger.addFilter(_drop)
    try:
        read = dotenv_values(stream=stream)
    finally:
        logger.removeFilter(_drop)
    for name, value in written.items():
        if read.get(name) != value:
            bad = dotenv.bad_lines(old_text)
            where = f" (look at line {_lines(bad)})" if bad else ""
            return (
                f"A line of {shown} that python-dotenv cannot read would hide {name} from"
                f" it{where}; fix that line and try again."
            )
    return None


def _drop(record: logging.LogRecord) -> bool:
    return False


def _node(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    node = nodeenv.parse(new_text)
    for name, value in written.items():
        if node.get(name) != value:
            return _node_reason(name, new_text, old_text, shown)
    return None


def _node_reason(name: str, new_text: str, old_text: str, shown: str) -> str:
    """Which line makes Node miss `name`, found by reading `new_text` as Node does."""
    ours = [e.start for e in dotenv.parse(new_text) if e.key == name]
    at = ours[0] if ours else len(new_text)
    seen = nodeenv.assignments(new_text)
    over = [a for a in seen if a.start < at < a.end]
    if over:
        line = _old_line(over[-1].start, new_text, old_text)
        where = f"line {line} of {shown}" if line else f"a line above it in {shown}"
        if over[-1].reaches_on:
            return (
                f"Node's --env-file would not see {name}: {where} has nothing but blanks after"
                " its '=', so Node takes the next line as that value. Remove the blanks after"
                " the '=' (or put '' there) and try again."
            )
        return (
            f"Node's --env-file would not see {name}: {where} opens a quote or backtick that"
            " it does not close, so Node reads on into the new line. Close it and try again."
        )
    later = [a for a in seen if a.key == name and a.start >= at]
    line = _old_line(later[-1].start, new_text, old_text) if later else None
    if line:
        return (
            f"Node's --env-file would not see {name} as written: line {line} of {shown} sets"
            " it again when Node reads the file (inside a value the other readers see as"
            " several lines?). Fix or remove that line and try again."
        )
    return (
        f"Node's --env-file would not see {name} as written: another line of {shown} (an"
        " unclosed quote or backtick?) runs into it. Fix that line and try again."
    )


def _old_line(offset: int, new_text: str, old_text: str) -> int | None:
    """The line of `old_text` holding `new_text[offset]`, when that part was not rewritten."""
    size = min(len(new_text), len(old_text))
    head = 0
    while head < size and new_text[head] == old_text[head]:
        head += 1
    if offset < head:
        return old_text.count("\n", 0, offset) + 1
    tail = 0
    while tail < size - head and new_text[-1 - tail] == old_text[-1 - tail]:
        tail += 1
    if offset >= len(new_text) - tail:
        return old_text.count("\n", 0, offset - len(new_text) + len(old_text)) + 1
    return None


def _bash(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    entries = dotenv.parse(new_text)
    bash = shell.scan(new_text)
    for name in written:
        mine = [e for e in entries if e.key == name]
        if mine[0].start not in bash.clean:
            return _bash_reason(name, old_text, shown)
    return None


def _bash_reason(name: str, old_text: str, shown: str) -> str:
    stop = shell.scan(old_text).stop
    if stop is not None:
        offset, what = stop
        line = old_text.count("\n", 0, offset) + 1
        return (
            f"bash might not see {name}: offprompt cannot tell where bash stops reading line"
            f" {line} of {shown} ({what}). Fix or remove that line and try again."
        )
    return (
        f"bash would not see {name}: the line above it in {shown} ends with a backslash, which"
        " joins the two lines. Remove the backslash and try again."
    )


def _lines(numbers: tuple[int, ...]) -> str:
    shown = ", ".join(map(str, numbers[:5]))
    return shown + (" …" if len(numbers) > 5 else "")
