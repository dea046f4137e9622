"""Where a sink path really points: resolved inside the real project folder, or refused.

Also how a destination is shown to a person (relative to the project, `/` separators).
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from offprompt.errors import ProjectError, RefusedRequest
from offprompt.spec import SinkSpec

__all__ = ["display", "real_project", "resolve_target"]


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
    if sink.kind not in ("dotenv", "file"):
        raise RefusedRequest(f"Unknown sink kind {sink.kind!r}; use 'dotenv' or 'file'.")
    raw = sink.path
    if not raw or "\0" in raw or raw.endswith(("/", os.sep)):
        raise RefusedRequest("The sink path must name a file inside the project.")
    root = real_project(project)
    candidate = Path(raw) if os.path.isabs(raw) else root / raw
    try:
        # realpath resolves each component in turn, so `link/..` means what the kernel means.
        resolved = Path(os.path.realpath(candidate))
    except (OSError, RuntimeError) as e:
        raise RefusedRequest(f"The sink path {raw!r} cannot be resolved: {_why(e)}.") from None
    if resolved.is_symlink():
        raise RefusedRequest(f"The sink path {raw!r} is a symlink loop; name a file.")
    if resolved == root or not resolved.is_relative_to(root):
        raise RefusedRequest(
            f"The sink path {raw!r} leads outside the project folder; name a file inside it."
        )
    parts = resolved.relative_to(root).parts
    if any(p.casefold() == ".git" for p in parts):
        # Git reads config and hooks from there; a secret has no business in it.
        raise RefusedRequest(f"The sink path {raw!r} is inside .git; name another file.")
    if resolved.is_dir():
        raise RefusedRequest(f"The sink path {raw!r} is a folder; name a file inside it.")
    return resolved


def display(root: Path, path: Path) -> str:
    """`path` relative to the (real) project folder, with `/` separators."""
    return str(PurePosixPath(*path.relative_to(root).parts))


def _why(e: BaseException) -> str:
    if isinstance(e, OSError) and e.strerror:
        return e.strerror.lower()
    return "a symlink loop" if isinstance(e, RuntimeError) else type(e).__name__
