"""The pieces the guard's bash reader (bash.py) makes of a command line: its words and simple
commands, and the errors it raises for text it cannot read.
"""

from __future__ import annotations

from offprompt import bashlex, rx
from offprompt.guard import expand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "MAX_STEPS",
    "Command",
    "Env",
    "ShellSyntax",
    "TooBig",
    "Word",
    "backtick_body",
    "balanced",
    "expansion_bodies",
    "heredoc_body",
    "single_quote_end",
    "tilde",
]

# DESIGN §14: the guard's time is bounded for any input. One scan takes at most this many steps
# (a step: one quote, operator, word break, substitution or run of plain characters, in the
# text and every substitution in it); a longer text is TooBig, and the guard blocks it. An
# everyday command takes tens, a long script in a here-doc or quotes a handful more.
MAX_STEPS = 100_000


_BALANCED_SPECIAL = {
    "(": rx.compile(r"[\\'\"()#]"),
    "{": rx.compile(r"[\\'\"{}]"),
}
# The same for the body of a `$(…)`, which may hold here-docs (`<<`, their bodies' lines).
# and `case … esac`, whose patterns end in a `)` that closes nothing.
_HEREDOC_SPECIAL = rx.compile(r"[\\'\"()#<\n]|(?<![\w.-])(?:case|esac)(?![\w.-])")
# What may stand before a `case` or `esac` where a command starts (a blank then one of these,
# or one of the keywords).
_COMMAND_AFTER = ";&|(\n"
_KEYWORDS = frozenset({"{", "then", "do", "else", "!", "time", "coproc"})
# A here-doc's delimiter word as written: quoted or plain, up to a blank or an operator.
_DELIMITER = rx.compile(r"(?:'[^']*'|\"[^\"]*\"|\\.|[^\s;|&()<>])+")
# What may stand before a `#` that starts a comment: a blank, a line's end, an operator.
_COMMENT_AFTER = " \t\n;|&()<>"


class ShellSyntax(ValueError):
    """The text is not complete shell.

    Outside the error root on purpose: hook.main catches it and falls back to its crude check.
    """


class TooBig(ShellSyntax):
    """More than the reader reads (substitutions nested deeper than bash._MAX_DEPTH, more than
    MAX_STEPS steps): never let through, the guard blocks such a command."""


# Plain classes, not dataclasses: the guard runs before every tool call, and importing
# dataclasses (with inspect) costs more than the whole scan.
class Word:
    """One shell word after quote removal; `glob` when it has unquoted `*?[`, `dynamic` when a
    part of it is only known when the shell runs (`$X`, `$(…)`). `pat`: the word as an
    expand.py pattern, `braced` when it may need expanding (unquoted braces, or a variable's
    values put in), `within`: values it is cut from (`${f#x}`).

    Its text and pattern grow in pieces (a long word read piece by piece would otherwise be
    copied whole at each piece); `text` and `pat` hold them joined once finish() is called,
    which the reader does when the word ends (and before it looks at a word it is reading)."""

    __slots__ = ("_pat", "_text", "braced", "dynamic", "glob", "pat", "quoted", "text", "within")

    def __init__(
        self, text: str = "", glob: bool = False, dynamic: bool = False, quoted: bool = False
    ) -> None:
        self.text = text
        self.pat = expand.escape(text) if text else ""
        self._text = [text] if text else []
        self._pat = [self.pat] if text else []
        self.glob = glob
        self.dynamic = dynamic
        self.quoted = quoted
        self.braced = False
        # Values (patterns) the word is cut or changed from (`${f#x}`): a protected name
        # inside one may be what it becomes.
        self.within: list[str] = []

    def finish(self) -> Word:
        """Join the pieces read so far into `text` and `pat`."""
        pieces = self._text
        self.text = pieces[0] if len(pieces) == 1 else "".join(pieces)
        pieces = self._pat
        self.pat = pieces[0] if len(pieces) == 1 else "".join(pieces)
        self._text, self._pat = [self.text], [self.pat]
        return self

    def extglob(self) -> None:
        """An extglob group (`@(…)`) after the word's last character: that character and the
        group become `*`, which matches at least what the group does."""
        self.finish()
        self.text, self.pat, self.glob = self.text[:-1] + "*", self.pat[:-1] + "*", True
        self._text, self._pat = [self.text], [self.pat]

    def add_text(self, text: str) -> None:
        """Text that is not in the pattern as it is (`$X`, a substitution's NUL)."""
        self._text.append(text)

    def add_pat(self, pattern: str) -> None:
        """Pattern that is not in the text as it is (UNKNOWN, a variable's values)."""
        self._pat.append(pattern)

    def lit(self, text: str) -> None:
        """Quoted or escaped text: literal in the pattern too."""
        self._text.append(text)
        self._pat.append(expand.escape(text))

    def unknown(self) -> None:
        """A part only known when the shell runs."""
        self._pat.append(expand.UNKNOWN)
        self.dynamic = True

    def plain(self, text: str) -> None:
        """Unquoted text: its globs and braces keep their meaning."""
        self._text.append(text)
        self._pat.append(expand.escape_plain(text))
        if "{" in text:
            self.braced = True

    def __repr__(self) -> str:
        return f"Word({self.text!r}, glob={self.glob}, dynamic={self.dynamic})"


class Command:
    """A simple command: its words, its redirections (operator, target) and whether its output
    goes into a pipe."""

    __slots__ = ("heredocs", "piped", "redirects", "words")

    def __init__(self) -> None:
        self.words: list[Word] = []
        self.redirects: list[tuple[str, Word]] = []
        self.piped = False
        self.heredocs: list[str] = []


def balanced(
    s: str,
    start: int,
    open_: str,
    close: str,
    step: Callable[[], None],
    heredocs: bool = False,
) -> tuple[str, int]:
    """The text from `start` up to the `close` that matches an `open_` just before `start`,
    skipping quoted parts and comments, and (`heredocs`: the body of a `$(…)`) the here-docs'
    bodies, whose quotes and brackets are text; and the index after it."""
    depth = 1
    i = start
    special = _HEREDOC_SPECIAL if heredocs else _BALANCED_SPECIAL[open_]
    pending: list[tuple[str, bool]] = []  # the here-docs whose bodies start after this line
    arithmetic: int | None = None  # the depth an arithmetic `((` opened at, while inside it
    cases: list[int] = []  # the depths the `case` statements open here stand at
    while i < len(s):
        step()
        m = special.search(s, i)
        if m is None:
            break
        i = m.start()
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "<":
            i = i + 1 if arithmetic is not None else _heredoc_start(s, i, pending)
            continue
        if c in "ce":
            # `case x in x) …;; esac` where a command starts: its patterns' `)` close nothing.
            j = i - 1
            while j >= start and s[j] in " \t":
                j -= 1
            k = j
            while k >= start and s[k] not in " \t\n;&|()":
                k -= 1  # the word before it: a keyword (`{`, `then`, `do`) starts a command
            if j < start or s[j] in _COMMAND_AFTER or s[k + 1 : j + 1] in _KEYWORDS:
                if c == "c":
                    cases.append(depth)
                elif cases:
                    cases.pop()
            i += 4
            continue
        if c == close and cases and cases[-1] == depth:
            i += 1  # a pattern's end
            continue
        if c == "\n":
            i = _heredoc_bodies(s, i + 1, pending)
            continue
        if c == "#":
            # A comment, where a word starts (`$( # it's`): its quotes and brackets are text,
            # up to the line's end. Elsewhere (`$#`, `a#b`) the `#` is part of a word.
            if i == start or s[i - 1] in _COMMENT_AFTER:
                end = s.find("\n", i)
                i = len(s) if end < 0 else end
            else:
                i += 1
            continue
        if c == "'":
            i = single_quote_end(s, i)
            continue
        if c == '"':
            j = i + 1
            while j < len(s) and s[j] != '"':
                j += 2 if s[j] == "\\" else 1
            if j >= len(s):
                raise ShellSyntax("an open double quote")
            i = j + 1
            continue
        if c == open_:
            if arithmetic is None and s.startswith("((", i):
                arithmetic = depth  # `(( … ))` or `$(( … ))`: its `<<` is a shift
            depth += 1
        elif c == close:
            depth -= 1
            if arithmetic is not None and depth <= arithmetic:
                arithmetic = None
            if depth == 0:
                return s[start:i], i + 1
        i += 1
    raise ShellSyntax(f"an open {open_}")


def _heredoc_start(s: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """At `<`: after a `<<DELIM` (`<<-`, quoted or not), DELIM is added to `pending`; the index
    after what was read."""
    if not s.startswith("<<", i) or s.startswith("<<<", i):
        return i + (3 if s.startswith("<<<", i) else 1)
    i += 2
    tabs = s.startswith("-", i)
    i += 1 if tabs else 0
    while i < len(s) and s[i] in " \t":
        i += 1
    m = _DELIMITER.match(s, i)
    if m is None:
        return i
    pending.append((rx.sub(r"[\\'\"]", "", m.group()), tabs))
    return m.end()


def _heredoc_bodies(s: str, i: int, pending: list[tuple[str, bool]]) -> int:
    """At the start of a line after `<<DELIM`s: the index after their bodies (the end of `s`
    when one does not end)."""
    while pending:
        delim, tabs = pending.pop(0)
        # Inside `$( … )` bash also ends a here-doc at a line of DELIM then the `)` (`EOF)`).
        line = ("^\t*" if tabs else "^") + rx.escape(delim) + r"(?:$|(?=\)))"
        end = rx.compile(line, rx.MULTILINE).search(s, i)
        if end is None:
            return len(s)
        i = end.end() + (0 if s.startswith(")", end.end()) else 1)
    return i


def single_quote_end(s: str, i: int) -> int:
    """The index after the `'…'` opening at `i`; ShellSyntax when it does not close."""
    try:
        return bashlex.single_quote_end(s, i)
    except bashlex.Unclosed:
        raise ShellSyntax("an open single quote") from None


class Env:
    """What one scan knows as it reads: HOME, the cwd, its steps, what the text assigned."""

    __slots__ = ("home", "moved", "pwd", "steps", "vars")

    def __init__(self, home: str, pwd: str) -> None:
        self.home = home
        self.pwd = pwd
        # A `cd` (`pushd`, `popd`) was read: `$PWD`, `~+` and `$(pwd)` after it are not `pwd`.
        self.moved = False
        self.steps = 0
        # What the text assigns each variable (`f=.e`, `for f in …`), as patterns: a use of
        # `$f` may be any of them, or what the variable held before (UNKNOWN).
        self.vars: dict[str, list[str]] = {}

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TooBig("too long to read")

    def home_or_pwd(self, w: Word, name: str) -> None:
        """`$HOME` or `$PWD` in `w` as the folder it holds; `$PWD` after a `cd` is not known."""
        if name == "PWD" and self.moved:
            w.add_text("$PWD")
            w.unknown()
        else:
            w.lit(self.home if name == "HOME" else self.pwd)


# What in an unquoted here-doc's body or arithmetic may run a command.
_EXPANSION_SPECIAL = rx.compile(r"[\\`$]")


def expansion_bodies(body: str, step: Callable[[], None]) -> list[str]:
    """The bodies of the `$(…)`, `${…}` and backticks in `body` (an unquoted here-doc's,
    arithmetic's); the rest of `body` is text."""
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        step()
        m = _EXPANSION_SPECIAL.search(body, i)
        if m is None:
            break
        i = m.start()
        if body[i] == "\\":
            i += 2
        elif body.startswith(("$(", "${"), i):
            open_, close = ("(", ")") if body[i + 1] == "(" else ("{", "}")
            inner, i = balanced(body, i + 2, open_, close, step, open_ == "(")
            out.append(inner)
        elif body[i] == "`":
            end = body.find("`", i + 1)
            if end < 0:
                end = n
            out.append(body[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return out


def heredoc_body(s: str, i: int, delim: str, strip_tabs: bool) -> tuple[str, int]:
    """The here-doc body starting at `i` (a line's start) up to the line that is `delim` (tabs
    before it for `<<-`), and the index after that line; the rest of `s` when none is. One
    search, not a loop over the lines: a long here-doc costs one pass."""
    tabs = "\t*" if strip_tabs else ""
    end = rx.compile(f"^{tabs}{rx.escape(delim)}$", rx.MULTILINE).search(s, i)
    if end is None:
        return s[i:], len(s)
    return s[i : end.start()], end.end() + 1


def tilde(s: str, i: int, home: str, pwd: str) -> tuple[str, int] | None:
    """What a `~` at `i`, starting a word, stands for (`~`, `~+`, `~-`) and its length, or
    None."""
    for prefix, value in (("~+", pwd), ("~-", expand.UNKNOWN), ("~", home)):
        end = i + len(prefix)
        if s.startswith(prefix, i) and (end == len(s) or s[end] in "/ \t\n;|&)"):
            return value, len(prefix)
    return None


_BACKTICK_SPECIAL = rx.compile(r"[\\`]")


def backtick_body(s: str, i: int, step: Callable[[], None]) -> tuple[str, int]:
    """The command inside the backticks opening at `i`, its `\\x` escapes undone, and the
    index after the closing one; ShellSyntax when they do not close."""
    j = i + 1
    parts: list[str] = []
    while True:
        step()
        if j >= len(s):
            raise ShellSyntax("an open backtick")
        if s[j] == "\\" and j + 1 < len(s):
            parts.append(s[j + 1])
            j += 2
            continue
        if s[j] == "`":
            return "".join(parts), j + 1
        m = _BACKTICK_SPECIAL.search(s, j + 1)
        k = len(s) if m is None else m.start()
        parts.append(s[j:k])
        j = k
