"""A small bash reader for the guard: a command line as simple commands, their words and their
redirections, with every `$(…)`, backtick and `<(…)` body read as commands of its own.

It never runs anything and expands only what is certain (`~`, `$HOME`, `$PWD`, `$'…'`); beside
each word's text it keeps its pattern (expand.py): what brace expansion, the variables the text
assigns and what cannot be known may make of it. ShellSyntax when the text is not complete shell.
"""

from __future__ import annotations

from offprompt import bashlex, rx
from offprompt.guard import expand
from offprompt.guard.expand import UNKNOWN
from offprompt.guard.words import Command, ShellSyntax, TooBig, Word, balanced, single_quote_end

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
_PLAIN = rx.compile(r"[^ \t\n#\\'\"$`<>&|;()~*?\[]+")
_PLAIN_DOUBLE = rx.compile(r'[^"\\$`]+')
_BACKTICK_SPECIAL = rx.compile(r"[\\`]")
_HEREDOC_SPECIAL = r"[\\`$]"
_EXTGLOB = "@!+*?"


class _Env:
    __slots__ = ("home", "pwd", "steps", "vars")

    def __init__(self, home: str, pwd: str) -> None:
        self.home = home
        self.pwd = pwd
        self.steps = 0
        # What the text assigns each variable (`f=.e`, `for f in …`), as patterns: a use of
        # `$f` may be any of them, or what the variable held before (UNKNOWN).
        self.vars: dict[str, list[str]] = {}

    def step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise TooBig("too long to read")


def scan(
    text: str,
    home: str,
    pwd: str,
    spent: list[int] | None = None,
    variables: dict[str, list[str]] | None = None,
) -> list[Command]:
    """Every simple command in `text`, substitutions included (in no particular order).

    `spent`: the steps earlier scans of the same event took (code run by code: `eval`,
    `bash -c`), kept up to date, so MAX_STEPS bounds them all together. `variables`: what
    those scans saw assigned (`F=.env bash -c 'cat "$F"'`), added to as this one reads."""
    out: list[Command] = []
    env = _Env(home, pwd)
    if variables is not None:
        env.vars = variables
    if spent is not None:
        env.steps = spent[0]
    try:
        _Lexer(text, env, out, 0).run()
    finally:
        if spent is not None:
            spent[0] = env.steps
    return out


# `NAME=` or `NAME+=` starting a word's pattern; the builtins whose words may be assignments.
_ASSIGN = rx.compile("(" + bashlex.NAME_PATTERN + r")(\+?)=")
_DECLARING = frozenset({"export", "declare", "local", "readonly", "typeset"})
# One variable assigned more values than this in one command is not followed value by value.
_MAX_VALUES = 256
# A variable, maybe with a subscript, starting the inside of `${…}`.
_USED = "(" + bashlex.NAME_PATTERN + r")(?:\[[^\]]*\])?"
# `${NAME:-word}` and its kin (`-`, `=`, `:=`, `+`, `:+`): the word is what the shell may use.
_DEFAULTED = rx.compile(bashlex.NAME_PATTERN + r":?[-=+](.*)", rx.DOTALL)


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
        # Each `<<DELIM` waiting for its body, with the command it is given to (`cat <<EOF |
        # bash`: the body, read after the line, is cat's input, not bash's).
        self.heredoc_delims: list[tuple[str, bool, bool, Command]] = []

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
        word.finish()
        if self.pending_redirect is not None:
            op = self.pending_redirect
            self.pending_redirect = None
            if op in ("<<", "<<-"):
                self.heredoc_delims.append((word.text, op == "<<-", word.quoted, self.cmd))
            self.cmd.redirects.append((op, word))
            return
        self.cmd.words.append(word)

    def end_command(self, piped: bool = False) -> None:
        self.end_word()
        self.cmd.piped = piped
        if self.cmd.words or self.cmd.redirects or self.cmd.heredocs:
            self.out.append(self.cmd)
            self.assignments(self.cmd.words)
        self.cmd = Command()

    def assignments(self, words: list[Word]) -> None:
        """Keep what `f=.e`, `export f=.e` or `for f in .e*` assigns, for later uses of `$f`."""
        first = words[0].text if words else ""
        try:
            if first in ("for", "select") and len(words) > 2 and words[2].text == "in":
                values = [v for w in words[3:] for v in expand.variants(w.pat)]
                self.assign(words[1].text, values)
                return
            if first == "printf" and len(words) > 3 and words[1].text == "-v":
                # `printf -v f '%s' .env`: f may be any of the words, escapes decoded.
                texts = [w.text for w in words[3:]]
                decoded = [*map(bashlex.ansi_c_decode, texts), expand.printf(texts)]
                self.assign(words[2].text, [expand.escape(t) for t in decoded])
                return
            i = 0
            if first in _DECLARING:
                i = 1
                while i < len(words) and words[i].text.startswith("-"):
                    i += 1
            for w in words[i:]:
                m = _ASSIGN.match(w.pat)
                if m is None:
                    if i == 0:
                        return  # the program: assignments before it are for it alone
                    continue
                value = w.pat[m.end() :]
                self.assign(m.group(1), [UNKNOWN + value if m.group(2) else value])
        except expand.TooMany:
            raise TooBig("too many words to read") from None

    def array(self, w: Word) -> None:
        """`a=(.e nv)`: each word inside is a value of `a` (for `$a`, `${a[1]}`, `${a[@]}`);
        the substitutions inside are read as commands."""
        body, self.i = balanced(self.s, self.i + 1, "(", ")", self.env.step)
        inner: list[Command] = []
        _Lexer(body, self.env, inner, self.depth + 1).run()
        values: list[str] = []
        try:
            for command in inner:
                if command.piped:
                    self.out.append(command)
                else:
                    values.extend(v for word in command.words for v in expand.variants(word.pat))
        except expand.TooMany:
            raise TooBig("too many words to read") from None
        self.assign(w.pat.partition("=")[0].removesuffix("+"), values)
        w.add_text("(" + body + ")")

    def assign(self, name: str, values: list[str]) -> None:
        known = self.env.vars.setdefault(name, [])
        for value in values:
            value = expand.brace_literal(value)
            if value not in known:
                known.append(value)
        self.env.steps += len(values)
        if len(known) > _MAX_VALUES:
            raise TooBig("too many values to follow")

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
                    w.lit(s[self.i + 1])
                    w.quoted = True
                self.i += 2
            elif c == "'":
                end = single_quote_end(s, self.i)
                w = self._w()
                w.lit(s[self.i + 1 : end - 1])
                w.quoted = True
                self.i = end
            elif c == "$" and s.startswith('"', self.i + 1):
                self.i += 1  # `$"…"` is translated by the locale: in C and UTF-8, itself
            elif c == '"':
                self.double_quoted()
            elif c == "$":
                self.dollar(self._w())
            elif c == "`":
                self.backtick(self._w())
            elif c in "<>" and s.startswith("(", self.i + 1):
                self.end_word()
                body, self.i = balanced(s, self.i + 2, "(", ")", self.env.step)
                self.sub(body)
                self._w().unknown()  # a /dev/fd/N name
            elif c == "(" and self.word is not None and _ASSIGN.fullmatch(self.word.finish().pat):
                self.array(self.word)
            elif c == "(" and self.word is not None and self.word.text[-1:] in _EXTGLOB:
                # extglob's `@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`: matched as `*`, which
                # matches at least what each of them does.
                _, self.i = balanced(s, self.i + 1, "(", ")", self.env.step)
                self.word.extglob()
            elif c in "<>&" and self.redirect():
                continue
            elif c in "&|;()" and self.operator():
                continue
            elif c == "~" and self.word is None and (tilde := self.tilde()) is not None:
                w, (text, length) = self._w(), tilde
                w.unknown() if text == UNKNOWN else w.lit(text)
                self.i += length
            else:
                w = self._w()
                m = _PLAIN.match(s, self.i)
                if m is not None:
                    w.plain(m.group())
                    self.i = m.end()
                    continue
                if c in _GLOB:
                    w.glob = True
                w.plain(c)
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
                word = self.word.finish() if self.word is not None else None
                if word is not None and word.text.isdigit() and not word.quoted:
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
            delim, strip_tabs, quoted, command = self.heredoc_delims.pop(0)
            self.env.step()
            # One search for the line that is DELIM (with tabs before it for `<<-`), not a loop
            # over the lines: a long here-doc costs one pass. `self.i` starts a line here.
            tabs = "\t*" if strip_tabs else ""
            end = rx.compile(f"^{tabs}{rx.escape(delim)}$", rx.MULTILINE).search(self.s, self.i)
            if end is None:
                body = self.s[self.i :]
                self.i = len(self.s)
            else:
                body = self.s[self.i : end.start()]
                self.i = end.end() + 1
            command.heredocs.append(body.removesuffix("\n"))
            if not quoted:
                self.heredoc_substitutions(body)

    def heredoc_substitutions(self, body: str) -> None:
        """An unquoted here-doc's `$(…)`, `${…}` and backticks run when the shell reads it:
        their commands are read as commands, whatever program the here-doc is given to."""
        i, n = 0, len(body)
        while i < n:
            self.env.step()
            m = rx.compile(_HEREDOC_SPECIAL).search(body, i)
            if m is None:
                return
            i = m.start()
            if body[i] == "\\":
                i += 2
            elif body.startswith(("$(", "${"), i):
                open_, close = ("(", ")") if body[i + 1] == "(" else ("{", "}")
                inner, i = balanced(body, i + 2, open_, close, self.env.step)
                self.sub(inner)
            elif body[i] == "`":
                end = body.find("`", i + 1)
                if end < 0:
                    end = n
                self.sub(body[i + 1 : end])
                i = end + 1
            else:
                i += 1

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
                w.lit(escaped)  # "" for a line continuation
                self.i += 2
            elif c == "$":
                self.dollar(w)
            elif c == "`":
                self.backtick(w)
            else:
                m = _PLAIN_DOUBLE.match(s, self.i)
                end = m.end() if m is not None else self.i + 1
                w.lit(s[self.i : end])
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
            w.lit(self.env.pwd)
            return
        self.sub(body)
        w.dynamic = True
        w.add_text("\0")
        w.add_pat(UNKNOWN)

    def dollar(self, w: Word) -> None:
        s = self.s
        nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
        if nxt == "(":
            body, self.i = balanced(s, self.i + 2, "(", ")", self.env.step)
            self.command_substitution(body, w)
        elif nxt == "{":
            body, self.i = balanced(s, self.i + 2, "{", "}", self.env.step)
            name = body.strip()
            if name in ("HOME", "PWD"):
                w.lit(self.env.home if name == "HOME" else self.env.pwd)
            else:
                # `${X:-.env}`, `${X:=.env}`, `${X:+.env}`: the word may well be the default;
                # read it as that (quotes dropped). Otherwise keep the text visible.
                m = _DEFAULTED.fullmatch(body)
                text = m.group(1).replace('"', "").replace("'", "") if m else "${" + body + "}"
                w.add_text(text)
                w.dynamic = True
                used = rx.match(_USED, body)
                if m is not None:
                    w.add_pat(expand.escape_plain(text) or UNKNOWN)
                elif used is not None and used.end() == len(body):
                    self.variable(w, used.group(1))  # `${f}`, `${a[0]}`, `${a[@]}`
                elif used is not None and body[used.end()] in "#%/^,:@~":
                    # `${f#x}`, `${f,,}`, `${f/x/.}`: made from f's values, so a name inside
                    # one of them may come out; a replacement's text may be in it too.
                    w.within.extend(self.env.vars.get(used.group(1), ()))
                    rep = body[used.end() :].split("/")[2:] if body[used.end()] == "/" else []
                    w.add_pat(UNKNOWN + (expand.escape("/".join(rep)) + UNKNOWN if rep else ""))
                    w.dynamic = True
                else:
                    w.add_pat(UNKNOWN)
        elif nxt == "'":
            try:
                end = bashlex.ansi_c_end(s, self.i + 1)
            except bashlex.Unclosed:
                raise ShellSyntax("an open $' quote") from None
            w.lit(bashlex.ansi_c_decode(s[self.i + 2 : end - 1]))
            w.quoted = True
            self.i = end
        elif (j := bashlex.name_end(s, self.i + 1)) > self.i + 1:
            name = s[self.i + 1 : j]
            if name in ("HOME", "PWD"):
                w.lit(self.env.home if name == "HOME" else self.env.pwd)
            else:
                w.add_text("$" + name)
                w.dynamic = True
                self.variable(w, name)
            self.i = j
        elif nxt and nxt in bashlex.SPECIAL_PARAMETERS:
            w.add_text("$" + nxt)  # `$1`, `$@`: empty in `bash -c`, unknown in a function
            w.unknown()
            self.i += 2
        else:
            w.lit("$")
            self.i += 1

    def variable(self, w: Word, name: str) -> None:
        """A use of `$name`: any value the text assigned it, or what it held before."""
        values = self.env.vars.get(name)
        if not values:
            w.unknown()
            return
        self.env.steps += len(values)
        w.add_pat("{" + ",".join(values) + "," + UNKNOWN + "}")
        w.braced = True
        w.dynamic = True

    def tilde(self) -> tuple[str, int] | None:
        """What a `~` starting a word stands for (`~`, `~+`, `~-`) and its length, or None."""
        s, i = self.s, self.i
        for prefix, value in (("~+", self.env.pwd), ("~-", UNKNOWN), ("~", self.env.home)):
            end = i + len(prefix)
            if s.startswith(prefix, i) and (end == len(s) or s[end] in "/ \t\n;|&)"):
                return value, len(prefix)
        return None
