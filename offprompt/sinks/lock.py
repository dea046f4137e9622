"""The lock held across read-modify-write of one destination, so concurrent writes lose nothing.

An exclusive flock on the destination's folder (the descriptor `disk.walk` reached it by), plus a
lock between this process's threads.
"""

from __future__ import annotations

import contextlib
import errno
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from offprompt import log
from offprompt.disk import walk
from offprompt.errors import WriteError

__all__ = ["locked"]

TIMEOUT_SECONDS = 10.0

# Why the folder and not the file: the write replaces the file (os.replace), so a lock on the
# file's inode would be taken by a second writer on the old inode, which it then reads stale;
# and a `.env.lock` beside it would be litter in the person's project. A lock file in the state
# dir would depend on every writer seeing the same OFFPROMPT_STATE_DIR. The folder's inode stays
# put, every process can open it read-only, and closing the descriptor releases the lock even if
# the process dies. Writes to other files in the same folder wait too, which costs nothing.
#
# flock is per open file description, so two threads with their own descriptors exclude each
# other on Linux and macOS; the in-process lock keeps that true where flock is missing
# (Windows) or refused (some network file systems), in which case only this process is covered.
_thread_locks: dict[tuple[int, int], threading.Lock] = {}
_thread_locks_guard = threading.Lock()
_FLOCK_UNSUPPORTED = {errno.ENOLCK, errno.EBADF, errno.EINVAL, errno.EOPNOTSUPP, errno.ENOSYS}


def _thread_lock(folder: walk.Folder) -> threading.Lock:
    # Keyed by the folder itself (device, inode), not by a name that may lead elsewhere.
    key = folder.identity()
    with _thread_locks_guard:
        return _thread_locks.setdefault(key, threading.Lock())


@contextmanager
def locked(folder: walk.Folder, display: str, timeout: float = TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the write lock for files in `folder`; WriteError if it stays busy for `timeout` s."""
    busy = WriteError(
        f"Another write to {display} has been in progress for {timeout:g} s; nothing was"
        " changed. Try again."
    )
    try:
        tlock = _thread_lock(folder)
    except OSError as e:
        raise WriteError(
            f"Could not open the folder of {display}: {e.strerror}; nothing was changed."
        ) from None
    if not tlock.acquire(timeout=timeout):
        raise busy
    try:
        with _folder_lock(folder, display, time.monotonic() + timeout, busy):
            yield
    finally:
        tlock.release()


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only

    @contextmanager
    def _folder_lock(
        folder: walk.Folder, display: str, deadline: float, busy: WriteError
    ) -> Iterator[None]:
        yield

else:
    import fcntl

    @contextmanager
    def _folder_lock(
        folder: walk.Folder, display: str, deadline: float, busy: WriteError
    ) -> Iterator[None]:
        fd = folder.fd
        try:
            delay = 0.002
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise busy from None
                    time.sleep(delay)
                    delay = min(delay * 2, 0.05)
                except OSError as e:
                    if e.errno not in _FLOCK_UNSUPPORTED:
                        raise WriteError(
                            f"Could not lock the folder of {display}: {e.strerror}; nothing"
                            " was changed."
                        ) from None
                    log.get().warning(
                        "the file system of %s refuses locks; concurrent writes from other"
                        " processes are not serialized",
                        display,
                    )
                    break
            yield
        finally:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)  # the walk's descriptor stays open: unlock it
