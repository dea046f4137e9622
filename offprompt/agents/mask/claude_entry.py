"""What one file's mask entry says (DESIGN §15): the `extract` pattern whose group 1 is exactly the
bytes of each value offprompt wrote there, and the API hosts its proxy may put them back for.

Pure: text in, JSON-ready data out. Claude Code 2.1.328 compiles `extract` as a JavaScript
`RegExp(extract, "gd")` (no `m`, no `s`: `^` is the file's start only) and replaces the span of
group 1 of every match with a stand-in; a group 1 that is undefined on a match is an error, an
empty one is skipped. tests/agents/mask/test_claude_code_mask.py runs the pattern in node the
same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["entry", "extract", "hosts_for"]

# offprompt writes a key as `NAME=` then the value bare (`[A-Za-z0-9_@%+=:,./-]+`), in single
# quotes (no `'` inside) or in double quotes (no `"`, `$`, `` ` ``, `\` inside): dotenv_quoting.
# So between the quotes the bytes are the value, and a bare value is a run of non-blanks.
# The one group is the value in each form, told apart by what precedes it (lookbehind), so it is
# defined on every match. A key's own `export ` and indent, which an upsert keeps, are allowed.
_VALUE = r"""(?:'(?=[^']*')|"(?=[^"]*")|(?=[^'"\s]))((?<=')[^']*|(?<=")[^"]*|(?<==)[^\s'"]+)"""
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")


def extract(names: Iterable[str]) -> str:
    """The pattern for a dotenv file offprompt wrote `names` in. Names only, never a value.
    ValueError for a name that is not a dotenv key offprompt writes."""
    chosen = sorted(set(names))
    if not chosen:
        raise ValueError("a mask entry needs at least one key name")
    for name in chosen:
        if not _NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not a key name offprompt writes")
    # `.` and `-` are the only characters of a key that mean something in a pattern.
    alternatives = "|".join(n.replace(".", r"\.").replace("-", r"\-") for n in chosen)
    return rf"(?:^|\n)[ \t]*(?:export[ \t]+)?(?:{alternatives})={_VALUE}"


def hosts_for(names: Iterable[str]) -> list[str]:
    """The API hosts of the providers the registry names for `names` (by their conventional env
    name, framework prefixes stripped), sorted; none for a key whose provider is unknown (its
    stand-in is never swapped back)."""
    from offprompt.registry import catalog
    from offprompt.registry.resolution import name_candidates

    ids = []
    for name in names:
        hit = next(filter(None, map(catalog.by_env_name, name_candidates(name))), None)
        if hit is not None:
            ids.append(hit[0].id)
    return sorted(catalog.hosts_for(ids))


def entry(path: str, names: Iterable[str] | None, hosts: Iterable[str]) -> dict[str, object]:
    """One `sandbox.credentials.files` entry: `names` the keys offprompt wrote in the dotenv
    file at `path` (absolute), or None for a file sink's file, masked whole (no `extract`).
    A pattern that matches nothing makes the file unreadable (`onExtractNoMatch: deny`)."""
    out: dict[str, object] = {"path": path, "mode": "mask"}
    if names is not None:
        out["extract"] = extract(names)
    out["injectHosts"] = sorted(set(hosts))
    if names is not None:
        out["onExtractNoMatch"] = "deny"
    return out
