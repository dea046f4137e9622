"""A small bash reader for the guard: a command line as simple commands, their words and their
redirections, with every `$(…)`, backtick and `<(…)` body read as commands of its own.

It never runs anything and expands only what is certain (`~`, `$HOME`, `$PWD`); ShellSyntax
when the text is not complete shell (an open quote), so the guard falls back to its crude check.
"""

from __future__ import annotations

import re

from offprompt import bashlex

__all__ = ["MAX_STEPS", "Command", "ShellSyntax", "TooBig", "Word", "scan"]

# Deeper nesting than this is not a command a person or an agent writes by hand.
_MAX_DEPTH = 16
# DESIGN §14: the guard's time is bounded for any input. One scan takes at most this many steps
# (a step: one quote, operator, word break, substitution or run of plain characters, in the
# text and every substitution in it); a longer text is TooBig, and the guard blocks it. An
# everyday command takes tens, a long script in a here-doc or quotes a handful more.
MAX_STEPS = 100_000

_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">")
_GLOB = "*?["
# A run of characters with no meaning to the reader, taken at once (the loop's time is then
# linear in the special characters, not in every character of a long word).
_PLAIN = re.compile(r"[^ \t\n#\\'\"$`<>&|;()~*?\[]+")
_PLAIN_DOUBLE = re.compile(r'[^"\\$`]+')
_BACKTICK_SPECIAL = re.compile(r"[\\`]")
_BALANCED_SPECIAL = {
    "(": re.compile(r"[\\'\"()]"),
    "{": re.compile(r"[\\'\"{}]"),
}


class ShellSyntax(ValueError):
    """The text is not complete shell.

    Outside the error root on purpose: hook.main catches it and falls back to its crude check.
    """


class TooBig(ShellSyntax):
    """More than the reader reads (substitutions nested deeper than _MAX_DEPTH, more than
    MAX_STEPS steps): never let through, the guard blocks such a command."""


# Plain classes, not dataclasses: the guard runs before every tool call, and importing
# dataclasses (with inspect) costs more than the whole scan.
class Word:
    """One shell word after quote removal; `glob` when it has unquoted `*?[`, `dynamic` when a
    part of it is only known when the shell runs (`$X`, `$(…)`)."""

    __slots__ = ("dynamic", "glob", "quoted", "text")

    def __init__(
        self, text: str = "", glob: bool = False, dynamic: bool = False, quoted: bool = False
    ) -> None:
        self.text = text
        self.glob = glob
        self.dynamic = dynamic
        self.quoted = quoted

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


class _Env:
    __slots__ = ("home", "pwd", "steps")

    def __init__(self, home: str, pwd: str) -> None:
        self.home = home
        self.pwd = pwd
        self.steps = 0

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TooBig("too long to read")


def scan(text: str, home: str, pwd: str, spent: list[int] | None = None) -> list[Command]:
    """Every simple command in `text`, substitutions included (in no particular order).

    `spent`: the steps earlier scans of the same event took (code run by code: `eval`,
    `bash -c`), kept up to date, so MAX_STEPS bounds them all together."""
    out: list[Command] = []
    env = _Env(home, pwd)
    if spent is not None:
        env.steps = spent[0]
    try:
        _Lexer(text, env, out, 0).run()
    finally:
        if spent is not None:
            spent[0] = env.steps
    return out


# `${NAME:-word}` and its kin (`-`, `=`, `:=`, `+`, `:+`): the word is what the shell may use.
_DEFAULTED = re.compile(bashlex.NAME_PATTERN + r":?[-=+](.*)", re.DOTALL)


class _Lexer:
    def __init__(self, text: str, env: _Env, out: list[Command], depth: int) -> None:
        if depth > _MAX_DEPTH:
            raise TooBig("nested too deeply")
        self.s = text
        self.i = 0
        self.env = env
        self.out = out
        self.depth = depth
        self.cmd = Command()
        self.word: Word | None = None
        self.pending_redirect: str | None = None
        self.heredoc_delims: list[tuple[str, bool]] = []

    # --- words and commands -------------------------------------------------------------------

    def _w(self) -> Word:
        if self.word is None:
            self.word = Word()
        return self.word

    def end_word(self) -> None:
        word = self.word
        self.word = None
        if word is None:
            return
        if self.pending_redirect is not None:
            op = self.pending_redirect
            self.pending_redirect = None
            if op in ("<<", "<<-"):
                self.heredoc_delims.append((word.text, op == "<<-"))
            self.cmd.redirects.append((op, word))
            return
        self.cmd.words.append(word)

    def end_command(self, piped: bool = False) -> None:
        self.end_word()
        self.cmd.piped = piped
        if self.cmd.words or self.cmd.redirects or self.cmd.heredocs:
            self.out.append(self.cmd)
        self.cmd = Command()

    def sub(self, body: str) -> None:
        """The commands of a substitution: their output goes into the outer command, so each
        counts as piped (`cat $(realpath .env)`: realpath only names the file, cat reads it)."""
        first = len(self.out)
        _Lexer(body, self.env, self.out, self.depth + 1).run()
        for command in self.out[first:]:
            command.piped = True

    # --- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        s = self.s
        step = self.env.step
        while self.i < len(s):
            step()
            c = s[self.i]
            if c in " \t":
                self.end_word()
                self.i += 1
            elif c == "\n":
                self.end_word()
                self.i += 1
                self.read_heredocs()
                self.end_command()
            elif c == "#" and self.word is None:
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c == "\\":
                if s.startswith("\\\n", self.i):
                    self.i += 2
                    continue
                if self.i + 1 < len(s):
                    w = self._w()
                    w.text += s[self.i + 1]
                    w.quoted = True
                self.i += 2
            elif c == "'":
                end = _single_quote_end(s, self.i)
                w = self._w()
                w.text += s[self.i + 1 : end - 1]
                w.quoted = True
                self.i = end
            elif c == '"':
                self.double_quoted()
            elif c == "$":
                self.dollar(self._w())
            elif c == "`":
                self.backtick(self._w())
            elif c in "<>" and s.startswith("(", self.i + 1):
                self.end_word()
                body, self.i = _balanced(s, self.i + 2, "(", ")", self.env)
                self.sub(body)
                self._w().dynamic = True
            elif self.redirect():
                continue
            elif self.operator():
                continue
            elif (
                c == "~"
                and self.word is None
                and (self.i + 1 == len(s) or s[self.i + 1] in "/ \t\n;|&)")
            ):
                self._w().text += self.env.home
                self.i += 1
            else:
                w = self._w()
                m = _PLAIN.match(s, self.i)
                if m is not None:
                    w.text += m.group()
                    self.i = m.end()
                    continue
                if c in _GLOB:
                    w.glob = True
                w.text += c
                self.i += 1
        if self.pending_redirect is not None and self.word is None:
            raise ShellSyntax("a redirection without a target")
        self.end_command()

    def operator(self) -> bool:
        for op in _OPERATORS:
            if self.s.startswith(op, self.i):
                self.i += len(op)
                self.end_command(piped=op in ("|", "|&"))
                return True
        return False

    def redirect(self) -> bool:
        s = self.s
        for op in _REDIRECTS:
            if s.startswith(op, self.i):
                if op.startswith("&") and self.word is not None:
                    return False  # `a&>b` is rare; `x&y` is not a redirection
                if self.word is not None and self.word.text.isdigit() and not self.word.quoted:
                    self.word = None  # `2>` names a file descriptor, not a word
                else:
                    self.end_word()
                self.i += len(op)
                if op in (">&", "<&"):
                    # `2>&1`: a descriptor, not a file; `>&file` is a file.
                    j = self.i
                    while j < len(s) and s[j] in " \t":
                        j += 1
                    k = j
                    while k < len(s) and (s[k].isdigit() or s[k] == "-"):
                        k += 1
                    if k > j and (k == len(s) or s[k] in " \t\n;|&)"):
                        self.i = k
                        return True
                self.pending_redirect = op
                return True
        return False

    def read_heredocs(self) -> None:
        """After a line with `<<DELIM`, the lines up to DELIM are the command's input."""
        while self.heredoc_delims:
            delim, strip_tabs = self.heredoc_delims.pop(0)
            self.env.step()
            # One search for the line that is DELIM (with tabs before it for `<<-`), not a loop
            # over the lines: a long here-doc costs one pass. `self.i` starts a line here.
            tabs = "\t*" if strip_tabs else ""
            end = re.compile(f"^{tabs}{re.escape(delim)}$", re.MULTILINE).search(self.s, self.i)
            if end is None:
                body = self.s[self.i :]
                self.i = len(self.s)
            else:
                body = self.s[self.i : end.start()]
                self.i = end.end() + 1
            self.cmd.heredocs.append(body.removesuffix("\n"))

    def double_quoted(self) -> None:
        s = self.s
        w = self._w()
        w.quoted = True
        self.i += 1
        while True:
            self.env.step()
            if self.i >= len(s):
                raise ShellSyntax("an open double quote")
            c = s[self.i]
            if c == '"':
                self.i += 1
                return
            escaped = bashlex.double_quoted_escape(s, self.i) if c == "\\" else None
            if escaped is not None:
                w.text += escaped  # "" for a line continuation
                self.i += 2
            elif c == "$":
                self.dollar(w)
            elif c == "`":
                self.backtick(w)
            else:
                m = _PLAIN_DOUBLE.match(s, self.i)
                end = m.end() if m is not None else self.i + 1
                w.text += s[self.i : end]
                self.i = end

    def backtick(self, w: Word) -> None:
        s = self.s
        j = self.i + 1
        parts: list[str] = []
        while True:
            self.env.step()
            if j >= len(s):
                raise ShellSyntax("an open backtick")
            if s[j] == "\\" and j + 1 < len(s):
                parts.append(s[j + 1])
                j += 2
                continue
            if s[j] == "`":
                break
            m = _BACKTICK_SPECIAL.search(s, j + 1)
            k = len(s) if m is None else m.start()
            parts.append(s[j:k])
            j = k
        self.i = j + 1
        self.command_substitution("".join(parts), w)

    def command_substitution(self, body: str, w: Word) -> None:
        if body.strip() == "pwd":
            w.text += self.env.pwd
            return
        self.sub(body)
        w.dynamic = True
        w.text += "\0"

    def dollar(self, w: Word) -> None:
        s = self.s
        nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
        if nxt == "(":
            body, self.i = _balanced(s, self.i + 2, "(", ")", self.env)
            self.command_substitution(body, w)
        elif nxt == "{":
            body, self.i = _balanced(s, self.i + 2, "{", "}", self.env)
            name = body.strip()
            if name in ("HOME", "PWD"):
                w.text += self.env.home if name == "HOME" else self.env.pwd
            else:
                # `${X:-.env}`, `${X:=.env}`, `${X:+.env}`: the word may well be the default;
                # read it as that (quotes dropped). Otherwise keep the text visible.
                m = _DEFAULTED.fullmatch(body)
                w.text += m.group(1).replace('"', "").replace("'", "") if m else "${" + body + "}"
                w.dynamic = True
        elif nxt == "'":
            try:
                end = bashlex.ansi_c_end(s, self.i + 1)
            except bashlex.Unclosed:
                raise ShellSyntax("an open $' quote") from None
            w.text += s[self.i + 2 : end - 1]
            w.quoted = True
            self.i = end
        elif (j := bashlex.name_end(s, self.i + 1)) > self.i + 1:
            name = s[self.i + 1 : j]
            if name in ("HOME", "PWD"):
                w.text += self.env.home if name == "HOME" else self.env.pwd
            else:
                w.text += "$" + name
                w.dynamic = True
            self.i = j
        else:
            w.text += "$"
            self.i += 1


def _balanced(s: str, start: int, open_: str, close: str, env: _Env) -> tuple[str, int]:
    """The text from `start` up to the `close` that matches an `open_` just before `start`,
    skipping quoted parts; and the index after it."""
    depth = 1
    i = start
    special = _BALANCED_SPECIAL[open_]
    while i < len(s):
        env.step()
        m = special.search(s, i)
        if m is None:
            break
        i = m.start()
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            i = _single_quote_end(s, i)
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


def _single_quote_end(s: str, i: int) -> int:
    try:
        return bashlex.single_quote_end(s, i)
    except bashlex.Unclosed:
        raise ShellSyntax("an open single quote") from None
