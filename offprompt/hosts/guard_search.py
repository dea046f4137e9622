"""Searches that open every file under a folder (DESIGN §14: a read of a protected file by a
tool given the folder, not the file): the hosts' search tools (Gemini CLI's and VS Code's
`grep_search`, a folder Windsurf reads whole), and recursive `grep`/`rg` in a shell command.

A search is blocked when a protected file under its folder is one it would open: for the tools
and `rg`, one git does not ignore there (they skip what .gitignore names; `rg` also skips hidden
files unless told not to); for `grep -r`, every one its `--include`/`--exclude` filters let in.
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Mapping

from offprompt.hosts import guard, guard_files, shellscan

# Annotations name guard._Check and shellscan.Word; never evaluated (no typing at run time).

__all__ = ["shell", "tool"]

# A search tool's file filter: Gemini CLI's `include_pattern` (`include` before), VS Code's.
_INCLUDE_KEYS = ("include_pattern", "include", "includePattern")
# grep's short options that take an argument: the rest of their cluster is that argument.
_GREP_ARGUMENT = frozenset("efmABCdD")


def tool(check: guard._Check, tool_input: Mapping[str, object]) -> str | None:
    """Gemini CLI's `grep_search` (and VS Code's, and a folder Windsurf reads whole) opens every
    file under its folder (`dir_path`, else the cwd) that git does not ignore (`git grep
    --untracked`, or a search that reads .gitignore), or every file with `no_ignore`. Blocks
    when a protected file is among them."""
    include = next((v for k in _INCLUDE_KEYS if (v := tool_input.get(k)) is not None), None)
    path = tool_input.get("path")
    if isinstance(path, str) and path:
        check.cwd = os.path.join(check.cwd, path)  # the older `path` argument
    hit = check.path(check.cwd)
    if hit is not None:
        return hit  # a dotenv file given as the folder
    root = os.path.normpath(check.cwd)
    found = _under(check, root)
    if isinstance(include, str):
        found = [f for f in found if guard_files.included(f, root, include)]
    if found and tool_input.get("no_ignore") is not True:
        found = guard_files.not_ignored(root, found)
    if not found:
        return None
    return os.path.relpath(found[0], check.cwd)


def _under(check: guard._Check, root: str) -> list[str]:
    """The protected files under `root`: the dotenv files the look finds, then the journal's."""
    found = guard_files.dotenv_under(root, guard.is_dotenv)
    return found + sorted(
        p for p in check.protected.written if p.startswith(root + os.sep) and p not in found
    )


def shell(check: guard._Check, program: str, args: list[shellscan.Word]) -> str | None:
    """A protected file that `grep -r …` or `rg …` (recursive by nature) would open under a
    folder it is given (or the current one), or None."""
    if program not in ("grep", "egrep", "fgrep", "rg"):
        return None
    options = _options(args)
    if options is None:
        return None
    recursive, includes, excludes, excluded_dirs, hidden, no_ignore, operands = options
    if program != "rg" and not recursive:
        return None
    folder = check.dirs[-1]  # after any `cd` earlier in the command
    given: list[shellscan.Word | None] = [*operands] or [None]  # none: the current folder
    for word in given:
        if word is not None and (word.dynamic or word.glob):
            continue
        name = os.path.expanduser(word.text) if word is not None else "."
        root = os.path.normpath(os.path.join(folder, name))
        if not os.path.isdir(root):
            continue
        found = [
            f
            for f in _under(check, root)
            if _lets_in(f, root, includes, excludes, excluded_dirs)
            and (program != "rg" or hidden or not _hidden(f, root))
        ]
        if program == "rg" and found and not no_ignore:
            found = guard_files.not_ignored(root, found)
        if found:
            return os.path.relpath(found[0], check.cwd)
    return None


Options = tuple[bool, list[str], list[str], list[str], bool, bool, list[shellscan.Word]]


def _options(args: list[shellscan.Word]) -> Options | None:
    """grep's and rg's options that decide what a recursive search opens, and the operands
    after the pattern; None when a word is only known at run time."""
    recursive = hidden = no_ignore = False
    includes: list[str] = []
    excludes: list[str] = []
    excluded_dirs: list[str] = []
    operands: list[shellscan.Word] = []
    pattern_given = False
    i = 0
    while i < len(args):
        text = args[i].text
        value = args[i + 1].text if i + 1 < len(args) else ""
        long, _, attached = text.partition("=")
        taken = 0 if attached or "=" in text else 1
        if text == "--":
            operands.extend(args[i + 1 :])
            break
        if long in ("--include", "--exclude", "--exclude-dir", "--glob", "--regexp", "--file"):
            given = attached if "=" in text else value
            if long == "--include":
                includes.append(given)
            elif long == "--exclude":
                excludes.append(given)
            elif long == "--exclude-dir":
                excluded_dirs.append(given)
            elif long == "--glob":
                _glob(given, includes, excludes, excluded_dirs)
            else:
                pattern_given = True
            i += 1 + taken
            continue
        if text in ("-r", "-R", "--recursive", "--dereference-recursive"):
            recursive = True
        elif text in ("--hidden", "-."):
            hidden = True
        elif text in ("--no-ignore", "-u"):
            no_ignore = True
        elif text in ("-uu", "-uuu"):
            hidden = no_ignore = True
        elif text in ("-g", "-e", "-f"):
            if text == "-g":
                _glob(value, includes, excludes, excluded_dirs)
            else:
                pattern_given = True
            i += 2
            continue
        elif text.startswith("-") and not text.startswith("--") and len(text) > 1:
            for j, c in enumerate(text[1:]):
                if c in "rR":
                    recursive = True
                if c in _GREP_ARGUMENT:
                    if c in "ef":
                        pattern_given = True
                    if c == "d" and (text[j + 2 :] or value) == "recurse":
                        recursive = True
                    if j + 2 == len(text):
                        i += 1  # its argument is the next word
                    break
        elif not text.startswith("-"):
            operands.append(args[i])
        i += 1
    if any(a.dynamic for a in args if a.text.startswith("-")):
        return None
    if not pattern_given:
        operands = operands[1:]
    return recursive, includes, excludes, excluded_dirs, hidden, no_ignore, operands


def _glob(given: str, includes: list[str], excludes: list[str], dirs: list[str]) -> None:
    """rg's `-g GLOB` lets in what it matches; `-g '!GLOB'` leaves out files and folders."""
    if given.startswith("!"):
        excludes.append(given[1:])
        dirs.append(given[1:])
    else:
        includes.append(given)


def _lets_in(
    path: str, root: str, includes: list[str], excludes: list[str], dirs: list[str]
) -> bool:
    name = os.path.basename(path)
    if includes and not any(fnmatch.fnmatchcase(name, g) for g in includes):
        return False
    if any(fnmatch.fnmatchcase(name, g) for g in excludes):
        return False
    parts = os.path.relpath(path, root).split(os.sep)[:-1]
    return not any(fnmatch.fnmatchcase(part, g) for part in parts for g in dirs)


def _hidden(path: str, root: str) -> bool:
    return any(part.startswith(".") for part in os.path.relpath(path, root).split(os.sep))
