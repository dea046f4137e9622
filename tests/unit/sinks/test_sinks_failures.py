"""Write failures provoked the way a real machine has them: full disk, read-only, immutable.

Tests run as root, so permission bits stop nothing; a tiny tmpfs and `chattr +i` do. Each
shows the original file unchanged and no temporary file left behind.
"""

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from offprompt.errors import WriteError
from offprompt.sinks import SinkSpec, inspect_target, write

ORIGINAL = b"# keep me\nA=1\n"


def _mount(where: Path, options: str) -> None:
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.decode().strip()}")


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A 64 KiB tmpfs (writes past it fail with ENOSPC)."""
    where = tmp_path / "mnt"
    where.mkdir()
    _mount(where, "size=64k,mode=0755")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def immutable(tmp_path: Path) -> Iterator[list[Path]]:
    """Paths appended here get `chattr +i` undone after the test, so tmp cleanup works."""
    if shutil.which("chattr") is None:
        pytest.skip("chattr is not installed")
    marked: list[Path] = []
    try:
        yield marked
    finally:
        for path in marked:
            subprocess.run(["chattr", "-i", str(path)], check=False)


def chattr_i(path: Path, marked: list[Path]) -> None:
    done = subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"chattr +i is not supported here: {done.stderr.decode().strip()}")
    marked.append(path)


def test_full_disk_leaves_the_original_and_no_temp_file(tiny_fs: Path) -> None:
    """ENOSPC mid-write: WriteError, original bytes, no litter."""
    (tiny_fs / ".env").write_bytes(ORIGINAL)
    with pytest.raises(WriteError, match="disk is full"):
        write(tiny_fs, SinkSpec(), {"BIG": "x" * 200_000, "B": "2"})
    assert ORIGINAL == (tiny_fs / ".env").read_bytes()
    assert [".env"] == os.listdir(tiny_fs)


def test_full_disk_removes_the_folders_it_created(tiny_fs: Path) -> None:
    """Parent folders made for a failed write are removed again."""
    with pytest.raises(WriteError):
        write(tiny_fs, SinkSpec("file", "a/b/key"), {"K": "x" * 200_000})
    assert [] == os.listdir(tiny_fs)


def test_read_only_file_system_leaves_the_original(tmp_path: Path) -> None:
    """EROFS: WriteError, original bytes, and inspect says why beforehand."""
    where = tmp_path / "ro"
    where.mkdir()
    _mount(where, "size=64k")
    try:
        (where / ".env").write_bytes(ORIGINAL)
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        target = inspect_target(where, SinkSpec(), ["B"])
        assert (False, ".env cannot be written: the file system is read-only.") == (
            target.writable,
            target.problem,
        )
        with pytest.raises(WriteError, match="read-only"):
            write(where, SinkSpec(), {"B": "2"})
        assert ORIGINAL == (where / ".env").read_bytes()
        assert [".env"] == os.listdir(where)
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_immutable_file_leaves_the_original_and_no_temp_file(
    project: Path, immutable: list[Path]
) -> None:
    """chattr +i on .env: the replace fails, the temp file is removed."""
    env = project / ".env"
    env.write_bytes(ORIGINAL)
    chattr_i(env, immutable)
    with pytest.raises(WriteError, match="not permitted"):
        write(project, SinkSpec(), {"B": "2"})
    assert ORIGINAL == env.read_bytes()
    assert [".env"] == os.listdir(project)


def test_immutable_folder_leaves_the_original(project: Path, immutable: list[Path]) -> None:
    """chattr +i on the folder: no temp file can be made, nothing changes."""
    env = project / ".env"
    env.write_bytes(ORIGINAL)
    chattr_i(project, immutable)
    with pytest.raises(WriteError, match=r"Could not write \.env"):
        write(project, SinkSpec(), {"B": "2"})
    assert ORIGINAL == env.read_bytes()
    assert [".env"] == os.listdir(project)
