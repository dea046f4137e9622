"""The command `init` writes into agents' configs: one that starts this offprompt for the person.

Agents start servers with their own PATH (a desktop app's can be short), so the command is an
absolute path, except for a uvx run, whose environment is a throwaway cache entry.
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
from pathlib import Path

from offprompt.agents.interface import Machine, ServerCommand

__all__ = ["from_override", "resolve"]


def from_override(command: str, machine: Machine) -> ServerCommand:
    """`--command "…"` split as a shell would; ValueError when it is empty or unbalanced."""
    words = shlex.split(command, posix=machine.platform != "win32")
    if not words:
        raise ValueError("--command is empty")
    return ServerCommand(words[0], tuple(words[1:]))


def _in_uv_cache(prefix: Path, machine: Machine) -> bool:
    """True when this Python is a uvx throwaway environment (it lives in uv's cache)."""
    caches = [machine.env_path("UV_CACHE_DIR")]
    if machine.platform == "win32":
        local = machine.env_path("LOCALAPPDATA") or machine.home / "AppData" / "Local"
        caches.append(local / "uv" / "cache")
    else:
        caches.append((machine.env_path("XDG_CACHE_HOME") or machine.home / ".cache") / "uv")
        caches.append(machine.home / "Library" / "Caches" / "uv")
    for cache in caches:
        if cache is not None and prefix.is_relative_to(cache):
            return True
    # A custom cache folder we were not told about still has uv's layout: …/archive-v0/<hash>.
    parts = prefix.parts
    return any(p.startswith(("archive-v", "environments-v")) for p in parts[-3:-1])


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def resolve(
    machine: Machine,
    *,
    prefix: str = sys.prefix,
    scripts: str | None = None,
    executable: str = sys.executable,
) -> ServerCommand:
    """How an agent should start the offprompt that is running now.

    uvx run → `uvx offprompt serve`; installed → the `offprompt` program by its absolute path,
    preferring the name on PATH when it is this same install (Homebrew's or pipx's stable link
    rather than a versioned folder); otherwise `<this python> -m offprompt serve`.
    """
    if _in_uv_cache(Path(prefix).resolve(), machine):
        uvx = machine.which("uvx")
        return ServerCommand(os.path.abspath(uvx) if uvx else "uvx", ("offprompt", "serve"))
    program = "offprompt.exe" if machine.platform == "win32" else "offprompt"
    scripts_dir = scripts if scripts is not None else sysconfig.get_path("scripts")
    mine = Path(scripts_dir, program) if scripts_dir else None
    if mine is not None and not (mine.is_file() and os.access(mine, os.X_OK)):
        mine = None
    found = machine.which("offprompt")
    on_path = Path(os.path.abspath(found)) if found else None
    if on_path is not None and (mine is None or _same_file(on_path, mine)):
        # Not resolved further: a symlink on PATH survives upgrades, its target may not.
        # (A pyenv shim is a different file from `mine`, so it loses to `mine` here.)
        return ServerCommand(str(on_path), ("serve",))
    if mine is not None:
        return ServerCommand(str(mine), ("serve",))
    return ServerCommand(os.path.abspath(executable), ("-m", "offprompt", "serve"))
