"""DESIGN §14's masked project: the files a command sees only as stand-ins, because it runs in
its host's sandbox in a session started in a project `init --mask` masked (the record beside
the journal, §15).

The record is offprompt's own (guard/disk.py reads it); whether the command runs in the
sandbox, and what the host's settings mask, is the host's to say (`offprompt.hosts`: a host
with a `sandbox`, Claude Code's today; the hook asks it). This module says which of a masked
project's files the sandbox shows whole as stand-ins; the hook loads it only for a command in a
masked project. Whatever cannot be read is taken as unmasked (the guard blocks). A host without
a sandbox (Codex, whose event does not say whether its command runs sandboxed) gets the empty
set: the guard keeps blocking.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping

from offprompt import hosts, rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = ["covered", "files_covered"]


def covered(project: object, environ: Mapping[str, str]) -> frozenset[str]:
    """The files (absolute, real paths) of one masked project (its value in the record's
    `projects`) whose every value a host's sandbox shows as a stand-in."""
    masked: frozenset[str] = frozenset()
    for host in hosts.HOSTS:
        sandbox = host.get("sandbox")
        if sandbox is not None:
            masked |= sandbox["masked_files"](environ)
    return files_covered(project, masked)


def files_covered(project: object, masked: frozenset[str]) -> frozenset[str]:
    """The files of one masked project among `masked` (the real paths a host's settings show
    as stand-ins) every value of which offprompt wrote."""
    files = project.get("files") if isinstance(project, dict) else None
    if not isinstance(files, dict):
        return frozenset()
    # Only what the host's settings still mask: a file whose entry a failed write never added,
    # or the person took out, is read in clear. And only a file every value of which the mask
    # hides: a key offprompt did not write there is outside the entry's `extract`, so the
    # sandbox shows it as it is.
    return frozenset(
        real
        for path, names in files.items()
        if (real := os.path.realpath(path)) in masked and _all_masked(real, names)
    )


# A dotenv line that assigns a name (as python-dotenv, bash and Node read one), a comment or a
# blank line; any other line could be a value offprompt did not write, so the file is not left
# to the mask. Compiled on first use: `agents` loads this module for every project it looks at.
@rx.cache
def _assigns() -> re.Pattern[bytes]:
    return rx.compile(rb"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=")


@rx.cache
def _quiet() -> re.Pattern[bytes]:
    return rx.compile(rb"[ \t]*(?:#.*)?")


_MOST = 1 << 20


def _all_masked(path: str, names: object) -> bool:
    """Whether every value in `path` is one offprompt wrote there (`names`; None: a file sink,
    masked whole). A file that cannot be read, is large, or holds another line: False."""
    if names is None:
        return True
    if not isinstance(names, list):
        return False
    try:
        with open(path, "rb") as f:
            data = f.read(_MOST + 1)
    except OSError:
        return False
    if len(data) > _MOST:
        return False
    mine = {n.encode() for n in names if isinstance(n, str)}
    assigns, quiet = _assigns(), _quiet()
    for line in data.splitlines():
        found = assigns.match(line)
        if found is not None:
            if found.group(1) not in mine:
                return False
        elif not quiet.fullmatch(line):
            return False
    return True
