"""What one file's mask entry says (DESIGN §15): the `extract` pattern whose group 1 is exactly the
bytes of each value offprompt wrote there, and the API hosts its proxy may put them back for; and
the entry that denies the folder holding a masked file's copy while it is written in place.

Pure: text in, JSON-ready data out. Claude Code 2.1.328 compiles `extract` as a JavaScript
`RegExp(extract, "gd")` (no `m`, no `s`: `^` is the file's start only) and replaces the span of
group 1 of every match with a stand-in; a group 1 that is undefined on a match is an error, an
empty one is skipped. tests/agents/mask/test_claude_code_mask.py runs the pattern in node the
same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["deny_entry", "entry", "extract", "held_back", "hosts_for"]

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
    # A line the person commented out (`# KEY=<old value>`, before a rotation) still holds a
    # value offprompt wrote: its `#`s are allowed, so that value is masked too.
    return rf"(?:^|\n)[ \t]*(?:#[ \t]*)*(?:export[ \t]+)?(?:{alternatives})={_VALUE}"


def _own_hosts(name: str) -> frozenset[str]:
    """The API hosts of the provider the registry names for the key `name` (by its conventional
    env name, framework prefixes stripped); none when its provider is unknown."""
    from offprompt.registry import catalog
    from offprompt.registry.resolution import name_candidates

    hit = next(filter(None, map(catalog.by_env_name, name_candidates(name))), None)
    return frozenset(catalog.hosts_for([hit[0].id])) if hit is not None else frozenset()


def hosts_for(names: Iterable[str]) -> list[str]:
    """The hosts every one of `names` may be put back on, sorted: those its own provider and
    each other key's share. Claude Code keeps one entry per path (a second entry for the same
    file replaces the first, measured in 2.1.332) and puts every value an entry captures back on
    every host of that entry, so a host of one key's provider only is left out, and a key whose
    provider is unknown (never put back anywhere) leaves none."""
    sets = [_own_hosts(n) for n in set(names)]
    return sorted(frozenset.intersection(*sets)) if sets else []


def held_back(names: Iterable[str]) -> list[str]:
    """The keys of `names` whose own provider's hosts `hosts_for(names)` leaves out: they reach
    their provider only as stand-ins."""
    shared = set(hosts_for(names))
    return sorted(n for n in set(names) if _own_hosts(n) - shared)


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


def deny_entry(folder: str) -> dict[str, object]:
    """The entry denying `folder` (absolute), where a masked file's new bytes are copied while it
    is written in place: a sandboxed command sees it empty, one already running included
    (measured in 2.1.332, a folder that existed when the command started)."""
    return {"path": folder, "mode": "deny"}
