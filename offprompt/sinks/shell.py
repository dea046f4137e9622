"""What bash runs when it sources a .env (`set -a; . ./.env`): every assignment it may make, or
the first construct offprompt does not follow, so a written value is vouched for file-wide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from offprompt import bashlex

__all__ = ["BASH_OWN", "BASH_RUNS", "Assignment", "Command", "Problem", "Script", "analyze"]

# Soundness over reach. The understood subset is what a .env holds: comments, blank lines, and
# simple commands made only of assignment words `NAME=word` / `NAME+=word`, or `export` with
# `NAME` / `NAME=word` operands, joined by newlines, `;`, `&&`, `||`. A word may hold quotes
# ('...', "...", $'...'), backslash escapes, line continuations, `$NAME` and `${NAME}`,
# `${NAME-word}`, `${NAME:-word}`, `${NAME+word}`, `${NAME:+word}` with a plain word. None of that
# runs code or assigns anything but the assignment words themselves, so the assignments listed
# are every change the file makes to a variable. Everything else (any other command, since even
# a builtin such as `unset`, `declare`, `read`, `trap` or `.` may change a variable or stop the
# file; redirections, pipes, `&`, parentheses, here-documents, `$(...)`, backticks, arithmetic,
# other `${...}` forms) is a Problem, and the caller vouches for nothing in such a file.

# Variables bash sets or reads itself: a value written there is not what bash reads back (found
# with real bash; tests/unit/sinks/test_sinks_bash.py checks the list against `compgen -v`).
# COLUMNS and LINES are reset after each command in an interactive shell (checkwinsize), and
# BASH_CMDS (the command hash table) whenever PATH is assigned.
BASH_OWN = frozenset(
    "BASHOPTS BASHPID BASH_ARGC BASH_ARGV BASH_CMDS BASH_COMMAND BASH_LINENO BASH_SOURCE"
    " BASH_SUBSHELL BASH_VERSINFO COLUMNS DIRSTACK EPOCHREALTIME EPOCHSECONDS EUID FUNCNAME"
    " GROUPS HISTCMD LINENO LINES OPTIND PIPESTATUS PPID RANDOM SECONDS SHELLOPTS SRANDOM UID"
    " _".split()
)
# Variables whose value bash later runs as code (prompts, the mail message, PS4 under `set -x`)
# or that change how it reads the rest of the file. No line may assign them.
BASH_RUNS = frozenset("BASH_COMPAT MAILPATH POSIXLY_CORRECT PROMPT_COMMAND PS0 PS1 PS2 PS4".split())

_KEYWORDS = frozenset(
    "! [[ ]] { } case coproc do done elif else esac fi for function if in select then time"
    " until while".split()
)
_BUILTINS = frozenset(
    ". : [ alias bg bind break builtin caller cd command compgen complete compopt continue"
    " declare dirs disown echo enable eval exec exit false fc fg getopts hash help history jobs"
    " kill let local logout mapfile popd printf pushd pwd read readarray readonly return set"
    " shift shopt source suspend test times trap true type typeset ulimit umask unalias unset"
    " wait".split()
)
_ENDS_WORD = " \t\n;&|()<>"
_ASSIGNMENT = re.compile(f"({bashlex.NAME_PATTERN})(\\+?)=")
# `${NAME}` or `${NAME-word}` and its `:-`, `+`, `:+` kin; `word` holds no quote, expansion,
# escape, brace or newline. Every other operator assigns (`=`, `:=`), stops the shell (`?`),
# evaluates arithmetic (`:offset`, `[i]`) or expands further (`!`, `@P`).
_BRACED = re.compile(r"\$\{(" + bashlex.NAME_PATTERN + r")(?:(:?[-+])([^{}'\"`$\\\n]*))?\}")
# Characters a literal value may not hold unquoted: tilde, glob and brace expansion.
_EXPANDS = frozenset("~*?[]{}")


@dataclass(frozen=True)
class Assignment:
    """`name=word` (or `name+=word`) at `offset`; `value` when no part of `word` expands."""

    name: str
    offset: int
    append: bool
    value: str | None = field(repr=False)


@dataclass(frozen=True)
class Command:
    """A simple command from `start` to `end`. `after` joins it to the one before: "" for a new
    line or `;`, else "&&" or "||" (at `after_at`), so it runs only if that one's status says."""

    start: int
    end: int
    after: str
    after_at: int
    assignments: tuple[Assignment, ...]


@dataclass(frozen=True)
class Problem:
    """The first construct not understood: its offset and what it is, in words (never a value)."""

    offset: int
    what: str


@dataclass(frozen=True)
class Script:
    """The commands read up to `problem` (all of them when it is None)."""

    commands: tuple[Command, ...]
    problem: Problem | None


class _Stop(Exception):
    """Control flow inside the analyzer: where bash stops. Never leaves this module."""

    def __init__(self, offset: int, what: str) -> None:
        super().__init__(what)
        self.offset = offset
        self.what = what


@dataclass
class _Word:
    start: int
    end: int = 0
    logical: list[str] = field(default_factory=list)  # the text once continuations are gone
    value: list[str] = field(default_factory=list)  # after quote removal
    literal: bool = True  # nothing in it expands

    @property
    def text(self) -> str:
        return "".join(self.logical)


def analyze(text: str) -> Script:
    """Follow bash through the whole of `text`."""
    commands: list[Command] = []
    try:
        _Reader(text, commands).run()
    except _Stop as stop:
        return Script(tuple(commands), Problem(stop.offset, stop.what))
    return Script(tuple(commands), None)


class _Reader:
    def __init__(self, text: str, commands: list[Command]) -> None:
        self.text = text
        self.n = len(text)
        self.commands = commands

    def run(self) -> None:
        text, n = self.text, self.n
        nul = text.find("\0")
        if nul != -1:
            raise _Stop(nul, "a NUL character, where bash stops reading")
        i = 0
        after, after_at = "", -1
        while True:
            i = self._blanks(i)
            if i >= n:
                if after:
                    raise _Stop(after_at, f"a {after} with no command after it")
                return
            c = text[i]
            if c == "\n":
                i += 1
                continue
            if c == "#":
                i = self._line_end(i)
                continue
            self._operator_stop(i, start=True)
            i = self._command(i, after, after_at)
            after, after_at = "", -1
            i = self._blanks(i)
            if i >= n or text[i] in "\n#":
                continue
            if text.startswith(("&&", "||"), i):
                after, after_at = text[i : i + 2], i
                i += 2
            elif text.startswith(";", i) and not text.startswith((";;", ";&"), i):
                i += 1
            else:
                self._operator_stop(i, start=False)

    def _operator_stop(self, i: int, *, start: bool) -> None:
        """Raise for the operator at `i` (or, with `start`, for one where a command begins)."""
        text = self.text
        c = text[i]
        if c in ";&|" and start:
            raise _Stop(i, f"a '{c}' with no command before it")
        if text.startswith((";;", ";&"), i):
            raise _Stop(i, "a ';;' or ';&' outside a case statement")
        if c == "&":
            raise _Stop(i, "a '&' (a command run in the background)")
        if c == "|":
            raise _Stop(i, "a pipe '|'")
        if c in "()":
            raise _Stop(i, "a parenthesis (a subshell, an array, or a function definition)")
        if c in "<>":
            raise _Stop(i, "a redirection or here-document ('<' or '>')")
        if not start:
            raise _Stop(i, "an operator bash reads as more than a line break")

    def _blanks(self, i: int) -> int:
        """Past spaces, tabs and line continuations (a backslash before a newline)."""
        text, n = self.text, self.n
        while i < n:
            if text[i] in " \t":
                i += 1
            elif text.startswith("\\\n", i):
                i += 2
            else:
                break
        return i

    def _line_end(self, i: int) -> int:
        newline = self.text.find("\n", i)
        return self.n if newline == -1 else newline

    def _command(self, i: int, after: str, after_at: int) -> int:
        start = i
        words: list[_Word] = []
        while True:
            word = self._word(i)
            words.append(word)
            i = self._blanks(word.end)
            if i >= self.n or self.text[i] in _ENDS_WORD or self.text[i] == "#":
                break
        assignments: list[Assignment] = []
        k = 0
        while k < len(words) and (m := _ASSIGNMENT.match(words[k].text)):
            assignments.append(_assignment(words[k], m))
            k += 1
        rest = words[k:]
        if rest:
            head = rest[0]
            if head.text == "export":
                assignments.extend(self._export(head, rest[1:]))
            elif not all(_harmless(w) for w in rest):
                raise _Stop(head.start, _command_words(head))
        for a in assignments:
            if a.name in BASH_RUNS:
                raise _Stop(a.offset, f"an assignment to {a.name}, whose value bash runs as code")
        self.commands.append(Command(start, words[-1].end, after, after_at, tuple(assignments)))
        return words[-1].end

    def _export(self, head: _Word, operands: list[_Word]) -> list[Assignment]:
        if not operands:
            raise _Stop(head.start, "an 'export' with no name (bash prints every variable)")
        found: list[Assignment] = []
        for op in operands:
            if m := _ASSIGNMENT.match(op.text):
                found.append(_assignment(op, m))
            elif bashlex.NAME.fullmatch(op.text) or _harmless(op):
                continue
            elif op.text.startswith("-"):
                raise _Stop(op.start, "an 'export' with an option")
            else:
                raise _Stop(op.start, "an 'export' of something other than NAME or NAME=value")
        return found

    # --- Words ---------------------------------------------------------------------------------

    def _word(self, i: int) -> _Word:
        text, n = self.text, self.n
        w = _Word(i)
        while i < n:
            c = text[i]
            if c in _ENDS_WORD:
                break
            if c == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                if i + 1 == n:
                    w.literal = False  # bash may drop a backslash that ends the file
                w.logical.append(text[i : i + 2])
                w.value.append(text[i + 1 : i + 2] or "\\")
                i += 2
            elif c == "'":
                try:
                    end = bashlex.single_quote_end(text, i)
                except bashlex.Unclosed:
                    raise _Stop(i, "an unclosed quote (a ' with no closing ')") from None
                w.logical.append(text[i:end])
                w.value.append(text[i + 1 : end - 1])
                i = end
            elif c == '"':
                i = self._double_quoted(i, w)
            elif c == "$":
                i = self._dollar(i, w, quoted=False)
            elif c == "`":
                raise _Stop(i, "a backtick command (`...`)")
            else:
                if c in _EXPANDS:
                    w.literal = False
                w.logical.append(c)
                w.value.append(c)
                i += 1
        w.end = min(i, n)
        return w

    def _double_quoted(self, start: int, w: _Word) -> int:
        text, n = self.text, self.n
        w.logical.append('"')
        i = start + 1
        while i < n:
            c = text[i]
            if c == '"':
                w.logical.append('"')
                return i + 1
            if c == "\\":
                escaped = bashlex.double_quoted_escape(text, i)
                if escaped == "":
                    i += 2
                    continue
                if escaped is not None:
                    w.logical.append(text[i : i + 2])
                    w.value.append(escaped)
                    i += 2
                    continue
                w.logical.append("\\")
                w.value.append("\\")
                i += 1
            elif c == "`":
                raise _Stop(i, "a backtick command (`...`)")
            elif c == "$":
                i = self._dollar(i, w, quoted=True)
            else:
                w.logical.append(c)
                w.value.append(c)
                i += 1
        raise _Stop(start, 'an unclosed quote (a " with no closing ")')

    def _dollar(self, i: int, w: _Word, *, quoted: bool) -> int:
        text = self.text
        # bash drops a line continuation before it reads what follows `$`: `$\<newline>(` is `$(`.
        j = bashlex.continued(text, i + 1)
        nxt = text[j : j + 1]
        if nxt == "(":
            if text.startswith("((", j):
                raise _Stop(i, "a $((...)) arithmetic expansion, which can assign variables")
            raise _Stop(i, "a $(...) command")
        if nxt == "[":
            raise _Stop(i, "a $[...] arithmetic expansion, which can assign variables")
        if nxt == "{":
            m = _BRACED.match(text, j - 1) if j == i + 1 else None
            word = m.group(3) if m else None
            if m is None or (not quoted and word and any(c in word for c in " \t;&|()<>")):
                raise _Stop(
                    i,
                    "a ${...} expansion other than ${NAME}, ${NAME:-word} or ${NAME:+word}"
                    " with a plain word",
                )
            return self._expanded(w, m.start(), m.end())
        if not quoted and nxt == "'":
            return self._ansi_c(i, j, w)
        if not quoted and nxt == '"':
            raise _Stop(i, 'a $"..." translated string')
        if nxt and (nxt in bashlex.SPECIAL_PARAMETERS or bashlex.NAME.match(nxt)):
            end = bashlex.name_end(text, j)
            return self._expanded(w, i, end if end > j else j + 1)
        w.logical.append("$")
        w.value.append("$")
        return i + 1

    def _expanded(self, w: _Word, start: int, end: int) -> int:
        w.logical.append(self.text[start:end])
        w.literal = False
        return end

    def _ansi_c(self, start: int, quote: int, w: _Word) -> int:
        try:
            end = bashlex.ansi_c_end(self.text, quote)
        except bashlex.Unclosed:
            raise _Stop(start, "an unclosed quote (a $' with no closing ')") from None
        return self._expanded(w, start, end)


def _assignment(w: _Word, m: re.Match[str]) -> Assignment:
    value = "".join(w.value)
    # The name and `=` carry no quotes or escapes, so the value starts after as many characters.
    return Assignment(
        m.group(1), w.start, bool(m.group(2)), value[m.end() :] if w.literal else None
    )


def _harmless(w: _Word) -> bool:
    """A word bash cannot run as anything but a missing program: the CR a Windows line ending
    leaves on a blank line, or a first word glued to a byte order mark."""
    return bool(w.text) and (set(w.text) == {"\r"} or (w.start == 0 and w.text[0] == "\ufeff"))


def _command_words(head: _Word) -> str:
    # Only bash's own words are named: any other word could be a pasted secret.
    word = head.text
    if word in _KEYWORDS:
        return f"the shell keyword '{word}'"
    if word in _BUILTINS:
        return f"the command '{word}'"
    if "[" in word and "=" in word:
        return "an array element assignment (NAME[...]=), whose subscript bash evaluates"
    return "a command (only assignments and 'export' are understood)"
