"""disk.walk: a path inside a project reached folder by folder by descriptors, never through a
link; parents made 0700 and removed after a failure; the one create-write-fsync loop."""

import errno
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from offprompt import sinks
from offprompt.disk import walk
from offprompt.errors import WriteError
from offprompt.spec import SinkSpec

DEEP = ("a", "b", "c")


@pytest.fixture
def deep(project: Path) -> Path:
    """project/a/b/c, three real folders."""
    (project / "a" / "b" / "c").mkdir(parents=True)
    return project


def swap_for_link(folder: Path, target: Path) -> None:
    """Replace `folder` by a link to `target` (what an attacker's exchange leaves)."""
    folder.rename(folder.with_name(folder.name + "-moved"))
    folder.symlink_to(target, target_is_directory=True)


@pytest.mark.parametrize("depth", [0, 1, 2])
def test_a_link_at_any_depth_stops_the_walk(deep: Path, tmp_path: Path, depth: int) -> None:
    """A folder on the way that is a link now (even to a real folder) raises Changed."""
    outside = tmp_path / "outside"
    outside.mkdir()
    swap_for_link(deep.joinpath(*DEEP[: depth + 1]), outside)

    with pytest.raises(walk.Changed):
        walk.reach(deep, DEEP)
    with pytest.raises(walk.Changed):
        walk.reach(deep, DEEP, create=True)
    assert [] == list(outside.iterdir())


@pytest.mark.parametrize("part", ["..", ".", "", "a/b"])
def test_a_part_that_is_not_one_named_folder_is_refused(project: Path, part: str) -> None:
    """`..`, `.`, an empty part or a part holding a separator is never walked."""
    with pytest.raises(ValueError, match="named folders"):
        walk.reach(project, ("x", part))


@pytest.mark.parametrize("text", ["../x", "a/./b", "a//b", "/etc/passwd", ""])
def test_parts_of_refuses_what_is_not_a_plain_relative_path(text: str) -> None:
    """parts_of splits only a relative path of named parts."""
    with pytest.raises(ValueError, match="walk"):
        walk.parts_of(text)


def test_parts_of_splits_a_relative_path() -> None:
    """Each named part in order."""
    assert ("a", "b", ".env") == walk.parts_of("a/b/.env")


def test_a_part_that_is_a_file_says_so(project: Path) -> None:
    """A file where a folder should be is NotADirectoryError, not a change."""
    (project / "a").write_text("")

    with pytest.raises(NotADirectoryError):
        walk.reach(project, ("a", "b"), create=True)


def test_missing_parents_are_made_0700_whatever_the_umask(project: Path) -> None:
    """Each folder the walk makes is 0700 exactly and listed, outermost first."""
    old = os.umask(0o077 ^ 0o777)  # a umask that would leave mkdir's 0700 as 0000 bits wider
    try:
        with walk.reach(project, DEEP, create=True) as folder:
            made = folder.created
    finally:
        os.umask(old)

    assert ("a", "a/b", "a/b/c") == made
    modes = [stat.S_IMODE((project.joinpath(*DEEP[: i + 1])).stat().st_mode) for i in range(3)]
    assert [0o700, 0o700, 0o700] == modes


def test_only_the_missing_parents_are_listed_and_removed(project: Path) -> None:
    """An existing folder on the way is neither listed nor removed."""
    (project / "a").mkdir(mode=0o755)

    with walk.reach(project, DEEP, create=True) as folder:
        assert ("a/b", "a/b/c") == folder.created
        folder.remove_created()

    assert [project / "a"] == list(project.iterdir())
    assert [] == list((project / "a").iterdir())


def test_a_failed_write_removes_the_folders_it_made(
    project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write into new folders that the disk refuses leaves no folder behind."""

    def full(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(walk, "write_new", full)

    with pytest.raises(WriteError, match="the disk is full"):
        sinks.write(project, SinkSpec(path="new/deeper/.env"), {"API_KEY": canary})
    assert [] == list(project.iterdir())


@pytest.mark.skipif(os.geteuid() != 0, reason="handing files to another owner needs root")
def test_the_owner_of_the_file_and_of_new_folders_is_kept(project: Path, canary: str) -> None:
    """As root, a rewritten .env keeps its owner, and new folders go to the nearest folder's."""
    (project / ".env").write_text("A=1\n")
    os.chown(project / ".env", 1234, 1235)
    os.chown(project, 4321, 4322)

    sinks.write(project, SinkSpec(), {"API_KEY": canary})
    sinks.write(project, SinkSpec(path="new/.env"), {"API_KEY": canary})

    owners = [(p.stat().st_uid, p.stat().st_gid) for p in (project / ".env", project / "new")]
    assert [(1234, 1235), (4321, 4322)] == owners
    assert (4321, 4322) == walk.owner(project, ("new", ".env"))
    assert (4321, 4322) == walk.owner(project, ("missing", "deeper", ".env"))


def recording_fsync(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int, bool]]:
    """Record (device, inode, is a folder) of every descriptor fsynced."""
    seen: list[tuple[int, int, bool]] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        seen.append((st.st_dev, st.st_ino, stat.S_ISDIR(st.st_mode)))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_a_replace_fsyncs_the_new_file_and_the_folder_by_descriptor(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The new file is fsynced before the rename, the folder after it."""
    seen = recording_fsync(monkeypatch)

    with walk.reach(project, ()) as folder:
        assert folder.replace("x.env", b"A=1\n", None)
        me = folder.identity()

    new = project / "x.env"
    assert (new.stat().st_dev, new.stat().st_ino, False) in seen
    assert (*me, True) == seen[-1]
    assert b"A=1\n" == new.read_bytes()
    assert 0o600 == stat.S_IMODE(new.stat().st_mode)
    assert [new] == list(project.iterdir())  # the staging folder is gone


def test_a_short_write_goes_on_until_every_byte_is_written(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """os.write taking 3 bytes at a time still writes the whole data."""
    real = os.write

    def short(fd: int, data: bytes) -> int:
        return real(fd, bytes(data[:3]))

    monkeypatch.setattr(os, "write", short)
    data = b"KEY=" + b"v" * 1000 + b"\n"

    with walk.reach(project, ()) as folder:
        folder.write_new("x", data)

    assert data == (project / "x").read_bytes()


def test_a_write_the_disk_takes_no_byte_of_is_an_error(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that returns 0 raises EIO instead of looping for ever."""
    monkeypatch.setattr(os, "write", lambda fd, data: 0)

    with pytest.raises(OSError, match="no byte") as caught:
        walk.write_new(project / "x", b"data")
    assert errno.EIO == caught.value.errno


def test_write_new_never_overwrites_nor_follows_a_link(project: Path, tmp_path: Path) -> None:
    """O_EXCL | O_NOFOLLOW: an existing file or a link in its place is an error, untouched."""
    target = tmp_path / "target"
    target.write_text("old")
    (project / "link").symlink_to(target)
    (project / "file").write_text("old")

    for name in ("link", "file"):
        with pytest.raises(FileExistsError):
            walk.write_new(project / name, b"new")
    assert ("old", "old") == (target.read_text(), (project / "file").read_text())


def test_write_new_appends_and_narrows_a_loose_mode(project: Path) -> None:
    """`append` adds to the file (as a journal does), and a 0644 file becomes 0600."""
    journal = project / "journal.jsonl"
    journal.write_text("one\n")
    journal.chmod(0o644)

    walk.write_new(journal, b"two\n", append=True)
    walk.write_new(project / "new.jsonl", b"first\n", append=True)

    assert "one\ntwo\n" == journal.read_text()
    assert 0o600 == stat.S_IMODE(journal.stat().st_mode)
    assert "first\n" == (project / "new.jsonl").read_text()


def test_write_new_keeps_the_mode_it_is_given_when_not_exact(project: Path) -> None:
    """`exact=None`: the file has the creation mode less the umask, as a new config would."""
    old = os.umask(0o022)
    try:
        walk.write_new(project / "config.json", b"{}", mode=0o666, exact=None)
    finally:
        os.umask(old)

    assert 0o644 == stat.S_IMODE((project / "config.json").stat().st_mode)


def test_write_in_place_keeps_the_inode_and_truncates(project: Path) -> None:
    """The file keeps its inode (a bind mount of it sees the change) and holds exactly data."""
    path = project / "settings.json"
    path.write_text("a much longer old text\n")
    inode = path.stat().st_ino

    with walk.reach(project, ()) as folder:
        folder.write_in_place("settings.json", [(b"new\n", 4)])

    assert (inode, "new\n") == (path.stat().st_ino, path.read_text())


def test_write_in_place_refuses_a_link_and_a_second_hard_link(
    project: Path, tmp_path: Path
) -> None:
    """Never through a link, never a file with another name (which would change too); a
    missing file is made, mode 0600."""
    target = tmp_path / "target"
    target.write_text("old")
    (project / "link").symlink_to(target)
    os.link(target, project / "hard")

    with walk.reach(project, ()) as folder:
        with pytest.raises(walk.NotRegular):
            folder.write_in_place("link", [(b"new", 3)])
        with pytest.raises(OSError, match="hard link") as raised:
            folder.write_in_place("hard", [(b"new", 3)])
        folder.write_in_place("missing", [(b"new", 3)])
    assert errno.EMLINK == raised.value.errno
    assert "old" == target.read_text()
    assert (b"new", 0o600) == (
        (project / "missing").read_bytes(),
        stat.S_IMODE((project / "missing").stat().st_mode),
    )


def test_read_refuses_a_fifo_at_once(project: Path) -> None:
    """A FIFO is never read: no writer is waited for."""
    os.mkfifo(project / "pipe")
    done: list[BaseException] = []

    def read() -> None:
        with walk.reach(project, ()) as folder:
            try:
                folder.read("pipe", 100)
            except walk.NotRegular as e:
                done.append(e)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(5)
    assert 1 == len(done)


def test_read_is_bounded_and_follows_no_link(project: Path, tmp_path: Path) -> None:
    """Past the limit is TooLarge; a link is ELOOP; a missing file is None."""
    (project / "big").write_bytes(b"x" * 101)
    (tmp_path / "target").write_text("A=1\n")
    (project / "link").symlink_to(tmp_path / "target")

    with walk.reach(project, ()) as folder:
        with pytest.raises(walk.TooLarge):
            folder.read("big", 100)
        with pytest.raises(OSError, match="symbolic links") as caught:
            folder.read("link", 100)
        assert None is folder.read("missing", 100)
        assert b"x" * 101 == folder.read("big", 101)
    assert errno.ELOOP == caught.value.errno


def test_a_stale_staging_folder_is_removed_through_the_descriptor(project: Path) -> None:
    """A killed writer's staging folder and old temp file go; a folder holding a folder stays."""
    stale = project / ".offprompt-0123456789abcdef"
    stale.mkdir()
    (stale / ".gitignore").write_text("*\n")
    (stale / ".env.new").write_text("A=1\n")
    (project / "..env.offprompt-0123456789abcdef.tmp").write_text("A=1\n")
    kept = project / ".offprompt-fedcba9876543210"
    (kept / "sub").mkdir(parents=True)

    with walk.reach(project, ()) as folder:
        counts = folder.remove_stale_temps()

    assert ((1, 1), [kept]) == (counts, list(project.iterdir()))


def test_a_swapped_folder_refuses_the_write_with_no_outside_path(
    project: Path, tmp_path: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The folder swapped for a link between the check and the write: WriteError, nothing
    outside, and the message names only the path inside the project."""
    (project / "sub").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    real_reach: Callable[..., walk.Folder] = walk.reach

    def swap_then_reach(*args: object, **kwargs: object) -> walk.Folder:
        if kwargs.get("create") and not (project / "sub").is_symlink():
            swap_for_link(project / "sub", outside)
        return real_reach(*args, **kwargs)

    monkeypatch.setattr(walk, "reach", swap_then_reach)

    with pytest.raises(WriteError) as caught:
        sinks.write(project, SinkSpec(path="sub/.env"), {"API_KEY": canary})
    assert (
        "A folder on the way to sub/.env changed during the write (it became a link);"
        " nothing was changed."
    ) == str(caught.value)
    assert [] == list(outside.iterdir())


def test_a_link_inside_the_project_that_leads_inside_stays_allowed(
    project: Path, canary: str
) -> None:
    """DESIGN §8: the path resolves with its links, then the walk goes down the resolved parts."""
    (project / "real").mkdir()
    (project / "alias").symlink_to("real", target_is_directory=True)

    written = sinks.write(project, SinkSpec(path="alias/.env"), {"API_KEY": canary})

    assert "real/.env" == written.display
    assert f"API_KEY={canary}\n" == (project / "real" / ".env").read_text()


def test_a_failed_write_new_leaves_no_torn_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The disk refusing a write after the create: the new file is removed again."""

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)

    with pytest.raises(OSError, match="No space"):
        walk.write_new(project / "x", b"data")
    assert [] == list(project.iterdir())
