"""The one way offprompt touches a disk (DESIGN §2): why an OS call failed, in words a person reads;
how a temporary name is cut to fit beside its file; making a rename durable. Imports nothing of
offprompt: its submodules walk a project by descriptors and run git.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from types import MappingProxyType

# The guard's hook loads this package when it asks git (disk.git): pathlib, secrets and typing
# would add milliseconds to that call, so they load where used, or only for the type checker.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Final

__all__ = ["config_temp_name", "fsync_directory", "name_prefix", "reason", "remove_file"]

_REASONS: Final = MappingProxyType(
    {
        errno.ENOSPC: "the disk is full",
        errno.EDQUOT: "the disk quota is exceeded",
        errno.EROFS: "the file system is read-only",
        errno.EACCES: "permission denied",
        errno.EPERM: "the operation is not permitted (is the file or its folder immutable?)",
        errno.ENOTDIR: "a part of the path is a file, not a folder",
        errno.EISDIR: "the path is a folder",
        errno.ELOOP: "too many symlinks",
    }
)
_NO_OVERRIDES: Final[Mapping[int, str]] = MappingProxyType({})


def reason(e: OSError, overrides: Mapping[int, str] = _NO_OVERRIDES) -> str:
    """A person-readable cause for `e`, without any path or value.

    `overrides` words an errno the way the caller's own calls mean it (a writer that opens with
    O_NOFOLLOW reads ELOOP as "it is a symlink", not "too many symlinks").
    """
    code = e.errno or 0
    return overrides.get(code) or _REASONS.get(code) or (e.strerror or type(e).__name__).lower()


def name_prefix(name: str) -> str:
    """The first 64 bytes of `name` (a cut inside a character stays those bytes on disk), so a
    temporary name built from it fits NAME_MAX, 255 bytes, whatever the file's own name."""
    return os.fsdecode(os.fsencode(name)[:64])


def config_temp_name(name: str) -> str:
    """A fresh temporary name beside the config file `name`: `.<name>.offprompt-config-<hex>.tmp`.

    Not the sinks' `.offprompt-<hex>` staging folder nor their old `.<name>.offprompt-<hex>.tmp`
    files: a .env write beside a config removes those as left by a killed writer.
    """
    import secrets

    return f".{name_prefix(name)}.offprompt-config-{secrets.token_hex(8)}.tmp"


def fsync_directory(directory: Path) -> None:
    """Make a rename or unlink in `directory` durable. Best effort: the change is already made,
    so a file system that cannot fsync a folder is no reason to report failure."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(directory, flags)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def remove_file(path: str | os.PathLike[str]) -> bool:
    """Remove the file `path` offprompt made (a link is removed, never followed); best effort:
    False when it was not there or could not be removed. Here, not in disk.paths, so the
    guard's hook, which removes its start marker, loads nothing more."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True
