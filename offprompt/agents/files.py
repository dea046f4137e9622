"""Reading and rewriting agents' config files: all or nothing, keeping the file's mode and owner.

Not `sinks.atomic`: that one makes every file 0600 and is for secrets; a config file keeps the
mode its owner gave it, and a symlinked config (dotfile managers) is written where it points.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from offprompt import disk
from offprompt.agents.interface import ConfigChange
from offprompt.configedit import jsonc
from offprompt.disk import walk
from offprompt.errors import ConfigError

__all__ = ["MAX_BYTES", "Edit", "json_object", "read_text", "toml_object", "update"]

# A config file this large is not a config file; refusing keeps a wrong path from loading a disk.
MAX_BYTES = 32 * 1024 * 1024

# Another program (the agent itself) may rewrite its config while we edit it: read, edit and
# check again this many times before giving up.
_ATTEMPTS = 3


@dataclass(frozen=True)
class Edit:
    """What a transform decided: the new text (None deletes the file) and what that means."""

    text: str | None
    outcome: ConfigChange


def _target(path: Path, shown: str) -> Path:
    """Where the bytes of `path` live: the file a symlink points to, else `path` itself."""
    if not path.is_symlink():
        return path
    real = Path(os.path.realpath(path))
    if not real.exists():
        raise ConfigError(
            f"{shown} is a symlink to {real}, which does not exist; create that file or remove"
            " the link, then try again. Nothing was changed."
        )
    return real


def _read(target: Path, shown: str) -> bytes | None:
    try:
        st = os.stat(target)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(
            f"Could not read {shown} ({disk.reason(e)}); nothing was changed."
        ) from None
    if not stat.S_ISREG(st.st_mode):
        raise ConfigError(f"{shown} is not a regular file; nothing was changed.")
    if st.st_size > MAX_BYTES:
        raise ConfigError(f"{shown} is larger than 32 MiB; nothing was changed.")
    try:
        return target.read_bytes()
    except OSError as e:
        raise ConfigError(
            f"Could not read {shown} ({disk.reason(e)}); nothing was changed."
        ) from None


def _decode(data: bytes, shown: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{shown} is not UTF-8 text; offprompt never rewrites a file it cannot read."
        ) from None


def json_object(text: str, shown: str) -> dict[str, Any]:
    """The JSON (comments allowed) object `text` of the file `shown`; ConfigError otherwise."""
    try:
        root = jsonc.parse(text).root.value
    except jsonc.JsoncError as e:
        raise ConfigError(
            f"{shown} is not valid JSON ({e}); fix it, then run this again. Nothing was changed."
        ) from None
    if not isinstance(root, dict):
        raise ConfigError(f"{shown} does not hold a JSON object; nothing was changed.")
    return root


def toml_object(text: str, shown: str) -> dict[str, Any]:
    """The TOML text of the file `shown` (a Codex config), or ConfigError saying it is not valid."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(
            f"{shown} is not valid TOML ({e}); fix it, then run this again. Nothing was changed."
        ) from None


def read_text(path: Path, shown: str) -> str | None:
    """The file's text, or None when there is none. ConfigError when it cannot be read."""
    data = _read(_target(path, shown), shown)
    return None if data is None else _decode(data, shown)


def update(
    path: Path,
    shown: str,
    transform: Callable[[str | None], Edit],
    prune_dir: Path | None = None,
    *,
    lock: Path | None = None,
    new_mode: int = 0o666,
) -> ConfigChange:
    """Apply `transform` to the file's text (None when missing) and write the result atomically.

    `transform` raises ConfigError to refuse. If the file changes between reading and replacing
    it (the agent saved its config meanwhile), the edit is made again on the new text. When the
    transform deletes the file and it sat in `prune_dir` (an agent's own folder such as .cursor),
    that folder goes too if nothing else is left in it. `lock` is the lock folder the agent
    itself takes to rewrite the file (Claude Code's `~/.claude.json.lock`): held meanwhile, so
    neither write is lost. A file created here gets `new_mode` (less the umask).
    """
    if lock is None or not lock.parent.is_dir():
        return _update(path, shown, transform, prune_dir, new_mode)
    with _locked(lock, shown):
        return _update(path, shown, transform, prune_dir, new_mode)


# proper-lockfile's rules, which Claude Code uses for ~/.claude.json: the lock is a folder made
# with mkdir; one whose mtime is older than 10 s is stale (its owner died) and may be taken over.
_LOCK_STALE_S = 10.0
_LOCK_WAIT_S = 5.0


@contextlib.contextmanager
def _locked(lock: Path, shown: str) -> Iterator[None]:
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            try:
                age = time.time() - os.stat(lock).st_mtime
            except FileNotFoundError:
                continue
            except OSError as e:
                raise ConfigError(
                    f"Could not take the lock {lock} for {shown} ({disk.reason(e)}); nothing"
                    " was changed."
                ) from None
            if age > _LOCK_STALE_S:
                with contextlib.suppress(OSError):
                    os.rmdir(lock)
                continue
            if time.monotonic() > deadline:
                raise ConfigError(
                    f"{shown} is being saved by another program (its lock {lock} is held);"
                    " try again in a moment. Nothing was changed."
                ) from None
            time.sleep(0.05)
        except OSError as e:
            raise ConfigError(
                f"Could not take the lock {lock} for {shown} ({disk.reason(e)}); nothing was"
                " changed."
            ) from None
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.rmdir(lock)


def _update(
    path: Path,
    shown: str,
    transform: Callable[[str | None], Edit],
    prune_dir: Path | None,
    new_mode: int,
) -> ConfigChange:
    for _ in range(_ATTEMPTS):
        target = _target(path, shown)
        data = _read(target, shown)
        edit = transform(None if data is None else _decode(data, shown))
        if edit.outcome in ("unchanged", "absent", "unsupported"):
            return edit.outcome
        if edit.text is None:
            if _delete(target, data, shown, prune_dir if target == path else None):
                return edit.outcome
        elif _replace(target, data, edit.text.encode("utf-8"), shown, new_mode):
            return edit.outcome
    raise ConfigError(
        f"{shown} kept changing while offprompt edited it (is the agent running and saving it?);"
        " close the agent and try again. Nothing was changed."
    )


def _owner_for_new(folder: Path) -> tuple[int, int] | None:
    """Under sudo, new files and folders go to whoever owns the nearest existing folder."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    probe = folder
    while True:
        try:
            st = os.stat(probe)
            return st.st_uid, st.st_gid
        except OSError:
            if probe.parent == probe:
                return None
            probe = probe.parent


def _make_parents(folder: Path, shown: str) -> list[Path]:
    missing: list[Path] = []
    probe = folder
    while not probe.exists():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"A part of {shown} is a file, not a folder; nothing was changed.")
    owner = _owner_for_new(probe)
    created: list[Path] = []
    for dir_ in reversed(missing):
        try:
            dir_.mkdir()
        except FileExistsError:
            continue
        except OSError as e:
            _remove_dirs(created)
            raise ConfigError(
                f"Could not create the folder for {shown} ({disk.reason(e)}); nothing was changed."
            ) from None
        created.append(dir_)
        if owner is not None:
            with contextlib.suppress(OSError):
                os.chown(dir_, *owner)
    return created


def _remove_dirs(created: list[Path]) -> None:
    for dir_ in reversed(created):
        with contextlib.suppress(OSError):
            dir_.rmdir()


def _replace(
    target: Path, before: bytes | None, data: bytes, shown: str, new_mode: int = 0o666
) -> bool:
    """Write `data` to `target` through a temporary file; False if `target` changed meanwhile."""
    created = _make_parents(target.parent, shown)
    try:
        st = os.stat(target) if before is not None else None
    except OSError:
        st = None
    mode = stat.S_IMODE(st.st_mode) if st is not None else None
    owner = (st.st_uid, st.st_gid) if st is not None else _owner_for_new(target.parent)
    temp = target.parent / disk.config_temp_name(target.name)
    try:
        # A new file gets the mode the agent would give it (0666 minus the umask for most), an
        # existing one's mode is kept exactly.
        walk.write_new(temp, data, mode=new_mode, exact=mode, owner=owner)
    except OSError as e:
        _remove_dirs(created)
        raise ConfigError(
            f"Could not write {shown} ({disk.reason(e)}); nothing was changed."
        ) from None
    try:
        if _peek(target) != before:
            os.unlink(temp)
            return False
        os.replace(temp, target)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        _remove_dirs(created)
        raise ConfigError(
            f"Could not write {shown} ({disk.reason(e)}); nothing was changed."
        ) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        _remove_dirs(created)
        raise
    disk.fsync_directory(target.parent)
    return True


def _delete(target: Path, before: bytes | None, shown: str, prune_dir: Path | None) -> bool:
    """Remove a file offprompt emptied, and its folder if that is now empty; False if changed."""
    if _peek(target) != before:
        return False
    try:
        target.unlink()
    except FileNotFoundError:
        return True
    except OSError as e:
        raise ConfigError(
            f"Could not remove {shown} ({disk.reason(e)}); nothing was changed."
        ) from None
    # Folders like .cursor/ or .vscode/ (or .github/hooks/ up to .github/) that only held our
    # file go too, so `remove` restores the project as `init` found it. A folder with anything
    # else in it stays.
    folder = target.parent
    if prune_dir is not None and (folder == prune_dir or prune_dir in folder.parents):
        while True:
            try:
                folder.rmdir()
            except OSError:
                break
            if folder == prune_dir:
                break
            folder = folder.parent
    while not folder.is_dir():
        folder = folder.parent
    disk.fsync_directory(folder)
    return True


def _peek(target: Path) -> bytes | None:
    try:
        return target.read_bytes()
    except FileNotFoundError:
        return None
