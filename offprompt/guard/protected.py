"""What the guard keeps from the model: the dotenv names protected in any folder (the one list
the installers' deny rules are made from), the files the journal says offprompt wrote, and
everything inside offprompt's staging folders (a killed write leaves its value there).

Imports only os and rx, for the hook's speed.
"""

from __future__ import annotations

import os

from offprompt import rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable

__all__ = [
    "DENY_RULES",
    "DOTENV_NAMES",
    "LOCAL_PATTERN",
    "SAMPLES",
    "Protected",
    "glob_hits",
    "in_staging",
    "is_dotenv",
    "is_staging",
]

# The dotenv files Claude Code's deny rules name (DESIGN §14), protected in any folder.
DOTENV_NAMES = (
    ".env",
    ".env.local",
    ".env.development",
    ".env.production",
    ".env.staging",
    ".env.test",
)
LOCAL_PATTERN = ".env.*.local"
# Claude Code's `permissions.deny` rules for those names, in the order init writes them.
DENY_RULES = tuple(
    f"Read(./{name})" for name in (*DOTENV_NAMES[:2], LOCAL_PATTERN, *DOTENV_NAMES[2:])
)
# What sinks.atomic stages a write in (its `_STAGE_NAME`, `_TEMP_NAME`; a test holds the two
# to agree): a folder `.offprompt-<16 hex>` beside the file, holding `<name>.new` and a
# `.gitignore`, and, from earlier versions, a file `.<name>.offprompt-<16 hex>.tmp`. A writer
# killed before its rename leaves the new value in one of them, under a name no rule above
# protects, until the next write there removes it.
# And the keep folder at a masked project's root (walk.KEEP_NAME), holding a masked file's old
# bytes while it is written in place.
_HEX16 = "[0-9a-f]" * 16
_STAGING = (f".offprompt-{_HEX16}", f".?*.offprompt-{_HEX16}.tmp", ".offprompt-keep")
# fnmatch.fnmatchcase of each, compiled as the module loads (so rx's table holds them).
_STAGING_MATCH = tuple(rx.compile(rx.glob(p)).match for p in _STAGING)
# Names a glob is tried against when no such file exists yet (`cat .e*` in an empty folder).
SAMPLES = (*DOTENV_NAMES, ".env.development.local", ".env.production.local", ".env.test.local")


class Protected:
    """What the guard keeps from the model: the dotenv names anywhere, and the files the
    journal says offprompt wrote (absolute, normalised paths)."""

    __slots__ = ("written", "written_names")

    def __init__(self, files: Iterable[str] = ()) -> None:
        self.written = frozenset(os.path.normpath(f) for f in files)
        self.written_names = frozenset(os.path.basename(p) for p in self.written)


def is_dotenv(name: str) -> bool:
    """`name` (a file name, no folder) is one of the protected dotenv names."""
    return name in DOTENV_NAMES or rx.fnmatchcase(name, LOCAL_PATTERN)


def is_staging(name: str) -> bool:
    """`name` (one path component) is a staging folder or an old temporary file of a write."""
    return name.startswith(".") and any(m(name) is not None for m in _STAGING_MATCH)


def in_staging(path: str) -> bool:
    """Some component of `path` is a staging folder or an old temporary file (so the path is,
    or is inside, what a killed write left)."""
    return ".offprompt-" in path and any(is_staging(part) for part in path.split(os.sep))


def glob_hits(pattern: str, options: frozenset[str] = frozenset()) -> str | None:
    """A protected dotenv name the glob `pattern` (a file name, no folder) would match, with
    bash's `options` on (`dotglob`, `nocaseglob`; extglob's `@(…)` groups match anything)."""
    if not pattern.startswith(".") and "dotglob" not in options:
        return None  # like bash, a glob reaches a dotfile only with a leading dot
    if "nocaseglob" in options:
        pattern = pattern.lower()
    for name in SAMPLES:
        if rx.fnmatchcase(name, pattern):
            return name
    return None
