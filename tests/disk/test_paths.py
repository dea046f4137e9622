"""disk.paths: the files offprompt keeps outside any project (state, cache, a download, the
developers' generated files) are made without following a link and leave nothing half made."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from offprompt.disk import paths


def test_replace_file_replaces_a_link_and_leaves_its_target_alone(tmp_path: Path) -> None:
    """A link planted at the path is replaced by a regular file; where it pointed is untouched."""
    target = tmp_path / "elsewhere"
    target.write_bytes(b"theirs")
    path = tmp_path / "names.json"
    path.symlink_to(target)

    paths.replace_file(path, b"ours")

    assert (b"theirs", b"ours") == (target.read_bytes(), path.read_bytes())
    assert not path.is_symlink()
    assert 0o600 == stat.S_IMODE(path.stat().st_mode)
    assert ["elsewhere", "names.json"] == sorted(os.listdir(tmp_path))


def test_replace_file_without_a_mode_gives_what_the_umask_leaves(tmp_path: Path) -> None:
    """A developers' generated file is a plain repository file: 0666 less the umask."""
    old = os.umask(0o022)
    try:
        paths.replace_file(tmp_path / "listing.json", b"{}\n", mode=None)
    finally:
        os.umask(old)

    assert 0o644 == stat.S_IMODE((tmp_path / "listing.json").stat().st_mode)


def test_fill_new_leaves_nothing_when_the_download_fails(tmp_path: Path) -> None:
    """What the chunks raise is raised, and the part already written is removed."""

    def chunks() -> Iterator[bytes]:
        yield b"part"
        raise ValueError("the download broke")

    with pytest.raises(ValueError, match="broke"):
        paths.fill_new(tmp_path / ".download", chunks())

    assert [] == os.listdir(tmp_path)


def test_fill_new_never_writes_through_a_link(tmp_path: Path) -> None:
    """A link where the new file goes: refused, the link's target untouched."""
    target = tmp_path / "elsewhere"
    target.write_bytes(b"theirs")
    (tmp_path / ".download").symlink_to(target)

    with pytest.raises(FileExistsError):
        paths.fill_new(tmp_path / ".download", [b"ours"])

    assert b"theirs" == target.read_bytes()


def test_install_executable_puts_an_owner_only_program_in_place(tmp_path: Path) -> None:
    """The program is 0700 at its place, the temporary name gone."""
    temp = tmp_path / ".download-1"
    paths.fill_new(temp, [b"#!/bin/sh\n"])

    paths.install_executable(temp, tmp_path / "cloudflared")

    assert ["cloudflared"] == os.listdir(tmp_path)
    assert 0o700 == stat.S_IMODE((tmp_path / "cloudflared").stat().st_mode)


def test_private_folders_are_made_0700_whatever_the_umask(tmp_path: Path) -> None:
    """Each missing folder is exactly 0700; one that exists keeps its mode."""
    (tmp_path / "there").mkdir(mode=0o755)
    old = os.umask(0)
    try:
        paths.make_private_folders(tmp_path / "there" / "a" / "b")
    finally:
        os.umask(old)

    modes = [stat.S_IMODE((tmp_path / p).stat().st_mode) for p in ("there", "there/a", "there/a/b")]
    assert [0o755, 0o700, 0o700] == modes


def test_a_lock_folder_is_taken_once(tmp_path: Path) -> None:
    """A lock held as a folder: a second take fails until it is removed."""
    lock = tmp_path / "config.lock"
    paths.make_lock_folder(lock)

    with pytest.raises(FileExistsError):
        paths.make_lock_folder(lock)
    assert paths.remove_folder_if_empty(lock)
    assert not lock.exists()
