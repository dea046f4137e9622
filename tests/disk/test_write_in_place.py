"""A masked project's file is written in place (DESIGN §15): it keeps its inode, so a sandbox
already running keeps its mount over it, and the write stays all or nothing by an undo record in
offprompt's state dir (never in the project), which a killed writer's successor settles first.
The kills themselves are in test_undo_kills.py."""

import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from offprompt import sinks
from offprompt.disk import undo, walk
from offprompt.errors import WriteError
from offprompt.sinks import atomic
from offprompt.spec import SinkSpec


@pytest.fixture
def home(isolated_env: Path) -> Path:
    return isolated_env


def records_of(home: Path) -> Path:
    return home / "state" / ".offprompt-keep"  # disk.undo.RECORDS


def everything_in(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (.git aside), by path: what a process there could read."""
    out: dict[str, bytes] = {}
    for here, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            path = os.path.join(here, name)
            out[path] = Path(path).read_bytes()
    return out


def test_a_masked_write_keeps_the_inode_and_leaves_nothing_in_the_project(
    project: Path, home: Path, canary: str
) -> None:
    """Same inode, mode 0600, the value there; no keep folder in the project; the records'
    folder in the state dir is 0700 and holds nothing once the write is done."""
    env = project / ".env"
    env.write_text("A=1\n")
    env.chmod(0o644)
    inode = env.stat().st_ino

    sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert inode == env.stat().st_ino
    assert f"A=1\nAPI_KEY={canary}\n" == env.read_text()
    assert 0o600 == stat.S_IMODE(env.stat().st_mode)
    assert [".env"] == os.listdir(project)
    assert 0o700 == stat.S_IMODE(records_of(home).stat().st_mode)
    assert [] == os.listdir(records_of(home))


def test_without_in_place_the_file_is_replaced_as_before(project: Path, home: Path) -> None:
    """An unmasked project's write is the rename it always was (a new inode), no record."""
    env = project / ".env"
    env.write_text("A=1\n")
    inode = env.stat().st_ino

    sinks.write(project, SinkSpec(), {"API_KEY": "x"})

    assert inode != env.stat().st_ino
    assert not records_of(home).exists()


def test_a_file_sink_and_a_new_file_are_written_in_place_too(project: Path, canary: str) -> None:
    """A file sink's file keeps its inode (a shorter value leaves none of the old bytes); a
    file not there yet is made, mode 0600."""
    key = project / "key.txt"
    key.write_text("a much longer old value")
    inode = key.stat().st_ino

    sinks.write(project, SinkSpec("file", "key.txt"), {"KEY": canary[:8]}, in_place=True)
    sinks.write(project, SinkSpec("dotenv", "apps/web/.env"), {"B": canary}, in_place=True)

    assert (inode, canary[:8]) == (key.stat().st_ino, key.read_text())
    made = project / "apps" / "web" / ".env"
    assert (f"B={canary}\n", 0o600) == (made.read_text(), stat.S_IMODE(made.stat().st_mode))


def test_a_write_that_fails_half_way_puts_the_old_bytes_back(
    project: Path, home: Path, canary: str
) -> None:
    """A file size limit (RLIMIT_FSIZE, as a full disk would) stops the write in the middle:
    the file holds its old bytes again, on its own inode, and no record is left."""
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
    assert [] == os.listdir(records_of(home))


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


def test_a_keep_folder_an_earlier_version_left_is_emptied_out_of_the_project(
    project: Path, home: Path, canary: str
) -> None:
    """A cloned repo's `.offprompt-keep` (its committed `.gitignore` empty) with an undo copy
    in it: the next masked write moves the copy into the state dir (0600, never put back over
    the file), so no value is left where `git add -A` or a running process finds it."""
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    keep = project / walk.KEEP_NAME
    keep.mkdir(mode=0o755)
    (keep / ".gitignore").write_text("")
    (keep / "0123456789abcdef0123456789abcdef").write_text(f"OLD={canary}\n")
    (project / ".env").write_text("A=1\n")

    sinks.write(project, SinkSpec(), {"B": "2"}, in_place=True)

    assert "A=1\nB=2\n" == (project / ".env").read_text()
    assert not any(canary.encode() in data for data in everything_in(project).values())
    (moved,) = [p for p in records_of(home).iterdir() if p.name.startswith("legacy-")]
    assert (f"OLD={canary}\n", 0o600) == (moved.read_text(), stat.S_IMODE(moved.stat().st_mode))


def test_a_keep_folder_that_is_a_link_is_never_followed(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A keep folder swapped for a link out of the project: nothing read, moved or written
    there; the write itself goes on (it no longer needs that folder)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0123456789abcdef0123456789abcdef").write_text("THEIRS=1\n")
    (project / walk.KEEP_NAME).symlink_to(outside, target_is_directory=True)

    sinks.write(project, SinkSpec(), {"API_KEY": canary}, in_place=True)

    assert ["0123456789abcdef0123456789abcdef"] == os.listdir(outside)
    assert f"API_KEY={canary}\n" == (project / ".env").read_text()


def test_the_keep_folder_counts_as_staging(project: Path) -> None:
    """What offprompt never reads and the guard protects (an old copy holds old values)."""
    assert atomic.is_staged(project / walk.KEEP_NAME / "0123456789abcdef0123456789abcdef")


@pytest.mark.parametrize(
    ("data", "length"),
    [(b"A=1\n", 9), (b"A=1", 9), (b"A=1", 4), (b"A=1", 5), (b"A=1\n", 5), (b"", 3), (b"A=1", 3)],
)
def test_padding_is_an_inert_comment_of_the_old_length(data: bytes, length: int) -> None:
    """What a shorter write leaves before its cut: the new bytes, then blanks in a comment
    line, exactly the old length: no old byte after the new ones."""
    out = undo.padded(data, length)

    assert (length, data) == (len(out), out[: len(data)])
    lines = out[len(data) :].split(b"\n")
    if data and not data.endswith(b"\n"):
        assert b"" == lines.pop(0)  # the padding starts a line of its own
    assert all(line in (b"", b"#") or line.startswith(b"# ") for line in lines)
    assert set(out[len(data) :]) <= set(b"# \n")


@pytest.mark.parametrize(
    ("tool", "reads"),
    [("Read", "file_path"), ("Bash", "command"), ("Grep", "path")],
)
def test_the_guard_blocks_the_agents_own_tools_on_an_undo_record(
    project: Path, home: Path, canary: str, tool: str, reads: str
) -> None:
    """Claude Code's Read, Grep and Bash tools run outside its sandbox: a record a killed write
    left in the state dir (the old file, values included) is as protected from them as a
    staging folder, by the folder's name, with no guard code of its own."""
    sinks.write(project, SinkSpec(), {"A": "1"}, in_place=True)  # makes the records' folder
    record = records_of(home) / "0123456789abcdef0123456789abcdef"
    record.write_text(f"API_KEY={canary}\n")
    named = {"Read": str(record), "Bash": f"cat {record}", "Grep": str(records_of(home))}[tool]
    event = {
        "session_id": "s",
        "cwd": str(project),
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": {reads: named, **({"pattern": "API"} if tool == "Grep" else {})},
    }

    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "guard"],
        input=json.dumps(event), capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip

    assert 2 == done.returncode, done.stderr
    assert canary not in done.stdout + done.stderr
