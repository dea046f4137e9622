"""The guard's rules (DESIGN §14): does one tool event (Claude Code's and Codex's `PreToolUse`,
Gemini CLI's `BeforeTool`) read, print, copy, overwrite or send a protected file? And
`offprompt guard`, the hook that answers.

Imports only re, json, glob and fnmatch beside what Python starts with, and reads the journal
itself, so the hook starts fast (DESIGN §14: ≤ 50 ms per call): no dataclasses, typing,
datetime, pathlib or platformdirs on this path (tests/cli/test_guard.py checks).
"""

from __future__ import annotations

import fnmatch
import glob as globmod
import json
import os
import re
import sys
from collections.abc import Iterable, Iterator, Mapping

from offprompt.hosts import guard_events, guard_files, guard_search, shellscan

__all__ = ["DOTENV_NAMES", "Protected", "decide", "main", "reason"]

# The dotenv files Claude Code's deny rules name (DESIGN §14), protected in any folder.
DOTENV_NAMES = (
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.staging",
    ".env.test",
)
_LOCAL_PATTERN = ".env.*.local"
# Names a glob is tried against when no such file exists yet (`cat .e*` in an empty folder).
_SAMPLES = (*DOTENV_NAMES, ".env.development.local", ".env.production.local", ".env.test.local")

# An event larger than this is not one tool call; read no more than this from stdin.
MAX_EVENT_BYTES = 4 * 1024 * 1024

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
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish"})
_GREPS = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "zgrep"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")
# Splits code and option words into the names inside them: `open('.env')`, `--env-file=.env`.
_FRAGMENT_SPLIT = re.compile(r"[@\s'\"`(){},;=<>|&:+\\\0]+")
# The crude check used when the event cannot be understood: a dotenv name as its own token.
_CRUDE_DOTENV = re.compile(
    r"(?<![\w.-])\.env(?:\.local|\.development|\.production|\.staging|\.test|\.[\w-]+\.local)?"
    r"(?![\w.-])"
)
_FILE_KEYS = (
    "file_path", "notebook_path", "path", "file", "filename", "paths", "files", "filePath",
)  # fmt: skip
# The events that come before a tool runs: Claude Code's and Codex's, and Gemini CLI's.
_BEFORE_TOOL = ("PreToolUse", "BeforeTool")
# Claude Code's, Codex's, Gemini CLI's and VS Code's shell tools.
_SHELL_TOOLS = (
    "Bash", "shell", "local_shell", "exec_command", "unified_exec", "run_shell_command",
    "run_in_terminal",
)  # fmt: skip
# Tools that list names and never open a file: Claude Code's, and Gemini CLI's.
_LISTING_TOOLS = ("Glob", "LS", "glob", "list_directory")
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$")


class Protected:
    """What the guard keeps from the model: the dotenv names anywhere, and the files the
    journal says offprompt wrote (absolute, normalised paths)."""

    __slots__ = ("written", "written_names")

    def __init__(self, files: Iterable[str] = ()) -> None:
        self.written = frozenset(os.path.normpath(f) for f in files)
        self.written_names = frozenset(os.path.basename(p) for p in self.written)


def is_dotenv(name: str) -> bool:
    """`name` (a file name, no folder) is one of the protected dotenv names."""
    return name in DOTENV_NAMES or fnmatch.fnmatchcase(name, _LOCAL_PATTERN)


def _glob_hits_dotenv(pattern: str) -> str | None:
    if not pattern.startswith("."):
        return None  # like bash, a glob reaches a dotfile only with a leading dot
    for name in _SAMPLES:
        if fnmatch.fnmatchcase(name, pattern):
            return name
    return None


class _Check:
    """One event's context: where relative names start, and what is protected; `dirs` holds
    the cwd and the folders a `cd` in the command names."""

    __slots__ = ("cwd", "dirs", "home", "protected")

    def __init__(self, cwd: str, home: str, protected: Protected, dirs: list[str]) -> None:
        self.cwd = cwd
        self.home = home
        self.protected = protected
        self.dirs = dirs

    def path(self, text: str, glob: bool = False, dynamic: bool = False) -> str | None:
        """The protected file `text` names (as the agent wrote it, for the message), or None."""
        text = text.strip()
        if text.startswith("file://"):
            text = text[len("file://") :]
        if not text or text.endswith("/") or "\n" in text or "://" in text:
            return None  # a folder, prose, or a remote URL: not a local file's name
        base = text.rsplit("/", 1)[-1]
        if is_dotenv(base):
            return base
        if glob:
            hit = _glob_hits_dotenv(base)
            if hit is not None:
                return hit
        if glob and not dynamic:
            for folder in self.dirs:
                for found in _expand(os.path.join(folder, os.path.expanduser(text))):
                    name = os.path.basename(found)
                    if is_dotenv(name) or self._written(found):
                        return text
        if not self.protected.written:
            return None
        if dynamic or "\0" in text or "$" in text:
            return base if base in self.protected.written_names else None
        if glob:
            return text if self._written_glob(text) else None
        for folder in self.dirs:
            if self._written(os.path.join(folder, os.path.expanduser(text))):
                return text
        return None

    def _written(self, path: str) -> bool:
        written = self.protected.written
        if os.path.normpath(path) in written:
            return True
        try:
            return os.path.realpath(path) in written
        except (OSError, ValueError):
            return False

    def _written_glob(self, pattern: str) -> bool:
        for folder in self.dirs:
            full = os.path.normpath(os.path.join(folder, os.path.expanduser(pattern)))
            if any(fnmatch.fnmatchcase(p, full) for p in self.protected.written):
                return True
        return False

    def fragments(self, text: str) -> str | None:
        """A protected file named anywhere inside `text` (code, `--opt=FILE`, a patch)."""
        hit = self.path(text)
        if hit is not None:
            return hit
        for part in _FRAGMENT_SPLIT.split(text):
            if part and part != text:
                hit = self.path(part, glob=any(c in part for c in "*?["))
                if hit is not None:
                    return hit
        return None


def _expand(pattern: str) -> Iterator[str]:
    try:
        yield from globmod.iglob(pattern)
    except (OSError, ValueError, RecursionError):
        return


# --- shell commands ----------------------------------------------------------------------------


def _shell(check: _Check, script: str) -> str | None:
    commands = shellscan.scan(script, check.home, check.cwd)
    for command in commands:
        words = command.words
        if words and words[0].text == "cd" and len(words) > 1 and not words[1].dynamic:
            check.dirs.append(os.path.join(check.cwd, os.path.expanduser(words[1].text)))
    for command in commands:
        hit = _command(check, command)
        if hit is not None:
            return hit
    return None


def _command(check: _Check, command: shellscan.Command) -> str | None:
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
        if words and _base(words[0].text) in _NAMING_ONLY:
            continue
        hit = check.fragments(body)
        if hit is not None:
            return hit
    if not words:
        return None
    program = _base(words[0].text)
    args = words[1:]
    if not command.piped:
        if program in _NAMING_ONLY:
            return None
        if program == "git" and _git_subcommand(args) in _GIT_NAMING_ONLY:
            return None
        if program == "offprompt" and args and args[0].text in _OFFPROMPT_SAFE:
            return None
    if program in _SHELLS or program == "eval":
        script = _inline_script(program, args)
        if script is not None:
            try:
                return _shell(check, script)
            except shellscan.ShellSyntax:
                return check.fragments(script)
    if program in _GREPS:
        hit = guard_search.shell(check, program, args)
        if hit is not None:
            return hit  # a recursive search whose folder holds a protected file
        args = _grep_files(args)
    for word in [words[0], *args]:
        hit = check.path(word.text, word.glob, word.dynamic)
        if hit is None:
            hit = check.fragments(word.text)
        if hit is not None:
            return hit
    return None


def _base(program: str) -> str:
    return program.rsplit("/", 1)[-1]


def _program_words(words: list[shellscan.Word]) -> list[shellscan.Word]:
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


def _git_subcommand(args: list[shellscan.Word]) -> str | None:
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


def _inline_script(program: str, args: list[shellscan.Word]) -> str | None:
    if program == "eval":
        return " ".join(a.text for a in args)
    for i, arg in enumerate(args):
        if arg.text.startswith("-") and not arg.text.startswith("--") and "c" in arg.text:
            return args[i + 1].text if i + 1 < len(args) else None
    return None


def _grep_files(args: list[shellscan.Word]) -> list[shellscan.Word]:
    """grep's file operands and pattern files: the first operand is the pattern unless `-e`
    or `-f` gave one."""
    files: list[shellscan.Word] = []
    operands: list[shellscan.Word] = []
    pattern_given = False
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--":
            operands.extend(args[i + 1 :])
            break
        if text in ("-e", "--regexp"):
            pattern_given = True
            i += 2
            continue
        if text in ("-f", "--file"):
            pattern_given = True
            if i + 1 < len(args):
                files.append(args[i + 1])
            i += 2
            continue
        if text.startswith("--regexp="):
            pattern_given = True
        elif text.startswith("--file="):
            pattern_given = True
            files.append(shellscan.Word(text.split("=", 1)[1]))
        elif text.startswith("-") and len(text) > 1:
            if text.startswith("-e") and not text.startswith("--"):
                pattern_given = True
            elif text.startswith("-f") and not text.startswith("--"):
                pattern_given = True
                files.append(shellscan.Word(text[2:]))
        else:
            operands.append(args[i])
        i += 1
    return files + (operands if pattern_given else operands[1:])


# --- events ------------------------------------------------------------------------------------


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def decide(event: Mapping[str, object], protected: Protected, home: str) -> str | None:
    """The protected file this tool call would expose, or None to let it through.

    `event` is the hook's JSON (`tool_name`, `tool_input`, `cwd`); ValueError/TypeError or
    ShellSyntax when it is not a tool event the rules understand.
    """
    if event.get("hook_event_name", "PreToolUse") not in _BEFORE_TOOL:
        return None
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, Mapping):
        raise ValueError("not a tool event")
    cwd = event.get("cwd")
    # Codex's `workdir`, Gemini CLI's `dir_path` (the shell's folder, or the one searched).
    workdir = tool_input.get("workdir") or tool_input.get("cwd") or tool_input.get("dir_path")
    base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd()
    if isinstance(workdir, str) and workdir:
        base = os.path.join(base, workdir)
    check = _Check(base, home, protected, [base])
    command = tool_input.get("command", tool_input.get("cmd"))
    if tool in _SHELL_TOOLS or (
        tool not in ("apply_patch", *_LISTING_TOOLS) and isinstance(command, str | list)
    ):
        if isinstance(command, list):
            if not all(isinstance(c, str) for c in command):
                raise ValueError("command is not a list of strings")
            words = [str(c) for c in command]
            if len(words) >= 3 and _base(words[0]) in _SHELLS and words[1] in ("-c", "-lc"):
                return _shell(check, words[2])
            return _shell(check, " ".join(_quote(w) for w in words))
        if isinstance(command, str):
            return _shell(check, command)
        raise ValueError("a shell tool without a command")
    if tool == "apply_patch":
        text = command if isinstance(command, str) else tool_input.get("input", "")
        for line in str(text).splitlines():
            m = _PATCH_HEADER.match(line.strip())
            if m:
                hit = check.path(m.group(1) or m.group(2))
                if hit is not None:
                    return hit
        return None
    if tool in _LISTING_TOOLS:
        return None  # they list names; they never open a file
    if tool == "grep_search":
        return guard_search.tool(check, tool_input)
    if tool == "read_many_files":
        for key in ("include", "paths"):
            for text in _strings(tool_input.get(key)):
                hit = check.path(text, glob=True)
                if hit is not None:
                    return hit
        return None
    if tool == "Grep":
        # Claude Code's `path`, the Copilot runtime's `paths`; both take a `glob`.
        for key in ("path", "paths", "glob"):
            for value in _strings(tool_input.get(key)):
                hit = check.path(value, glob=key == "glob" or any(c in value for c in "*?["))
                if hit is not None:
                    return hit
        return None
    for key, value in tool_input.items():
        if key in _FILE_KEYS or tool in ("Read", "Edit", "Write", "MultiEdit", "NotebookEdit"):
            for text in _strings(value):
                hit = check.path(text, glob=key in ("pattern", "glob"))
                if hit is not None:
                    return hit
        else:
            # Other tools (an MCP file server's `read_file`, WebFetch's `file://`): any string
            # that is itself a protected file's name.
            for text in _strings(value):
                hit = check.path(text)
                if hit is not None:
                    return hit
    return None


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def crude(raw: str, protected: Protected) -> str | None:
    """When the event cannot be understood: a protected name anywhere in it, as a token."""
    m = _CRUDE_DOTENV.search(raw)
    if m:
        return m.group(0)
    for name in protected.written_names:
        if re.search(r"(?<![\w.-])" + re.escape(name) + r"(?![\w.-])", raw):
            return name
    return None


def reason(name: str) -> str:
    """The one line the agent reads when a call is blocked."""
    return (
        f"offprompt guard: blocked: this would expose {name}, which holds secrets the model must"
        f" not see. Call the secret_status tool, or run `offprompt keys {name}`, to see which keys"
        " are set instead of reading the file."
    )


# --- the hook ----------------------------------------------------------------------------------


def main(stdin: bytes | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Read one event on stdin; exit 2 with one line on stderr to block, 0 to let it through.
    Cursor and the Copilot runtime also get their JSON answer on stdout.

    Any failure blocks only when the raw event names a protected file (crude check).
    """
    env = os.environ if environ is None else environ
    raw = b""
    protected = Protected()
    dialect = "claude"
    try:
        raw = sys.stdin.buffer.read(MAX_EVENT_BYTES) if stdin is None else stdin
        text = raw.decode("utf-8", "replace")
    except Exception:
        text = ""
    try:
        try:
            protected = Protected(guard_files.journal_files(env))
        except Exception:
            # An unreadable journal must not open the door to the dotenv files.
            protected = Protected()
        event = json.loads(text)
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        dialect = guard_events.dialect(event)
        event = guard_events.normalise(dialect, event)
        home = env.get("HOME") or os.path.expanduser("~")
        hit = decide(event, protected, home)
    except Exception:
        try:
            hit = crude(text, protected)
        except Exception:
            hit = ".env" if ".env" in text else None
    return guard_events.answer(dialect, None if hit is None else reason(hit))
