"""Does a shell command read, print, copy, overwrite or send a protected file? Every simple
command the bash reader finds (substitutions included) is judged: its redirections, here-docs,
program and words; a shell or `eval` given code is read as the code it runs.
"""

from __future__ import annotations

import os
import re

from offprompt import bashlex
from offprompt.guard import bash, grep, search
from offprompt.guard.check import UNCHECKED, Check

__all__ = ["SHELLS", "base", "script"]

# Programs that take file names without reading or changing the file's content (or print only
# the name), when their output goes nowhere but the terminal.
_NAMING_ONLY = frozenset(
    {
        "ls", "test", "[", "[[", "]]", "touch", "echo", "printf", "true", "false", "which",
        "type", "realpath", "readlink", "basename", "dirname", "mkdir", "pwd", "cd", "export",
        "unset", "local", "declare",
    }
)  # fmt: skip
_GIT_NAMING_ONLY = frozenset({"check-ignore", "status", "ls-files", "check-attr"})
_OFFPROMPT_SAFE = frozenset({"keys", "status", "fingerprints", "agents", "init", "remove"})
_WRAPPERS = frozenset(
    {
        "sudo", "env", "command", "builtin", "exec", "nohup", "nice", "time", "timeout",
        "xargs", "stdbuf", "then", "else", "elif", "do", "if", "while", "until", "!", "{", "}",
        "fi", "done", "esac",
    }
)  # fmt: skip
SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep"})
_ASSIGNMENT = re.compile(bashlex.NAME_PATTERN + r"\+?=")
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
        commands = bash.scan(text, check.home, check.cwd, check.steps)
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
            return _commands(check, bash.scan(text, check.home, check.cwd, check.steps), depth)
        except bash.TooBig:
            return UNCHECKED
        except bash.ShellSyntax as e:
            closer = next((c for k, c in _CLOSERS.items() if k in str(e)), None)
            if closer is None:
                return None
            text += closer
    return None


def _commands(check: Check, commands: list[bash.Command], depth: int) -> str | None:
    for command in commands:
        words = command.words
        if words and words[0].text == "cd" and len(words) > 1 and not words[1].dynamic:
            folder = os.path.join(check.cwd, os.path.expanduser(words[1].text))
            if folder in check.dirs:
                check.dirs.remove(folder)  # once each; the last `cd` stays last (search.py)
            check.dirs.append(folder)
            if len(check.dirs) > MAX_DIRS:
                check.budget = 0
                del check.dirs[1:-1]
    for command in commands:
        hit = _command(check, command, depth)
        if hit is not None:
            return hit
    return None


def _command(check: Check, command: bash.Command, depth: int) -> str | None:
    for op, target in command.redirects:
        if op in ("<<", "<<-"):
            continue
        if op == "<<<":
            hit = check.fragments(target.text)
        else:
            hit = check.path(target.text, target.glob, target.dynamic)
        if hit is not None:
            return hit
    words = _program_words(command.words)
    for body in command.heredocs:
        if words and base(words[0].text) in _NAMING_ONLY:
            continue
        hit = check.fragments(body)
        if hit is not None:
            return hit
    if not words:
        return None
    program = base(words[0].text)
    args = words[1:]
    if not command.piped:
        if program in _NAMING_ONLY:
            return None
        if program == "git" and _git_subcommand(args) in _GIT_NAMING_ONLY:
            return None
        if program == "offprompt" and args and args[0].text in _OFFPROMPT_SAFE:
            return None
    if program in SHELLS or program == "eval":
        inline = _inline_script(program, args)
        if inline is not None:
            try:
                return script(check, inline, depth + 1)
            except bash.ShellSyntax:
                return check.fragments(inline)
    if program in _GREPS:
        parsed = grep.parse(args)
        hit = search.shell(check, program, parsed)
        if hit is not None:
            return hit  # a recursive search whose folder holds a protected file
        args = parsed.files
    for word in [words[0], *args]:
        hit = check.path(word.text, word.glob, word.dynamic)
        if hit is None:
            hit = check.fragments(word.text)
        if hit is not None:
            return hit
    return None


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
        elif w.text in _WRAPPERS:
            i += 1
            if w.text == "timeout" and i < len(words) and words[i].text[:1].isdigit():
                i += 1
            while i < len(words) and words[i].text.startswith("-") and w.text != "!":
                i += 1
        else:
            break
    return words[i:]


def _git_subcommand(args: list[bash.Word]) -> str | None:
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-C", "-c", "--git-dir", "--work-tree"):
            i += 2
        elif text.startswith("-"):
            i += 1
        else:
            return text
    return None


def _inline_script(program: str, args: list[bash.Word]) -> str | None:
    if program == "eval":
        return " ".join(a.text for a in args)
    for i, arg in enumerate(args):
        if arg.text.startswith("-") and not arg.text.startswith("--") and "c" in arg.text:
            return args[i + 1].text if i + 1 < len(args) else None
    return None
