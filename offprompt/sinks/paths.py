"""Where a sink path really points: resolved inside the real project folder, or refused.

Also how a destination is shown to a person (relative to the project, `/` separators).
"""

from __future__ import annotations

import os
import unicodedata
from pathlib import Path, PurePosixPath

from offprompt.errors import ProjectError, RefusedRequest
from offprompt.sinks import atomic
from offprompt.spec import SinkSpec

__all__ = ["display", "display_of", "real_project", "resolve_target"]

# What POSIX guarantees and Linux has (NAME_MAX, PATH_MAX); `os.pathconf` says more where it can.
_NAME_MAX = 255
_PATH_MAX = 4096
# The longest temporary-file name `atomic.replace` puts beside the target, in bytes.
TEMP_NAME_BYTES = 96  # `.offprompt-<16 hex>/<64 bytes of the name>.new`, as sinks.atomic stages it


def real_project(project: Path) -> Path:
    """The project folder with every symlink resolved; ProjectError if it is not a folder."""
    try:
        real = Path(os.path.realpath(project, strict=True))
    except (OSError, RuntimeError) as e:
        raise ProjectError(f"The project folder {project} cannot be used: {_why(e)}.") from None
    if not real.is_dir():
        raise ProjectError(f"The project path {project} is not a folder.")
    return real


def resolve_target(project: Path, sink: SinkSpec) -> Path:
    """The absolute, symlink-free path `sink` writes to; RefusedRequest if it leaves the project.

    Refused: an empty path, a path ending in `/`, one that resolves (through `..` or symlinks)
    outside the project or to the project itself, one inside `.git`, and an existing folder.
    """
    raw = sink.path
    if not raw or raw.endswith(("/", os.sep)):
        raise RefusedRequest("The sink path must name a file inside the project.")
    _check_text(raw)
    root = real_project(project)
    _check_lengths(root, raw)
    candidate = Path(raw) if os.path.isabs(raw) else root / raw
    try:
        # realpath resolves each component in turn, so `link/..` means what the kernel means.
        resolved = Path(os.path.realpath(candidate))
    except (OSError, RuntimeError) as e:
        raise RefusedRequest(f"The sink path {raw!r} cannot be resolved: {_why(e)}.") from None
    _check_lengths(root, str(resolved))
    if resolved.is_symlink():
        raise RefusedRequest(f"The sink path {raw!r} is a symlink loop; name a file.")
    if resolved == root or not resolved.is_relative_to(root):
        raise RefusedRequest(
            f"The sink path {raw!r} leads outside the project folder; name a file inside it."
        )
    parts = resolved.relative_to(root).parts
    if not all(_is_utf8(part) for part in parts):
        # A symlink inside the project may lead to a name that is not UTF-8 text.
        raise RefusedRequest(
            f"The sink path {raw!r} leads to a file name that is not UTF-8 text; name another."
        )
    if any(p.casefold() == ".git" for p in parts):
        # Git reads config and hooks from there; a secret has no business in it.
        raise RefusedRequest(f"The sink path {raw!r} is inside .git; name another file.")
    if atomic.is_staged(candidate) or atomic.is_staged(resolved):
        # A killed write's leftover: reading it could show a value, writing there loses it.
        raise RefusedRequest(f"The sink path {raw!r} {atomic.STAGED_REFUSAL}; name another file.")
    if resolved.is_dir():
        raise RefusedRequest(f"The sink path {raw!r} is a folder; name a file inside it.")
    return resolved


def _check_text(raw: str) -> None:
    """Refuse a path no result, page or log line can show as it is."""
    if not _is_utf8(raw):
        # From a command line, bytes that are not UTF-8 arrive as lone surrogates.
        raise RefusedRequest("The sink path must be UTF-8 text; name the file in plain text.")
    if any(unicodedata.category(ch) == "Cc" for ch in raw):
        raise RefusedRequest(
            "The sink path must not contain control characters (NUL, a line break, a tab...); "
            "name the file in plain text."
        )


def _check_lengths(root: Path, path: str) -> None:
    """Refuse a path the file system cannot hold, before a page asks for values for it.

    Every part must fit NAME_MAX, and the whole, with the temporary file written beside the
    target, PATH_MAX; otherwise every write would fail with "file name too long".
    """
    name_max, path_max = _limits(root)
    for part in PurePosixPath(path.replace(os.sep, "/")).parts:
        if len(os.fsencode(part)) > name_max:
            raise RefusedRequest(
                f"The sink path has a part longer than {name_max} bytes, more than a file "
                "system allows in one name; use a shorter name."
            )
    full = path if os.path.isabs(path) else os.path.join(root, path)
    parent = os.path.dirname(full)
    longest = max(len(os.fsencode(full)), len(os.fsencode(parent)) + 1 + TEMP_NAME_BYTES)
    if longest >= path_max:
        raise RefusedRequest(
            f"The sink path is too long: with the project folder it passes the {path_max} bytes "
            "a file system allows in a path; use a shorter one."
        )


def _limits(root: Path) -> tuple[int, int]:
    try:
        name_max = os.pathconf(root, "PC_NAME_MAX")
        path_max = os.pathconf(root, "PC_PATH_MAX")
    except (OSError, ValueError, AttributeError):  # AttributeError: no pathconf (Windows)
        return _NAME_MAX, _PATH_MAX
    return (
        name_max if 0 < name_max <= _NAME_MAX else _NAME_MAX,
        path_max if 0 < path_max <= _PATH_MAX else _PATH_MAX,
    )


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_of(project: Path, sink: SinkSpec) -> str:
    """Where `sink` writes, as results show it; RefusedRequest as for `resolve_target`."""
    target = resolve_target(project, sink)
    return display(real_project(project), target)


def display(root: Path, path: Path) -> str:
    """`path` relative to the (real) project folder, with `/` separators."""
    return str(PurePosixPath(*path.relative_to(root).parts))


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror.lower()
    return "a symlink loop" if isinstance(e, RuntimeError) else type(e).__name__
