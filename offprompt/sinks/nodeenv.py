"""How `node --env-file` reads a .env in every maintained Node line (22 and 24): a port of its
parser, used before writing to check that the lines around a statement we write do not hide it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Assignment", "assignments", "parse"]

# Port of `Dotenv::ParseContent` (src/node_dotenv.cc) as Node 22.23.5 and 24.22.3 both run it:
# the same code in both lines, behind `--env-file` and `util.parseEnv` alike. tests/unit/sinks
# checks the port against both real binaries on random text. The quirks that decide whether a
# written statement is seen: CR is deleted everywhere first; spaces, tabs and LFs are trimmed
# around keys, values and between statements; a line with no `=` is skipped; but a line whose
# `=` is followed by nothing except spaces or tabs takes the next non-blank line as its value
# (`X= \nA=1` sets X to "A=1"), and a quote left open runs on to the next same quote, over any
# number of lines. `export ` is stripped (then the rest trimmed), except from `export A=` with
# nothing after the `=`, which sets "export A". After a closing quote the rest of its line is
# skipped, so the next statement starts on the following line.

_BLANKS = " \t\n"


@dataclass(frozen=True)
class Assignment:
    """One value Node stores, with where it read it in the text given to `assignments`."""

    key: str
    value: str = field(repr=False)
    start: int  # the statement's first character (its key, blanks before it skipped)
    end: int  # just past the last character Node read as part of the value
    reaches_on: bool  # nothing but spaces or tabs after its `=`, so its value starts later


def _trim(buf: str, lo: int, hi: int) -> tuple[int, int]:
    while lo < hi and buf[lo] in _BLANKS:
        lo += 1
    while hi > lo and buf[hi - 1] in _BLANKS:
        hi -= 1
    return lo, hi


def _line_end(buf: str, lo: int, hi: int) -> int:
    """Index of the next LF in buf[lo:hi], or -1."""
    return buf.find("\n", lo, hi)


def assignments(text: str) -> list[Assignment]:
    """Every value Node stores from `text`, in the order it stores them (later ones win)."""
    # Where each character of the CR-less text sits in `text` (and one past the end).
    kept: Sequence[int]
    if "\r" in text:
        kept = [i for i, c in enumerate(text) if c != "\r"]
        kept.append(len(text))
    else:
        kept = range(len(text) + 1)
    buf = text.replace("\r", "")
    found: list[Assignment] = []

    def store(key: str, value: str, start: int, end: int, reaches_on: bool = False) -> None:
        # `end` in the text given: just past the last character read, CRs after it left out.
        end_at = kept[end - 1] + 1 if end > start else kept[start]
        found.append(Assignment(key, value, kept[start], end_at, reaches_on))

    lo, hi = _trim(buf, 0, len(buf))
    while lo < hi:
        if buf[lo] in "\n#":
            newline = _line_end(buf, lo, hi)
            lo = newline + 1 if newline != -1 else hi
            continue
        start = lo
        newline = _line_end(buf, lo, hi)
        # Only an `=` on this line counts: looking past it would make a file of lines without
        # one quadratic.
        equal = buf.find("=", lo, newline if newline != -1 else hi)
        if equal == -1:
            if newline == -1:
                break
            lo, hi = _trim(buf, newline + 1, hi)
            continue
        key_lo, key_hi = _trim(buf, lo, equal)
        key = buf[key_lo:key_hi]
        lo = equal + 1
        if lo == hi or buf[lo] == "\n":
            store(key, "", start, lo)
            continue
        rest_of_line = _line_end(buf, lo, hi)
        reaches_on = not buf[lo : rest_of_line if rest_of_line != -1 else hi].strip(" \t")
        lo, hi = _trim(buf, lo, hi)
        if not key:
            continue
        if key.startswith("export "):
            key = buf[slice(*_trim(buf, key_lo + 7, key_hi))]
        if lo == hi:
            store(key, "", start, lo, reaches_on)
            break
        quote = buf[lo]
        closing = buf.find(quote, lo + 1, hi) if quote in "'\"`" else -1
        if closing != -1:
            value = buf[lo + 1 : closing]
            if quote == '"':
                value = value.replace("\\n", "\n")
            store(key, value, start, closing + 1, reaches_on)
            newline = _line_end(buf, closing + 1, hi)
            lo = newline + 1 if newline != -1 else hi
            continue
        newline = _line_end(buf, lo, hi)
        end = newline if newline != -1 else hi
        if quote in "'\"`":
            store(key, buf[lo:end], start, end, reaches_on)
            if newline == -1:
                break
        else:
            hash_char = buf.find("#", lo, end)
            value_lo, value_hi = _trim(buf, lo, hash_char if hash_char != -1 else end)
            store(key, buf[value_lo:value_hi], start, end, reaches_on)
        lo, hi = _trim(buf, end + 1 if newline != -1 else hi, hi)
    return found


def parse(text: str) -> dict[str, str]:
    """The variables Node sets from `text` (the last assignment of a name wins)."""
    return {a.key: a.value for a in assignments(text)}
