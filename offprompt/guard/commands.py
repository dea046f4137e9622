"""Does a shell command read, print, copy, overwrite or send a protected file? Every simple
command the bash reader finds (substitutions included) is judged: its redirections, here-docs,
program and words; a shell or `eval` given code is read as the code it runs.
"""

from __future__ import annotations

import os

from offprompt import bashlex, rx
from offprompt.guard import bash, expand, implied, programs
from offprompt.guard.check import GLOB_LOOKS, UNCHECKED, Check, expand_glob

__all__ = ["SHELLS", "base", "script"]

# Programs that take file names without reading or changing the file's content (or print only
# the name), when their output goes nowhere but the terminal.
_NAMING_ONLY = frozenset(
    {
        "ls", "test", "[", "[[", "]]", "touch", "echo", "printf", "true", "false", "which",
        "type", "realpath", "readlink", "basename", "dirname", "mkdir", "pwd", "cd", "export",
        "unset", "local", "declare", "stat", "wc", "chmod", "chown", "chgrp", "pushd", "popd",
    }
)  # fmt: skip
# Metadata that shows no byte of a value (DESIGN §14): `stat`, `wc -l`, `chmod` above; git's
# `check-ignore`, and `rm --cached` (it drops the file from the index, the file stays as it is).
_GIT_NAMING_ONLY = frozenset({"check-ignore", "status", "ls-files", "check-attr"})
_GIT_NAMING_WITH = {"rm": "--cached"}
# Options of those programs that read a file's lines as names, and print them when no such file
# exists (`wc --files0-from=.env`): then the program is no longer naming only.
_READS_NAMES = ("--files0-from",)
# The builtins that change the shell's folder, and their options (not the folder's name).
_CHDIR = frozenset({"cd", "pushd"})
_OFFPROMPT_SAFE = frozenset(
    {"keys", "status", "fingerprints", "agents", "init", "remove", "collect", "guard", "doctor"}
)
# bash's glob options a command may turn on (`shopt -s`, `GLOBIGNORE=` and BASHOPTS for dotglob).
_GLOB_OPTIONS = ("dotglob", "nocaseglob", "globstar", "extglob")
# Programs that print a here-doc given to them as it is: text, not names, unless piped on.
_HEREDOC_TEXT = frozenset({"cat", "tee"})
_WRAPPERS = frozenset(
    {
        "sudo", "env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout",
        "xargs", "stdbuf", "then", "else", "elif", "do", "if", "while", "until", "!", "{", "}",
        "fi", "done", "esac", "coproc",
    }
)  # fmt: skip
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
# Programs that run code they read from their input when given no script.
_STDIN_CODE = SHELLS | {"python", "python3", "node", "perl", "ruby", "php", "lua", "source", "."}
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep"})
_ASSIGNMENT = rx.compile(bashlex.NAME_PATTERN + r"\+?=")
# Code run by code (`eval eval …`, `bash -c "bash -c …"`) deeper than this is not checked; it is
# blocked (DESIGN §14: text the reader cannot read is decided at least as strictly).
_MAX_DEPTH = 16
# More folders than this named by `cd` in one command: each name would be tried in each, so
# the command is checked with the look budget spent (every name that may be a file blocks).
MAX_DIRS = 32


def script(check: Check, text: str, depth: int = 0) -> str | None:
    """The protected file the shell command `text` would expose, or None. ShellSyntax when the
    text is not complete shell."""
    if depth > _MAX_DEPTH:
        return UNCHECKED
    try:
        commands = bash.scan(text, check.home, check.cwd, check.steps, check.variables)
    except bash.TooBig:
        return UNCHECKED
    except bash.ShellSyntax as e:
        # bash runs the lines before the one it cannot read (`cat .e''nv` then `echo 'x`), so
        # the text is also read as if what is open were closed; a hit there blocks. Otherwise
        # the caller's own fallback for text that is not complete shell decides, as before.
        hit = _closed(check, text, depth)
        if hit is not None:
            return hit
        raise e
    return _commands(check, commands, depth)


# What closes each open form the reader names in its ShellSyntax.
_CLOSERS = {
    "single quote": "'", "$' quote": "'", "double quote": '"', "backtick": "`", "an open (": ")",
    "an open {": "}", "target": " x",
}  # fmt: skip


def _closed(check: Check, text: str, depth: int) -> str | None:
    """The hit in `text` read with its open quotes and brackets closed (at most 8 of them)."""
    for _ in range(8):
        try:
            found = bash.scan(text, check.home, check.cwd, check.steps, check.variables)
            return _commands(check, found, depth)
        except bash.TooBig:
            return UNCHECKED
        except bash.ShellSyntax as e:
            closer = next((c for k, c in _CLOSERS.items() if k in str(e)), None)
            if closer is None:
                return None
            text += closer
    return None


def _commands(check: Check, commands: list[bash.Command], depth: int) -> str | None:
    options = set(check.globs)
    for command in commands:
        for word in command.words:
            if "GLOBIGNORE" in word.text:
                options.add("dotglob")  # a GLOBIGNORE set to anything turns dotglob on
            options.update(o for o in _GLOB_OPTIONS if o in word.text)
    check.globs = frozenset(options)
    said = _said(check, commands)
    # `while read f; do cat $f; done < list`: what `read` takes in is a name source too.
    readers = ("read", "mapfile", "readarray")
    reads = any(w[0].text in readers for c in commands if (w := _program_words(c.words)))
    for command in commands:
        if reads and check.listed is None:
            inputs = [t for op, t in command.redirects if op in ("<", "<>")]
            check.listed = programs.carried(check, [], inputs, said)
        if command.piped and check.listed is None:
            words = _program_words(command.words)
            inputs = [t for op, t in command.redirects if op in ("<", "<>")]
            if words:
                check.listed = programs.listing(check, base(words[0].text), words[1:])
            if check.listed is None:
                check.listed = programs.carried(check, words[1:], inputs, said)
            if check.listed is None and words and base(words[0].text) in _HEREDOC_TEXT:
                # `"$(cat <<'EOF' … EOF)"` (a commit message), `cat <<EOF | xargs cat`
                check.listed = check.fragments("\n".join(command.heredocs))
    # A program reading code from its input (`cat <<EOF | bash`): piped text is code there.
    stdin_code = any(
        base(w[0].text) in _STDIN_CODE for c in commands if (w := _program_words(c.words))
    )
    for command in commands:
        arg_file = programs.xargs_arg_file(command.words)
        # xargs prints or hands on what it reads: the file itself (`xargs -a.env echo`), and
        # the names in it (`echo .env > l; xargs -a l cat`, `xargs cat < l`).
        sources: list[str] = [] if arg_file is None else [arg_file]
        if _feeds_xargs(command.words):
            sources += [t.text for op, t in command.redirects if op in ("<", "<>")]
        for name in sources:
            hit = (check.path(name) if name == arg_file else None) or programs.names_in(
                check, name, said
            )
            if hit is not None:
                return hit
    cdpath = _cdpath(check, commands)
    for command in commands:
        for folder in _entered(check, command.words, cdpath):
            if folder in check.dirs:
                check.dirs.remove(folder)  # once each; the last `cd` stays last (search.py)
            check.dirs.append(folder)
            if len(check.dirs) > MAX_DIRS:
                check.budget = 0
                del check.dirs[1:-1]
    for command in commands:
        hit = _command(check, command, depth, stdin_code, said)
        if hit is not None:
            return hit
    return None


def _command(
    check: Check,
    command: bash.Command,
    depth: int,
    stdin_code: bool = True,
    said: dict[str, str] | None = None,
) -> str | None:
    for op, target in command.redirects:
        if op in ("<<", "<<-"):
            continue
        if op == "<<<":
            # A shell's script (`source /dev/stdin <<< 'cat .e""nv'`); else the text as bash
            # expands it (`xargs cat <<< ${f}env`), and the names inside it.
            if _runs_stdin(command.words):
                hit = _code_text(check, target.text, depth)
            else:
                hit = check.fragments(target.text) or word_hit(check, target)
        elif op in _WRITES and check.left and check.masked(target.text):
            hit = target.text  # the mask shows reads a stand-in; a write reaches the file
        else:
            hit = word_hit(check, target)
        if hit is not None:
            return hit
    for word in command.words:
        hit = _subscript(check, word, depth)
        if hit is not None:
            return hit
    split = programs.env_split_string(command.words)
    if split is not None:
        try:
            hit = script(check, split, depth + 1)
        except bash.ShellSyntax:
            hit = check.fragments(split)
        if hit is not None:
            return hit
    if check.listed is not None and _feeds_xargs(command.words):
        return check.listed  # `ls -A | xargs cat`: the names listed are opened
    words = _program_words(command.words)
    for body in command.heredocs:
        if words and base(words[0].text) in _NAMING_ONLY:
            continue
        if words and base(words[0].text) in _HEREDOC_TEXT and not (command.piped and stdin_code):
            # `cat <<EOF > notes.md`: the text goes to a file (its `$(…)` are read); piped on,
            # it is names where a listing's would be (check.listed), or code to a shell.
            continue
        if _runs_stdin(command.words):
            # `bash <<'EOF'`: the shell runs the here-doc as its script (`cat .e{n,}v` there),
            # read as `bash -c` is (`test -f .env` there names no read).
            hit = _code_text(check, body, depth)
        else:
            hit = check.fragments(body)
        if hit is not None:
            return hit
    if not words:
        return None
    program = base(words[0].text)
    args = words[1:]
    if program == "offprompt" and args and args[0].text in _OFFPROMPT_SAFE:
        return None  # it prints key names and states, never a value
    if not command.piped:
        if program in _NAMING_ONLY and not any(a.text.startswith(_READS_NAMES) for a in args):
            return None
        sub = programs.git_subcommand(args) if program == "git" else None
        naming = sub in _GIT_NAMING_ONLY or (
            sub in _GIT_NAMING_WITH and _GIT_NAMING_WITH[sub] in texts(args)
        )
        if naming and not programs.git_runs_code(command.words):
            return None
    hit = implied.opens(check, program, args, said or {})
    for text in [*texts(args), *command.heredocs]:
        hit = hit or implied.code(program, text)  # `python -c 'load_dotenv()'`
    if hit is not None:
        return hit
    hit = programs.recursive(check, program, args)
    if hit is not None:
        return hit  # an archive, copy or `find -exec` that takes a protected file in
    args = programs.texts_left_out(program, args)
    if program in SHELLS or program in ("eval", "trap", "alias"):
        inline, given = _inline_script(program, args)
        if inline is not None:
            try:
                hit = script(check, inline, depth + 1)
            except bash.ShellSyntax:
                hit = check.fragments(inline)
            if hit is not None or not given:
                return hit
            args = given  # `bash -c 'cat "$0"' .env`: the words after the code are its $0, $1…
    if program in _GREPS or program == "git":
        # Loaded for a search alone: most commands run none (DESIGN §14: fast on every call).
        from offprompt.guard import grep, search
    if program in _GREPS:
        args = programs.directories_recurse(args)
        parsed = grep.parse(args)
        hit = search.shell(check, program, parsed)
        if hit is not None:
            return hit  # a recursive search whose folder holds a protected file
        args = parsed.files
    if program == "git" and programs.git_subcommand(args) == "grep" and "--no-index" in texts(args):
        # git grep --no-index searches the folder as grep -r does, .gitignore or not.
        parsed = grep.parse(args[args.index(next(a for a in args if a.text == "grep")) + 1 :])
        parsed.recursive = True
        hit = search.shell(check, "grep", parsed)
        if hit is not None:
            return hit
    for word in [words[0], *args]:
        hit = word_hit(check, word)
        if hit is None and program in ("printf", "echo") and "\\" in word.text:
            hit = check.fragments(bashlex.ansi_c_decode(word.text))  # `printf '\x2eenv'`
        if hit is not None:
            return hit
    if program == "printf" and len(args) > 1:
        return check.fragments(expand.printf([a.text for a in args]))  # `printf '.%s' env`
    return None


def _code_text(check: Check, text: str, depth: int) -> str | None:
    """The hit in `text` read as a script; text that is not complete shell by its fragments."""
    try:
        return script(check, text, depth + 1)
    except bash.ShellSyntax:
        return check.fragments(text)


def texts(words: list[bash.Word]) -> list[str]:
    return [w.text for w in words]


_WRITES = (">", ">>", ">|", "&>", "&>>")


def _said(check: Check, commands: list[bash.Command]) -> dict[str, str]:
    """The files the command writes a protected name into (`echo .env > l`, a here-doc to
    `cat > l`, `tee l`), by path: read back as names (`xargs -a l cat`), they name it."""
    said: dict[str, str] = {}
    for command in commands:
        words = _program_words(command.words)
        targets = [t.text for op, t in command.redirects if op in _WRITES]
        if words and base(words[0].text) == "tee":
            targets += [w.text for w in words[1:] if not w.text.startswith("-")]
        if not targets or not words:
            continue
        texts = [w.text for w in words[1:]]
        text = " ".join([*texts, *map(bashlex.ansi_c_decode, texts), *command.heredocs])
        if base(words[0].text) == "printf" and texts:
            text += " " + expand.printf(texts)
        hit = check.fragments(text)
        if hit is not None:
            for target in targets:
                folder = check.dirs[-1]
                said[os.path.normpath(os.path.join(folder, os.path.expanduser(target)))] = hit
    return said


def _cdpath(check: Check, commands: list[bash.Command]) -> list[str]:
    """The folders a `CDPATH` the command sets names (`CDPATH=.. cd config`), as given."""
    # The shell's own CDPATH (the hook runs in the environment the agent's shell inherits).
    values = [os.environ.get("CDPATH", ""), *check.variables.get("CDPATH", [])]
    for command in commands:
        values += [w.text[7:] for w in command.words if w.text.startswith("CDPATH=")]
    return [part for value in values for part in value.split(":") if part]


def _entered(check: Check, words: list[bash.Word], cdpath: list[str]) -> list[str]:
    """The folders `cd DIR` (`pushd`, `builtin cd`, `cd -P`) may enter: DIR as bash expands it
    (braces, the variables the command set, a glob matched in the folder the command started
    in), from that folder and through each CDPATH folder. Where the reader cannot tell (`cd
    "$X"`, `cd -`, a CDPATH it cannot read), every folder holding a file offprompt wrote: a
    relative read after it may open one (the dotenv names are blocked wherever they are)."""
    words = _program_words(words)
    if words and words[0].text == "builtin":
        words = words[1:]
    if not words or words[0].text not in _CHDIR:
        return []
    given = [w for w in words[1:] if not (w.text.startswith(("-", "+")) and len(w.text) > 1)]
    if not given:
        return []
    unknown = [os.path.dirname(p) for p in sorted(check.protected.written)]
    try:
        patterns = expand.variants(given[0].pat) if given[0].braced else [given[0].pat]
    except expand.TooMany:
        return unknown
    names: list[str] = []
    for pattern in patterns:
        text, glob, hidden = expand.literal(pattern)
        if hidden or text == "-" or (given[0].dynamic and not given[0].braced):
            return unknown
        name = os.path.expanduser(text)
        if glob:
            if not check.spend(GLOB_LOOKS[0]):
                return unknown  # the budget is spent: the folder is not looked for
            found = expand_glob(os.path.join(check.cwd, name), check.globs)
            names += [f for f in found if os.path.isdir(f)] or [name]
        else:
            names.append(name)
    folders = []
    for name in names:
        folders.append(os.path.join(check.cwd, name))
        if not os.path.isabs(name) and not name.startswith("."):
            if any("\0" in c or "$" in c for c in cdpath):
                return unknown
            folders += [os.path.join(check.cwd, c, name) for c in cdpath]
    return [os.path.normpath(f) for f in folders]


def _feeds_xargs(words: list[bash.Word]) -> bool:
    """The command is `xargs PROGRAM` reading names from its input (not `-a FILE`), and the
    program is one that opens them."""
    for i, w in enumerate(words[:4]):
        if base(w.text) != "xargs":
            continue
        rest = [x.text for x in words[i + 1 :]]
        if any(t in ("-a", "--arg-file") or t.startswith("--arg-file=") for t in rest):
            return False
        program = next((t for t in rest if not t.startswith("-")), "echo")
        return base(program) not in _NAMING_ONLY
    return False


def word_hit(check: Check, word: bash.Word) -> str | None:
    """The protected file `word` names: as written, inside it (code, `--opt=FILE`), or once
    bash has expanded it (braces, the variables the command set, a part it cannot know)."""
    hit = check.path(word.text, word.glob, word.dynamic)
    if hit is None and not word.braced:
        # A braced word's parts are looked for in each word bash makes of it (below), not in
        # its text, where `.env{.example,.example}` would split into `.env`.
        hit = check.fragments(word.text)
    if hit is None and word.within:
        hit = check.inside(word.within)
    if hit is not None or not (word.braced or expand.UNKNOWN in word.pat):
        return hit
    try:
        patterns = expand.variants(word.pat) if word.braced else [word.pat]
    except expand.TooMany:
        return UNCHECKED
    for pattern in patterns:
        text, glob, unknown = expand.literal(pattern)
        if unknown:
            hit = check.could_be(pattern)
            if hit is None and "=" in pattern:
                # An option's value (`dd if=.en${UNSET}v`, `--env-file=$D.env`).
                hit = check.could_be(pattern.split("=", 1)[1])
        elif text != word.text:
            hit = check.path(text, glob) or check.fragments(text)
        elif word.braced:
            hit = check.fragments(text)  # braces that made nothing new (`x{}.env`)
        if hit is not None:
            return hit
    return None


_SUBSCRIPTED = rx.compile(bashlex.NAME_PATTERN + r"\[")


def _subscript(check: Check, word: bash.Word, depth: int) -> str | None:
    """bash reads `NAME[…]` as an array subscript, and runs the `$(…)` inside it, wherever a
    variable's name is taken (`test -v`, `declare`, `printf -v`, `read`, arithmetic on a
    variable holding it), even from a quoted word: the text after `[` is read as code."""
    text = word.text
    if "$(" not in text and "`" not in text:
        return None
    m = _SUBSCRIPTED.search(text)  # a name before the `[` (`[ -s x ]` in code is no subscript)
    if m is None:
        return None
    code = "echo " + text[m.end() :]
    try:
        return script(check, code, depth + 1)
    except bash.ShellSyntax:
        return check.fragments(code)


def base(program: str) -> str:
    """The program's name without its folder."""
    return program.rsplit("/", 1)[-1]


def _program_words(words: list[bash.Word]) -> list[bash.Word]:
    """The words from the program on: leading `NAME=value`, keywords and wrappers skipped."""
    i = 0
    while i < len(words):
        w = words[i]
        if _ASSIGNMENT.match(w.text) and not w.quoted:
            i += 1
        elif w.text == "function":
            i += 2  # `function NAME { …`: the body's first command follows `{`
        elif w.text in _WRAPPERS:
            i += 1
            if w.text == "timeout" and i < len(words) and words[i].text[:1].isdigit():
                i += 1
            while i < len(words) and words[i].text.startswith("-") and w.text != "!":
                i += 1
        else:
            break
    return words[i:]


def _runs_stdin(words: list[bash.Word]) -> bool:
    """The command runs its input as a script: a shell given no `-c` code, `source
    /dev/stdin` (`.`)."""
    words = _program_words(words)
    program = base(words[0].text) if words else ""
    if program in SHELLS:
        return _inline_script(program, words[1:])[0] is None
    return program in ("source", ".") and any(w.text in _STDIN_FILES for w in words[1:])


_STDIN_FILES = ("/dev/stdin", "/dev/fd/0", "/proc/self/fd/0")


def _inline_script(program: str, args: list[bash.Word]) -> tuple[str | None, list[bash.Word]]:
    """The code `eval` or `sh -c` runs, and the words given to it after it (its $0, $1…)."""
    if program == "eval":
        return " ".join(a.text for a in args), []
    if program == "trap":  # `trap 'cat .env' EXIT`: the code runs on the signal
        return next((a.text for a in args if not a.text.startswith("-")), None), []
    if program == "alias":  # `shopt -s expand_aliases; alias c='cat .env'`
        return "\n".join(a.text.partition("=")[2] for a in args), []
    for i, arg in enumerate(args):
        if arg.text.startswith("-") and not arg.text.startswith("--") and "c" in arg.text:
            if i + 1 < len(args):
                return args[i + 1].text, args[i + 2 :]
            return None, []
    return None, []
