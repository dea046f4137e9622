"""The last check before a .env is written: every written name reads back as its value for
python-dotenv, Node and bash, whatever the other lines do; else a reason naming the line to fix.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Mapping

from offprompt.sinks import dotenv, nodeenv, shell

__all__ = ["hidden"]

# Each reader is asked in its own terms: python-dotenv through our port of its grammar, Node
# through a port of its parser, bash through a conservative tracker of where its commands start.
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
            gluers = _node_gluers(old_text)
            if gluers:
                which = (
                    f"line {_lines(gluers)} of {shown} has"
                    if len(gluers) == 1
                    else (f"lines {_lines(gluers)} of {shown} have")
                )
                return (
                    f"Node's --env-file would not see {name}: {which} no '=' and no '#' at the"
                    " start (a line holding only spaces, or an indented comment, counts), so"
                    " Node reads it as part of the next name. Remove or fix it and try again."
                )
            return (
                f"Node's --env-file would not see {name}: an earlier line of {shown} (an"
                " unclosed quote or backtick?) runs into it. Fix that line and try again."
            )
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


def _node_gluers(text: str) -> tuple[int, ...]:
    """Lines Node 20 glues onto the next key: not blank, not starting with `#`, without `=`,
    and not inside a multi-line value."""
    inside: list[tuple[int, int]] = []
    for e in dotenv.parse(text):
        if e.value is not None:
            first_line_end = text.find("\n", e.start)
            inside.append((first_line_end + 1 if first_line_end != -1 else e.end, e.end))
    found: list[int] = []
    pos = 0
    # Lines as Node sees them: split at LF only (it deletes every CR first).
    for number, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+\Z", text), start=1):
        start, pos = pos, pos + len(line)
        if any(lo <= start < hi for lo, hi in inside):
            continue
        bare = line.replace("\r", "").rstrip("\n")
        if number == 1:
            bare = bare.lstrip(" ")  # Node trims spaces at the start of the file
        if bare and not bare.startswith("#") and "=" not in bare:
            found.append(number)
    return tuple(found)
