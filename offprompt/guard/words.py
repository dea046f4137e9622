"""The pieces the guard's bash reader (bash.py) makes of a command line: its words and simple
commands, and the errors it raises for text it cannot read.
"""

from __future__ import annotations

from offprompt import bashlex, rx
from offprompt.guard import expand

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Command", "ShellSyntax", "TooBig", "Word", "balanced", "single_quote_end"]

_BALANCED_SPECIAL = {
    "(": rx.compile(r"[\\'\"()]"),
    "{": rx.compile(r"[\\'\"{}]"),
}


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
    s: str, start: int, open_: str, close: str, step: Callable[[], None]
) -> tuple[str, int]:
    """The text from `start` up to the `close` that matches an `open_` just before `start`,
    skipping quoted parts; and the index after it."""
    depth = 1
    i = start
    special = _BALANCED_SPECIAL[open_]
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
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return s[start:i], i + 1
        i += 1
    raise ShellSyntax(f"an open {open_}")


def single_quote_end(s: str, i: int) -> int:
    """The index after the `'…'` opening at `i`; ShellSyntax when it does not close."""
    try:
        return bashlex.single_quote_end(s, i)
    except bashlex.Unclosed:
        raise ShellSyntax("an open single quote") from None
