"""The .env format: python-dotenv's own parser with raw-text offsets, and the upsert (each value
quoted as `dotenv_quoting` says). Pure text; no I/O. `offprompt keys` and the checks reuse `keys`.
"""

from __future__ import annotations

import bisect
import io
import os
import re
from collections import ChainMap
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from offprompt import bashlex
from offprompt.errors import RefusedRequest
from offprompt.sinks import dotenv_quoting, dotenv_read

if TYPE_CHECKING:
    from dotenv.parser import Binding

__all__ = [
    "NAME_PATTERN",
    "Entry",
    "Parsed",
    "Upserted",
    "bad_lines",
    "parse",
    "upsert",
]

# A name every reader takes as a plain assignment: bash needs a shell identifier (bashlex's),
# Node and python-dotenv take anything up to `=`. (The names offprompt asks for are narrower:
# offprompt.names.)
NAME_PATTERN = re.compile(bashlex.NAME_PATTERN)

# --- Parsing -------------------------------------------------------------------------------
# python-dotenv's own parser decides every key, value and unreadable statement; this part only
# finds where each statement sits in the raw text, so the upsert can splice it and leave every
# other byte alone. `dotenv_values(path)` opens the file in universal-newline mode, so the
# parser is given the text with CRLF and CR turned into LF, and offsets are mapped back to the
# raw text. python-dotenv is imported on the first read, not when the server starts.
_CRLF = re.compile(r"\r\n")
_EXPORT = re.compile(r"export[^\S\r\n]+")
_BOM = "\ufeff"


@dataclass(frozen=True)
class Entry:
    """One `KEY=value` (or bare `KEY`) statement as python-dotenv reads it.

    `value` is None for a bare `KEY` line, else the value before `${}` interpolation. `start`/`end`
    are character offsets of the whole statement in the raw text: from the start of the key's
    line (indentation included, blank lines before it excluded) to after its line ending.
    `prefix` is the text before the key (indentation, `export `), `comment` a ` # ...` kept after
    the value (or ''), `eol` the statement's raw line ending ('' at the end of the text).
    """

    key: str
    value: str | None = field(repr=False)
    start: int
    end: int
    first_line: int
    last_line: int
    prefix: str
    comment: str
    eol: str


def _newlines_to_lf(s: str) -> str:
    return s.replace("\r\n", "\n").replace("\r", "\n")


def _python_dotenv(lf_text: str) -> Iterator[Binding]:
    """python-dotenv's bindings for text already in universal-newline form."""
    from dotenv.parser import parse_stream

    return parse_stream(io.StringIO(lf_text, newline="\n"))


class _RawOffsets:
    """Maps an offset in the LF-only text back to the raw text: each CRLF before it is one
    character longer there."""

    def __init__(self, raw: str) -> None:
        self._lfs = [m.start() - i for i, m in enumerate(_CRLF.finditer(raw))]

    def of(self, pos: int) -> int:
        return pos + bisect.bisect_left(self._lfs, pos)


# Where python-dotenv may start reading again after an edit: the end of a statement it read
# without error, that ends with its line ending and is not the last, in the LF text and in the
# raw text, and how many entries come before that point. python-dotenv's grammar has no anchor,
# lookbehind or lookahead, and such a statement's patterns look at no character past its end, so
# each statement before the first changed character reads the same in the edited text
# (tests/unit/sinks/test_sinks_dotenv_parse.py checks it on random edits).
_Resume = tuple[int, int, int]


def _statements(
    text: str, like: Parsed | None = None
) -> tuple[list[Entry], list[int], list[_Resume]]:
    """Every statement with a key, the first line of every statement python-dotenv skips, and
    the points it may resume from. With `like`, the statements before the first character where
    `text` and `like.text` differ are taken from `like` rather than read again."""
    lf = _newlines_to_lf(text)
    raw = _RawOffsets(text)
    entries: list[Entry] = []
    errors: list[int] = []
    resume: list[_Resume] = []
    pos = len(_BOM) if lf.startswith(_BOM) else 0  # python-dotenv drops a leading BOM
    line = 0
    given = lf  # what python-dotenv reads: all of it, or what follows the point resumed from
    if like is not None:
        point = _resume_point(text, like)
        if point is not None:
            resume = list(like.resume[: point + 1])
            pos, _, count = resume[-1]
            entries = list(like.entries[:count])
            line = lf.count("\n", 0, pos)
            given = lf[pos:]
            if pos == len(lf):  # the edit cut the text there: that statement is the last now
                resume.pop()
    stable = True
    for binding in _python_dotenv(given):
        s = binding.original.string
        at, pos = pos, pos + len(s)
        blank = s[: len(s) - len(s.lstrip())]  # python-dotenv's `\s*` before the statement
        own = blank.rfind("\n") + 1  # the statement's own text starts on this line
        first_line = line + binding.original.line + blank.count("\n")
        key = binding.key
        # Not the last statement: python-dotenv looked for more text after it (its blanks at the
        # end, read up to the end, would be the blanks before a statement added after them).
        stable = stable and not binding.error and s.endswith("\n") and pos < len(lf)
        if key is None:  # a comment, the blanks at the end, or a statement python-dotenv skips
            if binding.error:
                errors.append(first_line)
        else:
            eol = "\n" if s.endswith("\n") else ""
            body = s[own : len(s) - len(eol)]
            entries.append(
                Entry(
                    key=key,
                    value=binding.value,
                    start=raw.of(at + own),
                    end=raw.of(pos),
                    first_line=first_line,
                    last_line=first_line + body.count("\n"),
                    prefix=_prefix(body, key),
                    comment=_comment(s, len(s) - len(eol), key, binding.value),
                    eol=text[raw.of(pos - len(eol)) : raw.of(pos)],
                )
            )
        if stable:
            resume.append((pos, raw.of(pos), len(entries)))
    return entries, errors, resume


def _resume_point(text: str, like: Parsed) -> int | None:
    """The index in `like.resume` of the last point before which `text` and `like.text` agree,
    where the rest of `text` reads on its own as it does in place; None if there is none."""
    same = _common_prefix(text, like.text)
    ends = [raw_end for _, raw_end, _ in like.resume]
    point = bisect.bisect_right(ends, same) - 1
    while point >= 0:
        _, raw_end, _ = like.resume[point]
        # Not between the CR and LF of a CRLF, and not before a U+FEFF python-dotenv would take
        # for a byte order mark at the start of what it is given.
        if not (text[raw_end - 1] == "\r" and text.startswith("\n", raw_end)) and not (
            text.startswith(_BOM, raw_end)
        ):
            return point
        point -= 1
    return None


def _common_prefix(a: str, b: str) -> int:
    """How many first characters `a` and `b` share, compared a block at a time."""
    size = min(len(a), len(b))
    lo, step = 0, 1 << 14
    while lo < size and a[lo : lo + step] == b[lo : lo + step]:
        lo += step
    hi = min(lo + step, size)
    while lo < hi:  # a[:lo] == b[:lo]; they differ before `hi` (or `hi` is the end)
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return min(lo, size)


def _prefix(body: str, key: str) -> str:
    """The indentation and `export ` before the key python-dotenv read from `body`."""
    rest = body.lstrip()
    indent = body[: len(body) - len(rest)]
    m = _EXPORT.match(rest)
    if m and rest[m.end() :].startswith((key, f"'{key}'")):
        return indent + m.group(0)
    return indent


_HASH_AFTER_BLANK = re.compile(r"[ \t]+#")


def _comment(s: str, stop: int, key: str, value: str | None) -> str:
    """The longest ` #...` ending the statement's last line that python-dotenv reads as a
    comment: without it, the statement still gives the same key and value.

    Only a comment bash also sees as one (a blank, then `#`) is worth keeping.
    """
    line_start = s.rfind("\n", 0, stop) + 1
    for m in _HASH_AFTER_BLANK.finditer(s, line_start, stop):
        cut = m.start()
        rest = list(_python_dotenv(s[:cut] + s[stop:]))
        if [(b.key, b.value, b.error) for b in rest] == [(key, value, False)]:
            return s[cut:stop]
    return ""


class Parsed:
    """A .env text read once by python-dotenv's parser, and all the write path asks of it.

    Every question below is answered from that one parse, so a write reads and parses a file a
    fixed number of times however many names it sets, and each answer is one linear pass.
    """

    def __init__(self, text: str, *, like: Parsed | None = None) -> None:
        """Parse `text`; `like`: the parse of a text it was edited from (the upsert's input), so
        that python-dotenv reads only from the first change on (the result is the same)."""
        self.text = text
        entries, errors, resume = _statements(text, like)
        self.entries: tuple[Entry, ...] = tuple(entries)
        self.bad_lines: tuple[int, ...] = tuple(errors)
        """Line numbers of statements python-dotenv cannot read (see `bad_lines`)."""
        self.resume: tuple[_Resume, ...] = tuple(resume)

    def __repr__(self) -> str:
        return f"Parsed({len(self.entries)} statements)"  # never the text: it holds values

    @cached_property
    def by_key(self) -> dict[str, list[Entry]]:
        """Each key's statements, in file order."""
        found: dict[str, list[Entry]] = {}
        for e in self.entries:
            found.setdefault(e.key, []).append(e)
        return found

    @cached_property
    def values(self) -> dict[str, str]:
        """What `dotenv_values(path, interpolate=False)` gives for a file holding the text,
        without the keys it maps to None: the last statement of a key wins, and a bare `KEY`
        unsets it."""
        return _held(self.entries)

    @cached_property
    def _shown(self) -> tuple[tuple[str, ...], bool]:
        return dotenv_read.shown_keys(
            ((e.key, e.first_line) for e in self.entries), _newlines_to_lf(self.text), self.values
        )

    @cached_property
    def opaque(self) -> bool:
        """Whether python-dotenv reads, outside a PEM block, a name no person would write as a
        key (outside DESIGN §3.1's pattern): the text is then not a dotenv file but a value (an
        AWS credentials file, a key, `abc…==` read as `NAME=`), and is shown by its file alone."""
        return self._shown[1]

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """The key names `values` holds that a person wrote as names, in the order they first
        appear (as python-dotenv's dict): what offprompt shows of a file, so never a part of a
        value. Left out: every statement that starts inside a PEM block, in any layout (CRLF,
        CR, a BOM, the BEGIN line after `KEY=`, lower case): python-dotenv reads such a line as
        a key, and its key is a base64 stretch of the secret (`MIIEvQIBADAN=` gives
        `MIIEvQIBADAN`). None at all when the text is `opaque` (a name outside DESIGN §3.1's
        pattern elsewhere): it is a value, not a dotenv file."""
        return self._shown[0]

    @cached_property
    def read_by_python_dotenv(self) -> dict[str, str | None]:
        """What `dotenv_values()` (its defaults: interpolation on, override) gives for a file
        holding this text, in the current environment.

        python-dotenv's own bindings and `${...}` atoms, resolved as its `resolve_variables`
        does, without the copy of the environment it makes for every key (which makes it
        quadratic in the number of keys). tests/unit/sinks checks it against `dotenv_values`.
        """
        from dotenv.variables import parse_variables

        read: dict[str, str | None] = {}
        env: ChainMap[str, str | None] = ChainMap(read, dict(os.environ))
        for e in self.entries:
            if e.value is None:
                read[e.key] = None
            elif "${" not in e.value:  # no atom but the literal value itself
                read[e.key] = e.value
            else:
                read[e.key] = "".join(atom.resolve(env) for atom in parse_variables(e.value))
        return read


def parse(text: str) -> list[Entry]:
    """Every statement with a key, in file order, as python-dotenv reads them (uninterpolated)."""
    return list(Parsed(text).entries)


def bad_lines(text: str) -> tuple[int, ...]:
    """Line numbers of statements python-dotenv cannot read (it skips them with a warning).

    Each is the line where the statement's text starts (python-dotenv's warning names the line
    after the previous statement, which may be a blank line before it).
    """
    return Parsed(text).bad_lines


def _held(entries: Collection[Entry]) -> dict[str, str]:
    last: dict[str, str | None] = {}
    for e in entries:
        last[e.key] = e.value
    return {k: v for k, v in last.items() if v is not None}


# --- Upsert --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upserted:
    """The new text and what happened to each requested name (names in request order)."""

    text: str = field(repr=False)
    added: tuple[str, ...]
    replaced: tuple[str, ...]
    kept: tuple[str, ...]

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as `new_text, added, replaced, kept`."""
        return iter((self.text, self.added, self.replaced, self.kept))


def dominant_eol(text: str) -> str:
    """CRLF when the text ends more lines with CRLF than with a bare LF, else LF."""
    crlf = text.count("\r\n")
    return "\r\n" if crlf > text.count("\n") - crlf else "\n"


def _statement(prefix: str, name: str, value: str, comment: str, eol: str) -> str:
    # bash does not strip the CR of a CRLF line: `KEY='v'\r` gives "v\r". A trailing ` #` turns
    # that CR into a comment for bash, and python-dotenv and Node skip the comment.
    tail = comment or (" #" if eol == "\r\n" else "")
    return f"{prefix}{name}={dotenv_quoting.serialize_value(value)}{tail}{eol}"


def _clean_prefix(prefix: str) -> str:
    # One plain shape every reader agrees on: space indentation kept, `export ` normalized (Node
    # 20 read a tab or a quoted key as part of the name; keeping the shape plain costs nothing).
    indent = prefix[: len(prefix) - len(prefix.lstrip())]
    rest = prefix[len(indent) :]
    return (indent if set(indent) <= {" "} else "") + ("export " if rest.strip() else "")


def upsert(
    text: str,
    new_values: Mapping[str, str],
    keep_if_present: Collection[str] = frozenset(),
    *,
    parsed: Parsed | None = None,
) -> Upserted:
    """Set each name in `new_values`, changing no other line; UnsafeValue if one cannot be set.

    The first statement of a name is rewritten in place (indentation and `export ` kept), later
    ones removed; new names go at the end, in the file's line ending. A name in
    `keep_if_present` whose last assignment in the file is non-empty is left as it is.
    `parsed`: `Parsed(text)` when the caller has it already, so `text` is not parsed again.
    """
    for name, value in new_values.items():
        if not NAME_PATTERN.fullmatch(name):
            raise RefusedRequest(f"{name!r} is not a variable name bash can read.")
        dotenv_quoting.serialize_value(value)  # raise before building anything
    if parsed is not None and parsed.text != text:
        raise ValueError("`parsed` is not a parse of `text`")
    old = parsed if parsed is not None else Parsed(text)
    held = old.values
    eol = dominant_eol(text)
    edits: list[tuple[int, int, str]] = []
    added: list[str] = []
    replaced: list[str] = []
    kept: list[str] = []
    appended: list[str] = []
    present = old.by_key
    appending = any(
        n not in present and not (n in keep_if_present and held.get(n)) for n in new_values
    )
    for name, value in new_values.items():
        if name in keep_if_present and held.get(name):
            kept.append(name)
            continue
        mine = present.get(name, [])
        if not mine:
            added.append(name)
            appended.append(_statement("", name, value, "", eol))
            continue
        (replaced if name in held else added).append(name)
        first = mine[0]
        # A last line without a line ending gets one when lines follow it, and it must be
        # written knowing that ending (a CRLF needs the ` #` that keeps bash exact).
        line_end = first.eol or (eol if appending else "")
        line = _statement(_clean_prefix(first.prefix), name, value, first.comment, line_end)
        edits.append((first.start, first.end, line))
        edits.extend((e.start, e.end, "") for e in mine[1:])
    out: list[str] = []
    pos = 0
    for start, end, replacement in sorted(edits):
        out.append(text[pos:start])
        out.append(replacement)
        pos = end
    out.append(text[pos:])
    new_text = "".join(out)
    if appended:
        if new_text and not new_text.endswith(("\n", "\r")):
            new_text += eol
        new_text += "".join(appended)
    return Upserted(new_text, tuple(added), tuple(replaced), tuple(kept))
