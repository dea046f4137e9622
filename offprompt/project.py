"""Finding the project folder the values belong to (DESIGN §8).

The server's working directory, unless it is $HOME, / or not a folder offprompt may write in;
then CLAUDE_PROJECT_DIR, the host's roots or workspace folders. Never anything the model wrote.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import unquote, urlparse

from offprompt.errors import ProjectError

HOW_TO = (
    "offprompt could not tell which project folder to write to (the server runs in {cwd}). "
    "Stop and tell the person to start the offprompt MCP server with its working directory set "
    "to the project (for example `cwd` in the agent's MCP config, or run the agent from the "
    "project folder)."
)


def usable(path: Path) -> bool:
    """A folder that can be a project: exists, is a directory, not $HOME and not /."""
    try:
        resolved = path.resolve()
        # A host's hint may hold NUL or text that is no file name (ValueError covers both).
        os.fsencode(resolved)
    except (OSError, ValueError):
        return False
    if not resolved.is_dir() or resolved == Path(resolved.anchor):
        return False
    home = os.environ.get("HOME")
    if home:
        try:
            if resolved == Path(home).resolve():
                return False
        except OSError:
            pass
    return os.access(resolved, os.W_OK | os.X_OK)


def _from_uri(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if not parsed.scheme and uri.startswith("/"):
        return Path(uri)
    return None


def _workspace_paths(value: object) -> list[Path]:
    """Read a host's workspace list loosely: a path, a file URI, JSON, or a separated list."""
    if isinstance(value, list):
        return [p for item in value for p in _workspace_paths(item)]
    if isinstance(value, dict):
        for key in ("uri", "path", "fsPath"):
            if isinstance(value.get(key), str):
                return _workspace_paths(value[key])
        return []
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    if text.startswith("["):
        try:
            return _workspace_paths(json.loads(text))
        except ValueError:
            return []
    parts = text.split(os.pathsep) if os.pathsep in text and "://" not in text else [text]
    found = []
    for part in parts:
        path = _from_uri(part.strip()) if "://" in part else Path(part.strip())
        if path is not None and str(path):
            found.append(path)
    return found


def candidates(
    *,
    cwd: Path,
    env: Mapping[str, str],
    roots: Iterable[str] = (),
    meta: Mapping[str, object] | None = None,
) -> list[Path]:
    """Every place the project may be, best first."""
    found: list[Path] = [cwd]
    if env.get("CLAUDE_PROJECT_DIR"):
        found.append(Path(env["CLAUDE_PROJECT_DIR"]))
    for uri in roots:
        path = _from_uri(uri)
        if path is not None:
            found.append(path)
    found += _workspace_paths(env.get("WORKSPACE_FOLDER_PATHS", ""))
    for key, value in (meta or {}).items():
        if "workspace" in key.lower() or key.lower().endswith("roots"):
            found += _workspace_paths(value)
    return found


def choose(paths: Iterable[Path], cwd: Path) -> Path:
    """The first usable candidate, resolved; ProjectError with what to do otherwise."""
    for path in paths:
        if usable(path):
            return path.resolve()
    raise ProjectError(HOW_TO.format(cwd=cwd))
