"""A masked project's file is written in place (DESIGN §15): it keeps its inode, so a sandbox
already running keeps its mount over it, and the write stays all or nothing by an undo copy in
the project's keep folder, which a killed writer's successor puts back before it reads."""

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from offprompt import sinks
from offprompt.disk import walk
from offprompt.errors import WriteError
from offprompt.sinks import atomic
from offprompt.spec import SinkSpec

COPY = "0123456789abcdef0123456789abcdef"


def keep_of(project: Path) -> Path:
    return project / walk.KEEP_NAME


def test_a_masked_write_keeps_the_inode_and_leaves_no_copy(project: Path, canary: str) -> None:
    """Same inode, mode 0600, the value there; the keep folder is 0700, ignored by git through
    its own `.gitignore`, and holds nothing else once the write is done."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = project / ".env"
    env.write_text("A=1\n")
    env.chmod(0o644)
    inode = env.stat().st_ino

    sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert inode == env.stat().st_ino
    assert f"A=1\nAPI_KEY={canary}\n" == env.read_text()
    assert 0o600 == stat.S_IMODE(env.stat().st_mode)
    keep = keep_of(project)
    assert 0o700 == stat.S_IMODE(keep.stat().st_mode)
    assert [".gitignore"] == os.listdir(keep)
    assert "*\n" == (keep / ".gitignore").read_text()
    assert (
        ""
        == subprocess.run(
            ["git", "status", "--porcelain", "--ignored=no", "--", walk.KEEP_NAME],
            cwd=project,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )


def test_without_in_place_the_file_is_replaced_as_before(project: Path, canary: str) -> None:
    """An unmasked project's write is the rename it always was (a new inode), no keep folder."""
    env = project / ".env"
    env.write_text("A=1\n")
    inode = env.stat().st_ino

    sinks.write(project, SinkSpec(), {"API_KEY": canary})

    assert inode != env.stat().st_ino
    assert not keep_of(project).exists()


def test_a_file_sink_and_a_new_file_are_written_in_place_too(project: Path, canary: str) -> None:
    """A file sink's file keeps its inode; a file not there yet is made, mode 0600."""
    key = project / "key.txt"
    key.write_text("old")
    inode = key.stat().st_ino

    sinks.write(project, SinkSpec("file", "key.txt"), {"KEY": canary}, in_place=True)
    sinks.write(project, SinkSpec("dotenv", "apps/web/.env"), {"B": canary}, in_place=True)

    assert (inode, canary) == (key.stat().st_ino, key.read_text())
    made = project / "apps" / "web" / ".env"
    assert (f"B={canary}\n", 0o600) == (made.read_text(), stat.S_IMODE(made.stat().st_mode))


def test_a_copy_a_killed_writer_left_is_put_back_before_the_next_write_reads(
    project: Path, canary: str
) -> None:
    """A writer killed after its undo copy was whole left the file torn: the next writer puts
    the old bytes back first, so the file is as before that write, plus this one's value."""
    env = project / ".env"
    env.write_text("A=torn-half-of-a-new-val")  # what a write cut in the middle leaves
    keep = keep_of(project)
    keep.mkdir(mode=0o700)
    sinks.write(project, SinkSpec(), {"Z": "1"}, in_place=True)  # makes the .gitignore
    env.write_text("A=torn-half-of-a-new-val")
    (keep / "leftover").write_text("")
    copy = _copy_name(project, env)
    (keep / copy).write_text("A=old\n")

    sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert f"A=old\nAPI_KEY={canary}\n" == env.read_text()
    assert copy not in os.listdir(keep)


def test_a_marker_for_a_file_that_was_not_there_removes_what_the_killed_writer_made(
    project: Path, canary: str
) -> None:
    """A killed first write of a file leaves `<copy>.absent`: the half-made file goes."""
    env = project / ".env"
    keep = keep_of(project)
    sinks.write(project, SinkSpec("file", "other.txt"), {"K": "x"}, in_place=True)
    env.write_text("API_KEY=half")
    (keep / f"{_copy_name(project, env)}.absent").write_text("")

    sinks.write(project, SinkSpec(), {"OTHER": canary}, in_place=True)

    assert f"OTHER={canary}\n" == env.read_text()
    assert [".gitignore"] == os.listdir(keep)


@pytest.mark.parametrize("marker", [False, True])
def test_a_change_made_well_after_the_killed_write_is_kept(
    project: Path, canary: str, marker: bool
) -> None:
    """The person edited the file (or another tool made it) two minutes after a writer was
    killed: the leftover copy (or `.absent` marker) is older than that change, so it is dropped,
    not put back over it; the new write lands on what they made."""
    sinks.write(project, SinkSpec("file", "other.txt"), {"K": "x"}, in_place=True)
    env = project / ".env"
    name = _copy_name(project, env) + (".absent" if marker else "")
    left = keep_of(project) / name
    left.write_text("" if marker else "A=old\n")
    two_minutes_ago = left.stat().st_mtime - 120
    os.utime(left, (two_minutes_ago, two_minutes_ago))
    env.write_text("MINE=edited\n")

    sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert f"MINE=edited\nAPI_KEY={canary}\n" == env.read_text()
    assert [".gitignore"] == os.listdir(keep_of(project))


def test_a_write_that_fails_half_way_puts_the_old_bytes_back(project: Path, canary: str) -> None:
    """A file size limit (RLIMIT_FSIZE, as a full disk would) stops the write in the middle:
    the file holds its old bytes again, on its own inode, and no copy is left."""
    env = project / ".env"
    env.write_text("A=1\n")
    inode = env.stat().st_ino
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        from pathlib import Path
        from offprompt import sinks
        from offprompt.errors import WriteError
        from offprompt.spec import SinkSpec
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            sinks.write(Path({str(project)!r}), SinkSpec(), {{"BIG": {canary!r} * 1000}},
                        in_place=True)
        except WriteError as e:
            print(e)
            sys.exit(3)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)

    assert 3 == done.returncode, done.stderr
    assert "nothing was changed" in done.stdout
    assert canary not in done.stdout + done.stderr
    assert ("A=1\n", inode) == (env.read_text(), env.stat().st_ino)
    assert [".gitignore"] == os.listdir(keep_of(project))


def test_a_file_with_a_second_hard_link_is_refused_and_the_other_name_unchanged(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A `.env` hard-linked to a file elsewhere would change that file too: refused."""
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("MINE=1\n")
    os.link(elsewhere, project / ".env")

    with pytest.raises(WriteError, match="second hard link"):
        sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert "MINE=1\n" == elsewhere.read_text()


def test_a_keep_folder_that_is_a_link_is_never_followed(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A keep folder swapped for a link out of the project: refused, nothing written there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    keep_of(project).symlink_to(outside, target_is_directory=True)

    with pytest.raises(WriteError, match="nothing was changed"):
        sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert [] == os.listdir(outside)
    assert not (project / ".env").exists()


def test_the_keep_folder_counts_as_staging(project: Path) -> None:
    """What offprompt never reads and the guard protects (its copy holds old values)."""
    assert atomic.is_staged(project / walk.KEEP_NAME / COPY)


def _copy_name(project: Path, file: Path) -> str:
    import hashlib

    place = file.relative_to(project).as_posix().encode()
    return hashlib.sha256(place).hexdigest()[:32]
