"""A file system that never answers, for tests of file work that must not hold anything up.

A FUSE mount whose server never replies, not even to the kernel's first message: every lookup,
stat, open or read under it waits, as on a hung network mount, until the test lets it go (then
each waiting call fails with ENOTCONN). No FUSE library or fusermount is needed, only root.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

_MNT_DETACH = 2


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


@contextmanager
def hung_mount(where: Path) -> Iterator[Path]:
    """Mount a never-answering file system on `where` (an existing folder or regular file,
    which then is its root); skips the test where FUSE cannot be mounted."""
    if os.geteuid() != 0:
        pytest.skip("mounting a FUSE file system needs root")
    rootmode = "40000" if where.is_dir() else "100000"  # octal S_IFDIR / S_IFREG
    try:
        # O_CLOEXEC: a child holding this end would keep the file system hung after we let go.
        fd = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        pytest.skip(f"/dev/fuse cannot be opened here: {e.strerror}")
    libc = _libc()
    options = f"fd={fd},rootmode={rootmode},user_id=0,group_id=0".encode()
    if libc.mount(b"offprompt-hung", os.fsencode(where), b"fuse", 0, options) != 0:
        err = ctypes.get_errno()
        os.close(fd)
        pytest.skip(f"mounting a FUSE file system is not permitted here: {os.strerror(err)}")
    try:
        yield where
    finally:
        # Closing our end aborts the connection: whatever waits on the mount gets ENOTCONN,
        # so the detach below and the test folder's clean-up never wait.
        os.close(fd)
        libc.umount2(os.fsencode(where), _MNT_DETACH)
