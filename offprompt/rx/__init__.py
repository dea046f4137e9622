"""The guard's regular expressions without importing `re` (issue 45: `re` and the `enum` it
loads cost the hook milliseconds on every tool call, most of a call let through).

`compile` returns the very pattern object `re.compile` makes, built straight from `_sre` with
code `re`'s own compiler made ahead of time: `_table.py` beside it, written by
`python -m offprompt.rx_write --write` from every pattern the guard's modules hand to this
module, for one Python minor version and `_sre.MAGIC`. A pattern not in the table, or another
Python, is compiled by `re` (correct, only slower); tests/guard/test_rx.py fails when the table
is not exactly what the running Python's `re` makes for those patterns. `fnmatchcase` likewise
takes a glob's translation from the table, else from `fnmatch`.
"""

from __future__ import annotations

import _functools  # type: ignore[import-not-found]
import _sre  # type: ignore[import-not-found]
import os
import sys

from offprompt.rx import _table as _rx_table

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Callable, Iterable, Iterator
    from typing import AnyStr

__all__ = [
    "ASCII",
    "DOTALL",
    "IGNORECASE",
    "MULTILINE",
    "CacheInfo",
    "cache",
    "compile",
    "escape",
    "fnmatchcase",
    "fullmatch",
    "glob",
    "iglob",
    "match",
    "search",
    "split",
    "sub",
]

# re.RegexFlag's values (sre_constants' SRE_FLAG_*), as plain ints.
IGNORECASE = 2
MULTILINE = 8
DOTALL = 16
ASCII = 256

# The guard's modules (the bash lexer they share, and the hosts' facts they read), whose
# patterns the table holds.
MODULES = (
    "offprompt.bashlex",
    "offprompt.guard.bash",
    "offprompt.guard.check",
    "offprompt.guard.commands",
    "offprompt.guard.decide",
    "offprompt.guard.disk",
    "offprompt.guard.expand",
    "offprompt.guard.grep",
    "offprompt.guard.hook",
    "offprompt.guard.implied",
    "offprompt.guard.masked",
    "offprompt.guard.programs",
    "offprompt.guard.protected",
    "offprompt.guard.search",
    "offprompt.guard.words",
    "offprompt.hosts.claude_code",
)

_USABLE = _rx_table.MAGIC == _sre.MAGIC and _rx_table.VERSION == sys.version_info[:2]
# What this process compiled, by (pattern, flags); and the patterns the table missed (read by
# the table's writer).
_compiled: dict[tuple[object, int], object] = {}
_globs: dict[str, str] = {}
MISSED: set[tuple[str | bytes, int]] = set()


def compile(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, from the table when it holds `pattern`."""
    key = (pattern, flags)
    done = _compiled.get(key)
    if done is None:
        entry = _rx_table.PATTERNS.get(key) if _USABLE else None
        if entry is None:
            MISSED.add(key)
            import re

            done = re.compile(pattern, flags)
        else:
            code, all_flags, groups, groupindex, indexgroup = entry
            done = _sre.compile(pattern, all_flags, list(code), groups, groupindex, indexgroup)
        _compiled[key] = done
    return done  # type: ignore[return-value]


def search(pattern: AnyStr, string: AnyStr, flags: int = 0) -> re.Match[AnyStr] | None:
    """`re.search`."""
    return compile(pattern, flags).search(string)


def match(pattern: AnyStr, string: AnyStr, flags: int = 0) -> re.Match[AnyStr] | None:
    """`re.match`."""
    return compile(pattern, flags).match(string)


def fullmatch(pattern: AnyStr, string: AnyStr, flags: int = 0) -> re.Match[AnyStr] | None:
    """`re.fullmatch`."""
    return compile(pattern, flags).fullmatch(string)


def sub(
    pattern: AnyStr,
    repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr],
    string: AnyStr,
    count: int = 0,
    flags: int = 0,
) -> AnyStr:
    """`re.sub` (a template with a backslash makes `_sre` load `re` to read it)."""
    return compile(pattern, flags).sub(repl, string, count)


def split(pattern: AnyStr, string: AnyStr, maxsplit: int = 0, flags: int = 0) -> list[AnyStr]:
    """`re.split`."""
    return compile(pattern, flags).split(string, maxsplit)


# re.escape's table (3.7+): the characters special in a pattern, each after a backslash.
_SPECIAL = {i: "\\" + chr(i) for i in b"()[]{}?*+-|^$\\.&~# \t\n\r\v\f"}


def escape(pattern: str) -> str:
    """`re.escape` of a str."""
    return pattern.translate(_SPECIAL)


def glob(pattern: str) -> str:
    """`fnmatch.translate(pattern)`, from the table when it holds `pattern`."""
    done = _globs.get(pattern)
    if done is None:
        done = _rx_table.GLOBS.get(pattern) if _USABLE else None
        if done is None:
            MISSED.add((pattern, -1))
            import fnmatch

            done = fnmatch.translate(pattern)
        _globs[pattern] = done
    return done


def _literal(pattern: str) -> bool:
    """`pattern` is a glob of no wildcard: no `*` or `?`, and every `[` without a `]` after it,
    which fnmatch (and glob) read as the character itself."""
    return "*" not in pattern and "?" not in pattern and "]" not in pattern


def fnmatchcase(name: str, pattern: str) -> bool:
    """`fnmatch.fnmatchcase(name, pattern)`."""
    if _literal(pattern):
        return name == pattern  # what fnmatch.translate makes of it matches it alone
    return compile(glob(pattern)).match(name) is not None


def iglob(pattern: str, *, recursive: bool = False, include_hidden: bool = False) -> Iterator[str]:
    """`glob.iglob(pattern, recursive=…, include_hidden=…)`; without loading glob (and re) for a
    pattern whose `[`s are all literal (a fragment of code: `d["name"]`), which glob finds
    as it finds any name: by listing the folder that would hold it (tests/guard/test_rx.py
    holds the two alike)."""
    if not _literal(pattern) or not pattern or pattern.startswith("**"):
        import glob

        return glob.iglob(pattern, recursive=recursive, include_hidden=include_hidden)
    return _literal_glob(pattern, False)


def _literal_glob(pathname: str, dironly: bool) -> Iterator[str]:
    """glob._iglob for a pattern `_literal` says has no wildcard (a `[` is its only magic)."""
    dirname, basename = os.path.split(pathname)
    if "[" not in pathname:
        if os.path.lexists(pathname) if basename else os.path.isdir(dirname):
            yield pathname
        return
    if not dirname:
        yield from _listed("", basename, dironly)
        return
    if dirname != pathname and "[" in dirname:
        dirs: Iterable[str] = _literal_glob(dirname, True)
    else:
        dirs = [dirname]
    for folder in dirs:
        if "[" in basename:
            names = _listed(folder, basename, dironly)
        elif basename:
            names = [basename] if os.path.lexists(os.path.join(folder, basename)) else []
        else:
            names = [basename] if os.path.isdir(folder) else []
        for name in names:
            yield os.path.join(folder, name)


def _listed(folder: str, name: str, dironly: bool) -> list[str]:
    """glob._glob1 for a literal `name`: [name] when listing `folder` shows it (a folder, when
    `dironly`), else []. Hidden names need no filter: one equal to `name` is hidden only when
    `name` is, and glob then keeps it."""
    try:
        with os.scandir(folder or os.curdir) as entries:
            for entry in entries:
                try:
                    if entry.name == name and (not dironly or entry.is_dir()):
                        return [name]
                except OSError:
                    pass
    except OSError:
        pass
    return []


class CacheInfo:
    """What `cache_info()` of a `cache` function says (functools' CacheInfo, less the tuple)."""

    __slots__ = ("currsize", "hits", "maxsize", "misses")

    def __init__(self, hits: int, misses: int, maxsize: int | None, currsize: int) -> None:
        self.hits, self.misses, self.maxsize, self.currsize = hits, misses, maxsize, currsize


def cache(function: Callable[[], re.Pattern[AnyStr]]) -> Callable[[], re.Pattern[AnyStr]]:
    """`functools.cache` for a function that compiles a pattern on first use, from functools'
    C half: its Python half loads `collections`, a millisecond or more of the hook's start."""
    wrapper = _functools._lru_cache_wrapper(function, None, False, CacheInfo)
    wrapper.__wrapped__ = function
    wrapper.__name__, wrapper.__qualname__ = function.__name__, function.__qualname__
    wrapper.__doc__ = function.__doc__
    return wrapper  # type: ignore[no-any-return]
