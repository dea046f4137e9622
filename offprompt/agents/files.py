"""Reading and rewriting agents' config files: all or nothing, keeping the file's mode and owner.

Not `sinks.atomic`: that one makes every file 0600 and is for secrets; a config file keeps the
mode its owner gave it. A user's symlinked config (dotfile managers) is written where it points;
a project's is never written through a link (disk.config walks to it by descriptors).
"""

from __future__ import annotations

import contextlib
import errno
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
from offprompt.disk import config, paths, walk
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
    project: Path | None = None,
) -> ConfigChange:
    """Apply `transform` to the file's text (None when missing) and write the result atomically.

    `transform` raises ConfigError to refuse. If the file changes between reading and replacing
    it (the agent saved its config meanwhile), the edit is made again on the new text. When the
    transform deletes the file and it sat in `prune_dir` (an agent's own folder such as .cursor),
    that folder goes too if nothing else is left in it. `lock` is the lock folder the agent
    itself takes to rewrite the file (Claude Code's `~/.claude.json.lock`): held meanwhile, so
    neither write is lost. A file created here gets `new_mode` (less the umask). `project`: the
    project of a project's (or local scope's) config; a file below it is reached through no
    link, at the file or a folder on the way (disk.config): a link there is refused.
    """
    if lock is None or not lock.parent.is_dir():
        return _update(path, shown, transform, prune_dir, new_mode, project)
    with _locked(lock, shown):
        return _update(path, shown, transform, prune_dir, new_mode, project)


# proper-lockfile's rules, which Claude Code uses for ~/.claude.json: the lock is a folder made
# with mkdir; one whose mtime is older than 10 s is stale (its owner died) and may be taken over.
_LOCK_STALE_S = 10.0
_LOCK_WAIT_S = 5.0


@contextlib.contextmanager
def _locked(lock: Path, shown: str) -> Iterator[None]:
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            paths.make_lock_folder(lock)
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
                paths.remove_folder_if_empty(lock)
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
        paths.remove_folder_if_empty(lock)


def _update(
    path: Path,
    shown: str,
    transform: Callable[[str | None], Edit],
    prune_dir: Path | None,
    new_mode: int,
    project: Path | None,
) -> ConfigChange:
    for _ in range(_ATTEMPTS):
        place = _place(path, shown, project)
        try:
            data = config.read(place.root, place.parts, MAX_BYTES)
        except (OSError, ValueError, walk.NotRegular, walk.TooLarge) as e:
            raise _refused(e, shown, "read") from None
        edit = transform(None if data is None else _decode(data, shown))
        if edit.outcome in ("unchanged", "absent", "unsupported"):
            return edit.outcome
        if edit.text is None:
            if _delete(place, data, shown, 0 if place.linked else _levels(path, prune_dir)):
                return edit.outcome
        elif _replace(place, data, edit.text.encode("utf-8"), shown, new_mode):
            return edit.outcome
    raise ConfigError(
        f"{shown} kept changing while offprompt edited it (is the agent running and saving it?);"
        " close the agent and try again. Nothing was changed."
    )


@dataclass(frozen=True)
class _Place:
    """Where a config file's bytes are: `parts` below the real folder `root`, which a walk of
    descriptors reaches without following any link (disk.config)."""

    root: Path
    parts: tuple[str, ...]
    linked: bool  # a user's config reached through a symlink of its own (a dotfile manager's)


def _place(path: Path, shown: str, project: Path | None) -> _Place:
    """A project's config: every part below the project's real folder, the file too, as it is
    named there, so a link in a cloned project (to ~/.bashrc, say) is refused, never followed.
    A user's config: where the person's own links lead (a dotfile manager's), resolved once
    here; the write then follows no link, so one swapped in meanwhile fails it."""
    if project is not None:
        with contextlib.suppress(ValueError):
            return _Place(
                Path(os.path.realpath(project)), walk.parts_of(path.relative_to(project)), False
            )
    target = _target(path, shown)
    real = Path(os.path.realpath(target))
    # Through a link, the folders above the file are not the ones `prune_dir` names: none goes.
    return _Place(Path(real.anchor), real.parts[1:], real != Path(os.path.abspath(path)))


def _levels(path: Path, prune_dir: Path | None) -> int:
    """How many folders, from the file's own up to `prune_dir`, a delete may remove when empty."""
    folder = path.parent
    if prune_dir is None or not (folder == prune_dir or prune_dir in folder.parents):
        return 0
    return len(folder.relative_to(prune_dir).parts) + 1


def _refused(e: Exception, shown: str, doing: str) -> ConfigError:
    """The words for a config file the walk could not read, write or remove."""
    if isinstance(e, walk.Changed) or (isinstance(e, OSError) and e.errno == errno.ELOOP):
        return ConfigError(
            f"{shown} is a symlink, or a folder on its way is one: offprompt writes a project's"
            " config only as a file inside the project, never through a link, which could lead"
            " outside it. Put the file itself there, then try again. Nothing was changed."
        )
    if isinstance(e, walk.NotRegular):
        return ConfigError(f"{shown} is not a regular file; nothing was changed.")
    if isinstance(e, walk.TooLarge):
        return ConfigError(f"{shown} is larger than 32 MiB; nothing was changed.")
    if isinstance(e, NotADirectoryError):
        return ConfigError(f"A part of {shown} is a file, not a folder; nothing was changed.")
    if isinstance(e, walk.NotCreated):
        return ConfigError(
            f"Could not create the folder for {shown} ({disk.reason(e)}); nothing was changed."
        )
    why = disk.reason(e) if isinstance(e, OSError) else "it is not a path offprompt walks"
    return ConfigError(f"Could not {doing} {shown} ({why}); nothing was changed.")


def _owner_for_new(place: _Place) -> tuple[int, int] | None:
    """Under sudo, new files and folders go to whoever owns the nearest existing folder."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None
    return walk.owner(place.root, place.parts)


def _replace(
    place: _Place, before: bytes | None, data: bytes, shown: str, new_mode: int = 0o666
) -> bool:
    """Write `data` through a temporary file beside it (disk.config); False if the file changed
    meanwhile. A new file gets the mode the agent would give it (0666 less the umask for most),
    an existing one keeps its mode and owner exactly."""
    try:
        return config.replace(
            place.root,
            place.parts,
            data,
            before,
            limit=MAX_BYTES,
            new_mode=new_mode,
            owner_for_new=_owner_for_new(place),
        )
    except (OSError, ValueError, walk.NotRegular, walk.TooLarge) as e:
        raise _refused(e, shown, "write") from None


def _delete(place: _Place, before: bytes | None, shown: str, prune: int) -> bool:
    """Remove a file offprompt emptied, and up to `prune` of its folders when now empty (those
    like .cursor/ or .vscode/, or .github/hooks/ up to .github/, that only held our file, so
    `remove` restores the project as `init` found it); False if the file changed."""
    try:
        return config.remove(place.root, place.parts, before, limit=MAX_BYTES, prune=prune)
    except (OSError, ValueError, walk.NotRegular, walk.TooLarge) as e:
        raise _refused(e, shown, "remove") from None
