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
from offprompt.guard.words import (
    MAX_STEPS,
    Command,
    Env,
    ShellSyntax,
    TooBig,
    Word,
    backtick_body,
    balanced,
    expansion_bodies,
    heredoc_body,
    single_quote_end,
    tilde,
)

__all__ = ["MAX_STEPS", "Command", "ShellSyntax", "TooBig", "Word", "scan"]

# Deeper nesting than this is not a command a person or an agent writes by hand.
_MAX_DEPTH = 16

_OPERATORS = ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")")
_REDIRECTS = ("<<<", "<<-", "&>>", "<<", "<>", "<&", ">>", ">&", ">|", "&>", "<", ">")
_GLOB = "*?["
# A run of characters with no meaning to the reader, taken at once (the loop's time is then
# linear in the special characters, not in every character of a long word).
_PLAIN = rx.compile(r"[^ \t\n#\\'\"$`<>&|;()~*?\[]+")
_PLAIN_DOUBLE = rx.compile(r'[^"\\$`]+')
_EXTGLOB = "@!+*?"
# The words that may stand before an arithmetic command `(( … ))` in the same command.
_KEYWORDS = frozenset({"if", "then", "else", "elif", "while", "until", "do", "!", "time", "{",
                       "coproc"})  # fmt: skip
_ARITHMETIC_AFTER = _KEYWORDS | {"for"}  # `for ((i = 0; i < 3; i++))`


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
    env = Env(home, pwd)
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
# Keywords and builtins that may stand before the program whose words assign (`then printf -v`).
_MOVES = frozenset({"cd", "pushd", "popd"})
_BEFORE_PROGRAM = _KEYWORDS | {"command", "builtin", "function"}  # `function NAME {`
# One variable assigned more values than this in one command is not followed value by value.
_MAX_VALUES = 256
# A variable, maybe with a subscript, starting the inside of `${…}`.
_USED = "(" + bashlex.NAME_PATTERN + r")(?:\[[^\]]*\])?"
# `${NAME:-word}` and its kin (`-`, `=`, `:=`, `+`, `:+`): the word is what the shell may use.
_DEFAULTED = rx.compile(bashlex.NAME_PATTERN + r":?[-=+](.*)", rx.DOTALL)


class _Lexer:
    def __init__(self, text: str, env: Env, out: list[Command], depth: int) -> None:
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
            # Any word `cd` (not only the program's: `function g { cd x; }`, `env cd` alike):
            # `$PWD` is then not known, which costs an everyday command nothing.
            self.env.moved = self.env.moved or any(w.text in _MOVES for w in self.cmd.words)
        self.cmd = Command()

    def assignments(self, words: list[Word]) -> None:
        """Keep what `f=.e`, `export f=.e` or `for f in .e*` assigns, for later uses of `$f`."""
        # `if true; then printf -v f …`, `command printf -v f …`: the keyword is not the program.
        while words and words[0].text in _BEFORE_PROGRAM and not words[0].quoted:
            words = words[2:] if words[0].text == "function" else words[1:]
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
                body, self.i = balanced(s, self.i + 2, "(", ")", self.env.step, True)
                self.sub(body)
                self._w().unknown()  # a /dev/fd/N name
            elif c == "(" and self.word is not None and _ASSIGN.fullmatch(self.word.finish().pat):
                self.array(self.word)
            elif c == "(" and self.word is not None and self.word.text[-1:] in _EXTGLOB:
                # extglob's `@(…)`, `!(…)`, `+(…)`, `*(…)`, `?(…)`: matched as `*`, which
                # matches at least what each of them does.
                _, self.i = balanced(s, self.i + 1, "(", ")", self.env.step)
                self.word.extglob()
            elif c == "(" and s.startswith("((", self.i) and self.arithmetic(self.i + 1, True):
                continue
            elif c in "<>&" and self.redirect():
                continue
            elif c in "&|;()" and self.operator():
                continue
            elif c == "~" and self.tilde_starts() and (tilde := self.tilde_at()) is not None:
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

    def arithmetic(self, start: int, command: bool) -> bool:
        """`(( … ))` where a command starts (`command`), or `$(( … ))`; `start` is the index of
        its second `(`. Bash evaluates it as arithmetic, where `<<` is a shift, not a here-doc:
        only its `$(…)`, `${…}` and backticks run commands (a subscript's among them). False
        when it is not one: the parentheses do not close as `))` (a subshell in a subshell), or
        a word stands before it (`f ((…))`)."""
        last = self.cmd.words[-1].text if self.cmd.words else "{"
        if command and (self.word is not None or last not in _ARITHMETIC_AFTER):
            return False  # `f ((…))`: a word before it, not a keyword (`then`, `{`, `do`)
        inner, end = balanced(self.s, start + 1, "(", ")", self.env.step)
        if not self.s.startswith(")", end):
            return False
        self.expansions(inner)
        self.i = end + 1
        return True

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
            body, self.i = heredoc_body(self.s, self.i, delim, strip_tabs)
            command.heredocs.append(body.removesuffix("\n"))
            if not quoted:
                self.expansions(body)

    def expansions(self, body: str) -> None:
        """The commands `$(…)`, `${…}` and backticks in `body` run (an unquoted here-doc's, when
        the shell reads it, whatever program it is given to; arithmetic's): read as commands."""
        for inner in expansion_bodies(body, self.env.step):
            self.sub(inner)

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
        body, self.i = backtick_body(self.s, self.i, self.env.step)
        self.command_substitution(body, w)

    def command_substitution(self, body: str, w: Word) -> None:
        if body.strip() == "pwd" and not self.env.moved:
            w.lit(self.env.pwd)
            return
        self.sub(body)
        w.dynamic = True
        w.add_text("\0")
        w.add_pat(UNKNOWN)

    def dollar(self, w: Word) -> None:
        s = self.s
        nxt = s[self.i + 1] if self.i + 1 < len(s) else ""
        if s.startswith("((", self.i + 1) and self.arithmetic(self.i + 2, False):
            w.dynamic = True  # a number
            w.add_text("\0")
            w.add_pat(UNKNOWN)
        elif nxt == "(":
            body, self.i = balanced(s, self.i + 2, "(", ")", self.env.step, heredocs=True)
            self.command_substitution(body, w)
        elif nxt == "{":
            body, self.i = balanced(s, self.i + 2, "{", "}", self.env.step)
            name = body.strip()
            if name in ("HOME", "PWD"):
                self.env.home_or_pwd(w, name)
            else:
                # `${X:-.env}`, `${X:=.env}`, `${X:+.env}`: the word may well be the default;
                # read it as that (quotes dropped). Otherwise keep the text visible.
                m = _DEFAULTED.fullmatch(body)
                if m is not None and self.defaulted(w, m.group(1)):
                    return
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
                self.env.home_or_pwd(w, name)
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

    def defaulted(self, w: Word, text: str) -> bool:
        """`${X:-word}` (`-`, `=`, `:=`, `+`, `:+`): the word as bash expands it (its quotes,
        `$'…'`, variables, substitutions, read as a word of its own) or X's value, unknown.
        False when the word is not one word (then it is taken as text)."""
        inner: list[Command] = []
        try:
            _Lexer(text, self.env, inner, self.depth + 1).run()
        except ShellSyntax:
            return False  # not a word the reader can read: its text, as before
        words = [x for c in inner if not c.piped for x in c.words]
        self.out.extend(c for c in inner if c.piped)  # a substitution's commands run
        if len(words) != 1:
            return False
        word = words[0]
        try:
            values = expand.variants(word.pat) if word.braced else [word.pat]
        except expand.TooMany:
            raise TooBig("too many words to read") from None
        self.env.steps += len(values)
        w.add_text(word.text)
        w.add_pat("{" + ",".join(map(expand.brace_literal, values)) + "," + UNKNOWN + "}")
        w.braced = w.dynamic = True
        w.glob = w.glob or word.glob
        w.within.extend(word.within)
        return True

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

    def tilde_starts(self) -> bool:
        """A `~` here is expanded: starting a word, or after `NAME=` (`dd if=~+/f`, as bash)."""
        return self.word is None or _ASSIGN.fullmatch(self.word.finish().pat) is not None

    def tilde_at(self) -> tuple[str, int] | None:
        return tilde(self.s, self.i, self.env.home, UNKNOWN if self.env.moved else self.env.pwd)
