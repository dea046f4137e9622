"""A .env's names and values as python-dotenv reads them, fast enough for any size status reads
(16 MiB of `A=1` lines in seconds), and which of its names offprompt may show. Pure text.

Lines of the common shapes (`KEY=value`, `KEY='v' # c`, comments, blanks) are read with one
regex each, giving exactly what python-dotenv's parser gives them; every other run of lines is
handed to python-dotenv's own parser (tests/unit/sinks/test_sinks_dotenv_read.py checks the two
agree on random texts). `dotenv.Parsed`, which the write path needs, stays the reference.
"""

from __future__ import annotations

import io
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from offprompt.names import BOUNDED_NAME

if TYPE_CHECKING:
    from dotenv.parser import Binding

__all__ = ["Read", "TooSlow", "is_dotenv_name", "pem_blocks", "read", "shown_keys"]


def is_dotenv_name(name: str) -> bool:
    """Whether a file's name says it is a dotenv file (DESIGN §12): `.env`, `.env.*`, `*.env`."""
    return name == ".env" or name.startswith(".env.") or name.endswith(".env")


_BOM: Final = "\ufeff"
# A PEM armour line's start, in any case (OpenSSL reads `-----begin` too), anywhere on a line:
# after `KEY=`, after `KEY="`, or on the line after `KEY=`.
_PEM_BEGIN: Final = re.compile(r"-----BEGIN", re.IGNORECASE)
_PEM_END: Final = re.compile(r"-----END", re.IGNORECASE)

# One whole line (LF text, no line ending) python-dotenv reads as one statement on its own, and
# whose key and value these groups give exactly (the key as python-dotenv's unquoted key; none
# for a comment, a blank line or a statement it skips): an unquoted value holds no blank, `#` or
# quote (python-dotenv cuts ` #…` and trailing blanks off it), a quoted one no backslash and no
# quote of its kind, closed on the line (escapes and multi-line values go to python-dotenv).
# Blanks are only spaces and tabs; any other line goes to python-dotenv too.
_SIMPLE: Final = re.compile(
    r"[ \t]*(?:"
    # `export KEY`, or a KEY that is not `export` followed by blanks (python-dotenv takes those
    # as the prefix and then finds no key)
    r"(?:export[ \t]+|(?!export[ \t]))(?P<key>[^\s=#'][^\s=#]*)[ \t]*(?:=[ \t]*(?:"
    r"(?:(?P<bare>[^\s#'\"][^\s#]*)(?:[ \t]+#.*)?)?[ \t]*"
    r"|'(?P<single>[^'\\\n]*)'[ \t]*(?:#.*)?"
    r"|\"(?P<double>[^\"\\\n]*)\"[ \t]*(?:#.*)?"
    r"))?"
    r"|#.*"
    # no key: a statement python-dotenv skips, to the end of its line: one that starts with
    # `=`, or a word, blanks, then more than `=` or `#` (`-----BEGIN RSA KEY-----`)
    r"|(?P<skip>=.*|(?:export[ \t]+|(?!export[ \t]))[^\s=#'][^\s=#]*[ \t]+[^\s=#].*)"
    r")?"
)


# The plainest line, `KEY=value` with no blank, quote, `#` or backslash anywhere: a strict part
# of `_SIMPLE`'s lines (its `key` and `bare` groups), so these pairs are what it would give. Up
# to 4096 such lines at a time, so the deadline is still read between runs.
_PLAIN: Final = r"([^\s=#'\"\\][^\s=#'\"\\]*)=([^\s#'\"\\]*)\n"
_PLAIN_RUN: Final = re.compile(f"(?:{_PLAIN}){{1,4096}}")
_PLAIN_PAIR: Final = re.compile(_PLAIN)
# Lines that start with `=`: statements python-dotenv skips (`_SIMPLE`'s `skip`), one bad line each.
_SKIP_RUN: Final = re.compile(r"(?:=[^\n]*\n){1,4096}")


class TooSlow(Exception):
    """The text was not read by the deadline `read` was given (python-dotenv's own parser is
    slow on some shapes: a quote left open at the top of 16 MiB takes it most of a minute).

    Outside the error root on purpose: status turns it into an Unreadable naming the file.
    """


@dataclass(frozen=True)
class Read:
    """What python-dotenv reads (uninterpolated, a bare `KEY` unsetting it) and the names
    offprompt shows of it (see `shown_keys`)."""

    values: dict[str, str] = field(repr=False)
    keys: tuple[str, ...]
    opaque: bool
    bad_lines: tuple[int, ...]
    """As `dotenv.bad_lines`: where each statement python-dotenv skips starts."""
    bare: bool = False
    """Some line outside a PEM block is a bare word with no `=` (`KEY`, or a base32 seed): the
    text is not every line an assignment, a comment or blank, so no name of it is shown."""


def read(text: str, deadline: float | None = None) -> Read:
    """`text` read as python-dotenv reads a file holding it; one pass, linear in its size.
    TooSlow when `time.monotonic()` passes `deadline` before the end."""
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = pem_blocks(lf)
    last: dict[str, str | None] = {}
    bad: list[int] = []
    # (key, first line) of every statement, needed only to tell which start inside a PEM block.
    placed: list[tuple[str, int]] = []
    bare_at: list[int] = []  # first lines of the statements with no `=` (python-dotenv unsets)
    for item in _statements(lf, deadline):
        if isinstance(item, _Run):
            last.update(item.pairs)
            if blocks:
                placed.extend((k, item.line + i) for i, (k, _) in enumerate(item.pairs))
            continue
        key, value, line = item
        if key is None:
            bad.append(line)
        else:
            last[key] = value
            if value is None:
                bare_at.append(line)
            if blocks:
                placed.append((key, line))
    values = {k: v for k, v in last.items() if v is not None}
    if blocks:
        keys, opaque = _shown(placed, blocks, values)
    elif any(BOUNDED_NAME.fullmatch(k) is None for k in last):
        # No block: every statement counts, and `last` holds each statement's key once.
        keys, opaque = (), True
    else:
        keys, opaque = tuple(values), False
    return Read(values, keys, opaque, tuple(bad), _outside(bare_at, blocks))


def _outside(lines: list[int], blocks: list[tuple[int, int]]) -> bool:
    """Whether any of `lines` (in order) is not a line of a value inside a PEM block (after its
    BEGIN, up to its END); one pass over both, since both are in file order."""
    reach, b = -1, 0
    for line in lines:
        while b < len(blocks) and blocks[b][0] < line:
            reach = max(reach, blocks[b][1])
            b += 1
        if line > reach:
            return True
    return False


@dataclass(frozen=True)
class _Run:
    """Consecutive lines of the plainest shape, `KEY=value` and nothing else, from `line` on:
    their (key, value) pairs, read by one `findall` instead of a regex match a line."""

    pairs: list[tuple[str, str]] = field(repr=False)
    line: int


def _statements(
    lf: str, deadline: float | None
) -> Iterable[tuple[str | None, str | None, int] | _Run]:
    """(key, value or None, first line) of every statement with a key, and (None, None, first
    line) of every statement python-dotenv skips, in file order; runs of plain lines as a _Run."""
    pos = len(_BOM) if lf.startswith(_BOM) else 0  # python-dotenv drops a leading BOM
    line = passes = 1
    size = len(lf)
    # Past the last quote, no quoted value python-dotenv reads before it can reach further.
    quotes_end = max(lf.rfind("'"), lf.rfind('"')) + 1
    plain_next = True
    while pos < size:
        first = lf[pos]
        # Runs of the two commonest shapes at C speed; the first character says which to try.
        run = (
            _PLAIN_RUN.match(lf, pos)
            if plain_next and (first.isalpha() or first == "_")
            else _SKIP_RUN.match(lf, pos)
            if first == "="
            else None
        )
        if run is None:
            plain_next = False  # tried again after a line of the plain shape
        else:
            if first == "=":
                count = lf.count("\n", pos, run.end())
                yield from ((None, None, n) for n in range(line, line + count))
            else:
                pairs = _PLAIN_PAIR.findall(lf, pos, run.end())
                count = len(pairs)
                yield _Run(pairs, line)
            pos, line = run.end(), line + count
            if deadline is not None and time.monotonic() > deadline:
                raise TooSlow
            continue
        # Counted in passes, not lines: a pass may take several lines, so a line number could
        # step over every multiple of the period and the clock never be read.
        passes += 1
        if deadline is not None and not passes % 4096 and time.monotonic() > deadline:
            raise TooSlow
        end = lf.find("\n", pos)
        end = size if end < 0 else end
        m = _SIMPLE.fullmatch(lf, pos, end)
        if m is not None:
            key = m["key"]
            if key is not None:
                if m["single"] is not None:
                    value: str | None = m["single"]
                elif m["double"] is not None:
                    value = m["double"]
                elif "=" in lf[m.end("key") : end]:
                    value = m["bare"] or ""
                    plain_next = True
                else:
                    value = None
                yield key, value, line
            elif m["skip"] is not None:
                yield None, None, line
            pos, line = end + 1, line + 1
            continue
        # Lines python-dotenv must read: up to the next line the regex reads. Read alone, they
        # read as in the whole text when python-dotenv skipped none of them and the last ends
        # with its line ending (its grammar looks at nothing past such a statement); else
        # python-dotenv reads all the rest of the text.
        stop = _next_simple(lf, end + 1)
        chunk = lf[pos:stop]
        bindings = _bindings(chunk, deadline)
        # A statement python-dotenv skipped alone may be a quoted value that the rest closes;
        # with no quote in the rest, none can, and it is skipped in the whole text too.
        clean = stop == size or (
            (stop >= quotes_end or all(not b.error for b in bindings))
            and bool(bindings)
            and bindings[-1].original.string.endswith("\n")
        )
        if not clean:
            chunk, stop = lf[pos:], size
            bindings = _bindings(chunk, deadline)
        # A U+FEFF that starts what python-dotenv is given would be dropped as a BOM: it is
        # given a line ending before it, one line more to take off.
        shift = 1 if chunk.startswith(_BOM) else 0
        for b in bindings:
            if b.key is not None or b.error:
                s = b.original.string
                blank = s[: len(s) - len(s.lstrip())]
                yield b.key, b.value, line - 1 - shift + b.original.line + blank.count("\n")
        pos, line = stop, line + chunk.count("\n")


def _next_simple(lf: str, pos: int) -> int:
    """The start of the first line from `pos` on that `_SIMPLE` reads (the end if none)."""
    size = len(lf)
    while pos < size:
        end = lf.find("\n", pos)
        end = size if end < 0 else end
        if _SIMPLE.fullmatch(lf, pos, end) is not None:
            return pos
        pos = end + 1
    return size


def _bindings(chunk: str, deadline: float | None) -> list[Binding]:
    """python-dotenv's bindings for `chunk` (LF text) as part of a longer text: a U+FEFF at its
    start is kept (python-dotenv drops one only at the start of a file)."""
    from dotenv.parser import parse_stream

    if deadline is not None and time.monotonic() > deadline:
        raise TooSlow  # read before each chunk too: many small ones add up
    given = "\n" + chunk if chunk.startswith(_BOM) else chunk
    out: list[Binding] = []
    for binding in parse_stream(io.StringIO(given, newline="\n")):
        out.append(binding)
        if deadline is not None and not len(out) % 512 and time.monotonic() > deadline:
            raise TooSlow
    return out


def shown_keys(
    statements: Iterable[tuple[str, int]], lf: str, values: dict[str, str]
) -> tuple[tuple[str, ...], bool]:
    """The names offprompt may show of a .env, and whether the text is `opaque`.

    `statements`: (key, first line) of each statement in file order; `lf`: the text with LF
    line endings. A statement that starts inside a PEM block (after the line of a BEGIN, up to
    its END) is a line of a value, never a name. Opaque: another statement's key is outside
    DESIGN §3.1's pattern, so the text is no dotenv file but a value (an AWS credentials file,
    a key, `abc…==` read as `NAME=`), and no name of it is shown. Else the keys of `values`
    that some statement outside the blocks assigns, in `values`' order.
    """
    return _shown(statements, pem_blocks(lf), values)


def _shown(
    statements: Iterable[tuple[str, int]], blocks: list[tuple[int, int]], values: dict[str, str]
) -> tuple[tuple[str, ...], bool]:
    """`shown_keys` with the text's PEM blocks already found."""
    named: set[str] = set()
    reach, b = -1, 0
    for key, first in statements:  # in file order, so `first` grows
        while b < len(blocks) and blocks[b][0] < first:
            reach = max(reach, blocks[b][1])
            b += 1
        if first <= reach:
            continue
        if BOUNDED_NAME.fullmatch(key) is None:  # DESIGN §3.1's: what offprompt shows as a name
            return (), True
        named.add(key)
    return tuple(k for k in values if k in named), False


def pem_blocks(lf: str) -> list[tuple[int, int]]:
    """Each PEM block of the LF-only text as (line of its BEGIN, line of its END), lines counted
    from 1, in order; the END of a block left open is past the last line. One pass."""
    blocks: list[tuple[int, int]] = []
    pos, line = 0, 1  # `line` is the number of the line holding `pos`
    while (m := _PEM_BEGIN.search(lf, pos)) is not None:
        line += lf.count("\n", pos, m.start())
        begin = line
        end_m = _PEM_END.search(lf, m.end())
        if end_m is None:
            blocks.append((begin, line + lf.count("\n", m.end()) + 1))
            break
        line += lf.count("\n", m.start(), end_m.start())
        blocks.append((begin, line))
        pos = end_m.end()
    return blocks
