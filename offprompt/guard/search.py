"""Searches that open every file under a folder (DESIGN §14: a read of a protected file by a
tool given the folder, not the file): the hosts' search tools (Gemini CLI's and VS Code's
`grep_search`, a folder Windsurf reads whole), and recursive `grep`/`rg` in a shell command.

A search is blocked when a protected file under its folder is one it would open: for the tools
and `rg`, one git does not ignore there (they skip what .gitignore names; `rg` also skips hidden
files unless told not to); for `grep -r`, every one its `--include`/`--exclude` filters let in.
"""

from __future__ import annotations

import os

from offprompt import rx
from offprompt.guard import disk, expand
from offprompt.guard.bash import Word
from offprompt.guard.check import GLOB_LOOKS, UNCHECKED, Check, expand_glob
from offprompt.guard.protected import in_staging, is_dotenv, is_staging

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

    from offprompt.guard.grep import GrepArgs

__all__ = ["MAX_FILTERS", "SEARCH_LOOKS", "folders", "shell", "tool", "under"]

# What one recursive search in a shell command takes from the event's look budget (check.BUDGET):
# it walks a folder tree and may ask git, so `rg x; rg x; …` many times over is blocked
# (checked no further) past BUDGET // SEARCH_LOOKS searches, not walked each time.
SEARCH_LOOKS = 1024
# More `--include`/`--exclude`/`--exclude-dir` filters than this in one search: each file found
# is matched against every one (30,000 took 0.8 s for 30 files), so the search is blocked.
MAX_FILTERS = 256

# A search tool's file filter: Gemini CLI's `include_pattern` (`include` before), VS Code's.
_INCLUDE_KEYS = ("include_pattern", "include", "includePattern")


def tool(check: Check, tool_input: Mapping[str, object]) -> str | None:
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
    found = under(check, root)
    if isinstance(include, str):
        found = [f for f in found if disk.included(f, root, include)]
    if found and tool_input.get("no_ignore") is not True:
        found = disk.not_ignored(root, found)
    if not found:
        return None
    return os.path.relpath(found[0], check.cwd)


def under(check: Check, root: str) -> list[str]:
    """The protected files under `root`: the dotenv and staged files the look finds, then the
    journal's."""
    # A search starts inside what its folder leads to: a link to a staging folder is one.
    staged = in_staging(os.path.realpath(root))
    found = disk.dotenv_under(root, is_dotenv, is_staging, staged=staged, linked=check.linked())
    return found + sorted(
        p for p in check.protected.written if p.startswith(root + os.sep) and p not in found
    )


def shell(check: Check, program: str, args: GrepArgs) -> str | None:
    """A protected file that `grep -r …` or `rg …` (recursive by nature) would open under a
    folder it is given (or the current one), or None. `args`: the words after the program."""
    if program not in ("grep", "egrep", "fgrep", "rg") or args.dynamic:
        return None
    if program != "rg" and not args.recursive:
        return None
    if len(args.includes) + len(args.excludes) + len(args.excluded_dirs) > MAX_FILTERS:
        return UNCHECKED
    roots = folders(check, [*args.operands] or [Word(".")])  # none: the current folder
    if roots is None:
        return UNCHECKED
    for root in roots:
        if not os.path.isdir(root):
            continue
        if not check.spend(SEARCH_LOOKS):
            return UNCHECKED
        found = [
            f
            for f in under(check, root)
            if _lets_in(f, root, args.includes, args.excludes, args.excluded_dirs)
            and (program != "rg" or args.hidden or not _hidden(f, root))
        ]
        if program == "rg" and found and not args.no_ignore:
            found = disk.not_ignored(root, found)
        if found:
            return os.path.relpath(found[0], check.cwd)
    return None


def folders(check: Check, words: list[Word]) -> list[str] | None:
    """The paths `words` (a search's or an archive's operands) name, as bash expands them:
    each brace variant, a variable's values, a part it cannot know taken as empty
    (`${UNSET}sub`), a glob's matches (`*/`). None when that is past the caps."""
    folder = check.dirs[-1]  # after any `cd` earlier in the command
    roots: list[str] = []
    for word in words:
        try:
            patterns = expand.variants(word.pat) if word.braced else [word.pat]
        except expand.TooMany:
            return None
        if len(patterns) > 1:
            # `d=src; grep -r KEY $d`: what d held before the command is not a folder to try.
            patterns = [p for p in patterns if p.strip(expand.UNKNOWN)] or patterns
        for pattern in patterns:
            text, glob, _ = expand.literal(pattern)
            name = os.path.expanduser(text.replace("\0", ""))
            root = os.path.normpath(os.path.join(folder, name))
            if glob:
                # `grep -r KEY */` or `*`: each folder the glob matches is searched.
                if not check.spend(GLOB_LOOKS[0]):
                    return None
                roots.extend(expand_glob(root, check.globs))
            else:
                roots.append(root)
    return roots


def _lets_in(
    path: str, root: str, includes: list[str], excludes: list[str], dirs: list[str]
) -> bool:
    name = os.path.basename(path)
    if includes and not any(rx.fnmatchcase(name, g) for g in includes):
        return False
    if any(rx.fnmatchcase(name, g) for g in excludes):
        return False
    parts = os.path.relpath(path, root).split(os.sep)[:-1]
    return not any(rx.fnmatchcase(part, g) for part in parts for g in dirs)


def _hidden(path: str, root: str) -> bool:
    return any(part.startswith(".") for part in os.path.relpath(path, root).split(os.sep))
