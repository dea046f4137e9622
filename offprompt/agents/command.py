"""The command `init` writes into agents' configs: one that starts this offprompt for the person,
or, for a team's shared files (`--shared`), one that starts it on every teammate's machine.

Agents start servers with their own PATH (a desktop app's can be short), so the personal command
is an absolute path, except for a uvx run, whose environment is a throwaway cache entry: that one
is `uvx [--from SOURCE] offprompt serve`, SOURCE read from the install's PEP 610 record.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
import sysconfig
from pathlib import Path
from urllib.parse import unquote, urlsplit

from offprompt.agents.interface import Machine, ServerCommand

__all__ = [
    "fetched_each_run",
    "from_override",
    "from_source",
    "inside_project",
    "install_source",
    "not_portable",
    "portable",
    "resolve",
    "shareable_source",
    "uvx_source",
]


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

    uvx run → `uvx [--from SOURCE] offprompt serve`; installed → the `offprompt` program by its
    absolute path, preferring the name on PATH when it is this same install (Homebrew's or
    pipx's stable link rather than a versioned folder); otherwise `<this python> -m offprompt
    serve`.
    """
    if _in_uv_cache(Path(prefix).resolve(), machine):
        uvx = machine.which("uvx")
        return _uvx(os.path.abspath(uvx) if uvx else "uvx", uvx_source(Path(prefix)))
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


def _uvx(uvx: str, source: str | None) -> ServerCommand:
    start = ("--from", source) if source is not None else ()
    return ServerCommand(uvx, (*start, "offprompt", "serve"))


def _dist_info(prefix: Path) -> Path | None:
    """offprompt's `.dist-info` folder in the environment at `prefix`."""
    for site in (*prefix.glob("lib/python*/site-packages"), prefix / "Lib" / "site-packages"):
        for info in sorted(site.glob("offprompt-*.dist-info")):
            return info
    return None


def uvx_source(prefix: Path) -> str | None:
    """What `uvx --from` was given for the offprompt installed at `prefix`, from its PEP 610
    `direct_url.json`: a folder or archive path, a URL, or `git+URL[@rev]`; None for an install
    from the package index (then `uvx offprompt` finds it again) or no record."""
    info = _dist_info(prefix)
    if info is None:
        return None
    try:
        record = json.loads((info / "direct_url.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    url = record.get("url") if isinstance(record, dict) else None
    if not isinstance(url, str) or not url:
        return None
    vcs = record.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        rev = vcs.get("requested_revision")
        source = f"{vcs['vcs']}+{url}" + (f"@{rev}" if isinstance(rev, str) and rev else "")
    else:
        parts = urlsplit(url)
        source = unquote(parts.path) if parts.scheme == "file" else url
        if parts.scheme == "file" and re.match(r"^/[A-Za-z]:/", source):
            source = source[1:]  # file:///C:/x → C:/x
    sub = record.get("subdirectory")
    if isinstance(sub, str) and sub:
        source += f"#subdirectory={sub}"
    return source


def not_portable(server: ServerCommand, machine: Machine) -> str | None:
    """Why `server` would not start on a teammate's machine, or None when it would: its first
    word must be a bare program name found on PATH here, and no word may name a path of this
    machine (absolute, under `~`, or inside HOME)."""
    first = server.command
    if "/" in first or "\\" in first or os.path.isabs(first):
        return f"its program {first!r} is a path, which a teammate's machine does not have"
    if machine.which(first) is None:
        return f"its program {first!r} is not on PATH here"
    home = str(machine.home)
    for word in server.args:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if value.startswith("~") or _absolute(value) or (len(home) > 1 and home in value):
            return f"{word!r} names a path of this machine"
    return None


def _absolute(word: str) -> bool:
    return (
        word.startswith("/")
        or bool(re.match(r"^[A-Za-z]:[\\/]", word))
        or word.startswith("\\\\")
        or word.startswith("file:")
    )


def portable(
    machine: Machine,
    *,
    prefix: str = sys.prefix,
    scripts: str | None = None,
    executable: str = sys.executable,
) -> ServerCommand | None:
    """The command for a team's shared files, when this offprompt has one: `uvx [--from
    SOURCE] offprompt serve` for a uvx run, or `offprompt serve` when this install answers to
    that bare name on PATH; None otherwise (the person then gives --command)."""
    mine = resolve(machine, prefix=prefix, scripts=scripts, executable=executable)
    candidate: ServerCommand | None
    if _in_uv_cache(Path(prefix).resolve(), machine):
        candidate = _uvx("uvx", uvx_source(Path(prefix)))
    elif mine.args == ("serve",) and Path(mine.command).name in ("offprompt", "offprompt.exe"):
        found = machine.which("offprompt")
        same = found is not None and _same_file(Path(found), Path(mine.command))
        candidate = ServerCommand("offprompt", ("serve",)) if same else None
    else:
        candidate = None
    if candidate is None or not_portable(candidate, machine) is not None:
        return None
    return candidate


def inside_project(server: ServerCommand, machine: Machine, project: Path) -> str | None:
    """Where `server` (and so the guard's hook, the same program) lives inside `project`, or
    None. The agent's sandbox may write anywhere in the project: an offprompt there (its
    `.venv`, a `uvx --from` folder) can be changed by one command and the guard is gone."""
    here = Path(os.path.realpath(project))
    first = server.command
    if os.sep in first or (os.altsep and os.altsep in first) or os.path.isabs(first):
        given = Path(first).expanduser()
        program: Path | None = given if given.is_absolute() else here / given
    else:
        found = machine.which(first)
        program = Path(os.path.abspath(found)) if found else None
    places: list[Path] = []
    if program is not None:
        places += [program, Path(os.path.realpath(program))]
        interpreter = _interpreter(program)
        if interpreter is not None:
            places += [interpreter, Path(os.path.realpath(interpreter))]
    for word in server.args:
        value = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if _absolute(value) or value.startswith("~"):
            places.append(Path(value).expanduser())
    for place in places:
        if place.is_relative_to(here) or place.is_relative_to(project):
            return str(place)
    return None


def shebang(program: str | Path) -> str | None:
    """The first word of a script's `#!` line (its interpreter: a venv's console script names
    the venv's Python), or None for a file that is not a script or cannot be read."""
    try:
        with open(program, "rb") as f:
            first = f.readline(512)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    return words[0] if words else None


def _interpreter(program: Path) -> Path | None:
    """The absolute `#!` interpreter of a script, else None."""
    word = shebang(program)
    return Path(word) if word is not None and os.path.isabs(word) else None


# What a source may hold to be written into a shared hook's script (inside double quotes, in
# single quotes for the host's shell): no `$`, backtick, quote, backslash or space.
_SAFE_SOURCE = re.compile(r"[A-Za-z0-9._~:/?#\[\]@!&()*+,;=%-]+")


def from_source(words: tuple[str, ...]) -> str | None:
    """The `--from` source of a uvx (or `uv tool run`) command split into `words`, else None."""
    return _from_source(ServerCommand(words[0], tuple(words[1:]))) if words else None


def _from_source(server: ServerCommand) -> str | None:
    """The `--from` source of a uvx (or `uv tool run`) command, else None."""
    name = Path(server.command).name.removesuffix(".exe")
    args = list(server.args)
    if name == "uv" and args[:2] == ["tool", "run"]:
        args = args[2:]
    elif name != "uvx":
        return None
    for i, word in enumerate(args):
        if word.startswith("--from="):
            return word.removeprefix("--from=")
        if word == "--from" and i + 1 < len(args):
            return args[i + 1]
    return None


def install_source(server: ServerCommand, *, prefix: str = sys.prefix) -> str | None:
    """Where a teammate installs offprompt from (DESIGN §9, a team's shared hook names it): the
    `--from` source of a uvx command, else the source this offprompt was installed from (its PEP
    610 record: what pipx or uv was given). None for a path of this machine (a checkout, a
    wheel), an install from the package index, or anything unsafe to write into a script."""
    source = _from_source(server)
    if source is None and Path(server.command).name.removesuffix(".exe") != "uvx":
        source = uvx_source(Path(prefix))
    return shareable_source(source)


def shareable_source(source: str | None) -> str | None:
    """`source` when a teammate can install from it (an address, not a path of some machine)
    and it is safe to write into a script or a line; else None."""
    if source is None or _absolute(source) or source.startswith(("~", ".")):
        return None
    if "://" not in source.split("#", 1)[0] and not source.startswith("git+"):
        return None  # a relative folder or archive: a path of this machine too
    return source if _SAFE_SOURCE.fullmatch(source) else None


# A git source pinned to a commit (`@` and its 40 hex digits, before any `#subdirectory=`).
_COMMIT = re.compile(r"@[0-9a-fA-F]{40}(?:#|$)")


def fetched_each_run(server: ServerCommand) -> str | None:
    """The git source `server` has uvx (or `uv tool run`) fetch again each time it starts,
    not being pinned to a commit (DESIGN §9: said once, since the guard's hook starts it before
    every tool call); None for any other command."""
    source = _from_source(server)
    if source is None:
        return None
    return source if source.startswith("git+") and not _COMMIT.search(source) else None
