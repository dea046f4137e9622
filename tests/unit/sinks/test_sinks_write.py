"""offprompt.sinks.write and inspect_target: what lands on disk, and what is reported."""

import os
import re
import stat
from pathlib import Path

import pytest
import sinks_readers as readers

from offprompt.errors import RefusedRequest, UnsafeValue, WriteError
from offprompt.sinks import SinkSpec, Target, WriteResult, inspect_target, write

DOTENV = SinkSpec()


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_env_file_is_mode_0600(project: Path) -> None:
    """A created .env is readable by its owner only."""
    write(project, DOTENV, {"A": "1"})
    assert 0o600 == mode(project / ".env")


def test_rewritten_env_file_becomes_mode_0600(project: Path) -> None:
    """A world-readable .env is tightened by the write."""
    env = project / ".env"
    env.write_text("X=1\n")
    env.chmod(0o644)
    write(project, DOTENV, {"A": "1"})
    assert 0o600 == mode(env)


def test_missing_parent_folders_are_created_0700(project: Path) -> None:
    """Every folder the write creates is private."""
    write(project, SinkSpec(path="config/secrets/.env"), {"A": "1"})
    assert (0o700, 0o700) == (mode(project / "config"), mode(project / "config" / "secrets"))


def test_result_reports_names_keys_and_read_back(project: Path) -> None:
    """added/replaced/kept by name, every file key in order, values parsed from the file."""
    (project / ".env").write_text("B=old\nX=1\nG=kept\n")
    result = write(
        project, DOTENV, {"A": "a", "B": "b", "G": "g"}, keep_if_present=frozenset({"G"})
    )
    expected = WriteResult(
        path=project / ".env",
        display=".env",
        added=("A",),
        replaced=("B",),
        kept=("G",),
        file_keys=("B", "X", "G", "A"),
        read_back={"A": "a", "B": "b"},
    )
    assert expected == result
    assert {"A": "a", "B": "b"} == dict(result.read_back)


def test_display_is_relative_with_slashes(project: Path) -> None:
    """Nested paths show relative to the project."""
    result = write(project, SinkSpec(path="./a/b/../.env.local"), {"A": "1"})
    assert ("a/.env.local", project / "a" / ".env.local") == (result.display, result.path)


def test_only_kept_keys_leave_the_file_untouched(project: Path) -> None:
    """Nothing to write means no rewrite: same inode, same mode."""
    env = project / ".env"
    env.write_text("G=set\n")
    env.chmod(0o644)
    before = env.stat()
    result = write(project, DOTENV, {"G": "new"}, keep_if_present=frozenset({"G"}))
    after = env.stat()
    assert (("G",), {}) == (result.kept, dict(result.read_back))
    assert (before.st_ino, before.st_mtime_ns, 0o644) == (
        after.st_ino,
        after.st_mtime_ns,
        mode(env),
    )


def test_file_sink_holds_exactly_the_value(project: Path) -> None:
    """No newline added, nothing else written."""
    value = "-----BEGIN KEY-----\nabc\n-----END KEY-----"
    result = write(project, SinkSpec("file", "keys/service.pem"), {"PEM": value})
    path = project / "keys" / "service.pem"
    assert value.encode() == path.read_bytes()
    assert (("PEM",), (), (), {"PEM": value}) == (
        result.added,
        result.replaced,
        result.file_keys,
        dict(result.read_back),
    )
    assert 0o600 == mode(path)


def test_file_sink_takes_values_no_dotenv_form_carries(project: Path) -> None:
    """Quotes of both kinds, ${}, CR and NUL go to a file sink as they are."""
    value = 'it\'s "x" ${HOME}\r\n\0 \\\\'
    write(project, SinkSpec("file", "blob"), {"BLOB": value})
    assert value.encode() == (project / "blob").read_bytes()


def test_file_sink_replaces_an_existing_file(project: Path) -> None:
    """An existing non-empty file is reported as replaced."""
    (project / "token").write_text("old")
    result = write(project, SinkSpec("file", "token"), {"TOKEN": "new"})
    assert (("TOKEN",), "new") == (result.replaced, (project / "token").read_text())


def test_file_sink_keeps_an_existing_generated_value(project: Path) -> None:
    """keep_if_present leaves a non-empty file alone."""
    (project / "token").write_text("old")
    result = write(
        project, SinkSpec("file", "token"), {"TOKEN": "new"}, keep_if_present=frozenset({"TOKEN"})
    )
    assert (("TOKEN",), "old") == (result.kept, (project / "token").read_text())


def test_file_sink_refuses_more_than_one_name(project: Path) -> None:
    """A file holds one secret."""
    with pytest.raises(RefusedRequest):
        write(project, SinkSpec("file", "f"), {"A": "1", "B": "2"})


def test_unsafe_value_creates_neither_file_nor_folder(project: Path) -> None:
    """Refused before touching anything."""
    with pytest.raises(UnsafeValue):
        write(project, SinkSpec(path="new/.env"), {"A": "ok", "B": "'\""})
    assert [] == os.listdir(project)


def test_invalid_name_is_refused(project: Path) -> None:
    """Only shell identifiers."""
    with pytest.raises(RefusedRequest):
        write(project, DOTENV, {"BAD-NAME": "v"})


def test_no_names_is_refused(project: Path) -> None:
    """An empty request writes nothing."""
    with pytest.raises(RefusedRequest):
        write(project, DOTENV, {})


def test_non_utf8_env_stops_the_write(project: Path) -> None:
    """An undecodable file is never treated as empty."""
    env = project / ".env"
    env.write_bytes(b"A=\xff\xfe\n")
    with pytest.raises(WriteError, match="not UTF-8"):
        write(project, DOTENV, {"B": "1"})
    assert b"A=\xff\xfe\n" == env.read_bytes()


def test_fifo_at_the_path_stops_the_write_without_blocking(project: Path) -> None:
    """A special file is refused, not read."""
    os.mkfifo(project / ".env")
    with pytest.raises(WriteError, match="not a regular file"):
        write(project, DOTENV, {"B": "1"})
    assert stat.S_ISFIFO((project / ".env").lstat().st_mode)


def test_folder_at_the_path_is_refused(project: Path) -> None:
    """A directory is not a destination."""
    (project / ".env").mkdir()
    with pytest.raises(RefusedRequest, match="folder"):
        write(project, DOTENV, {"B": "1"})


def test_file_where_a_parent_folder_should_be_stops_the_write(project: Path) -> None:
    """A path through a file fails cleanly."""
    (project / "config").write_text("x")
    with pytest.raises(WriteError, match="not a folder"):
        write(project, SinkSpec(path="config/.env"), {"B": "1"})
    assert "x" == (project / "config").read_text()


def test_existing_line_that_would_swallow_the_new_one_stops_the_write(project: Path) -> None:
    """An unclosed quote above would hide the value; refuse instead of writing a surprise."""
    env = project / ".env"
    env.write_text('A="unclosed\n')
    with pytest.raises(WriteError, match="hide B"):
        write(project, DOTENV, {"B": "it's"})
    assert 'A="unclosed\n' == env.read_text()


def test_stale_temp_file_from_an_earlier_version_is_removed(project: Path) -> None:
    """A temp file an earlier version left beside .env (it holds secrets) is cleaned up."""
    stale = project / ".env.offprompt-0123456789abcdef.tmp"
    stale.write_text("A=secret\n")
    other = project / ".env.backup.tmp"
    other.write_text("mine")
    write(project, DOTENV, {"A": "1"})
    assert [".env", ".env.backup.tmp"] == sorted(os.listdir(project))


def test_stale_staging_folder_from_a_killed_writer_is_removed(project: Path) -> None:
    """A leftover staging folder (it can hold the new file) is removed by the next write."""
    stage = project / ".offprompt-0123456789abcdef"
    stage.mkdir(mode=0o700)
    (stage / ".gitignore").write_text("*\n")
    (stage / ".env.new").write_text("A=secret\n")
    empty = project / ".offprompt-00000000000000ff"
    empty.mkdir()
    write(project, DOTENV, {"A": "1"})
    assert [".env"] == sorted(os.listdir(project))


def test_folders_that_only_look_like_staging_are_left_alone(project: Path, tmp_path: Path) -> None:
    """A look-alike holding a subfolder, a symlink to elsewhere, or another name stays as is."""
    nested = project / ".offprompt-fedcba9876543210"
    (nested / "sub").mkdir(parents=True)
    (nested / "keep.txt").write_text("mine")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("mine")
    (project / ".offprompt-abcdefabcdefabcd").symlink_to(elsewhere)
    (project / ".offprompt-cache").mkdir()
    write(project, DOTENV, {"A": "1"})
    assert (sorted(os.listdir(project)), os.listdir(elsewhere), sorted(os.listdir(nested))) == (
        [".env", ".offprompt-abcdefabcdefabcd", ".offprompt-cache", ".offprompt-fedcba9876543210"],
        ["keep.txt"],
        ["keep.txt", "sub"],
    )


def test_inspect_new_destination(project: Path) -> None:
    """A file that does not exist yet: writable, nothing present, no git."""
    expected = Target(
        path=project / "sub" / ".env",
        display="sub/.env",
        exists=False,
        present=frozenset(),
        tracked=False,
        ignored=False,
        in_git_repo=False,
        writable=True,
        problem=None,
    )
    assert expected == inspect_target(project, SinkSpec(path="sub/.env"), ["A"])


def test_inspect_reports_names_set_to_a_non_empty_value(project: Path) -> None:
    """present: assigned and non-empty, as a generated key would be kept."""
    (project / ".env").write_text("A=1\nB=\nC\nD=x\nD=\n")
    target = inspect_target(project, DOTENV, ["A", "B", "C", "D", "E"])
    assert (True, frozenset({"A"})) == (target.exists, target.present)


def test_inspect_file_sink_reports_present_when_non_empty(project: Path) -> None:
    """A file sink's name is present when the file has content."""
    (project / "full").write_text("x")
    (project / "empty").write_text("")
    full = inspect_target(project, SinkSpec("file", "full"), ["K"])
    empty = inspect_target(project, SinkSpec("file", "empty"), ["K"])
    assert (frozenset({"K"}), frozenset()) == (full.present, empty.present)


def test_inspect_gives_a_problem_for_an_unreadable_file(project: Path) -> None:
    """A non-UTF-8 .env is shown as a problem before anyone types."""
    (project / ".env").write_bytes(b"\xff")
    target = inspect_target(project, DOTENV, ["A"])
    assert target.problem is not None
    assert "not UTF-8" in target.problem


def test_inspect_refuses_a_path_outside_the_project(project: Path) -> None:
    """Path refusals are raised, not reported as problems."""
    with pytest.raises(RefusedRequest):
        inspect_target(project, SinkSpec(path="../x"), ["A"])


@pytest.mark.parametrize("stray", ["  \n", "\t\n", "   # indented comment\n"])
@pytest.mark.parametrize("node", readers.NODES)
def test_write_beside_a_line_without_equals_reads_back_in_node(
    project: Path, canary: str, stray: str, node: str
) -> None:
    """Node 22 and 24 skip a blank-looking line or an indented comment (Node 20 glued it on)."""
    env = project / ".env"
    env.write_text(f"X=1\n{stray}")
    write(project, DOTENV, {"A": canary})
    assert f"X=1\n{stray}A={canary}\n" == env.read_text()
    assert {"X": "1", "A": canary} == readers.nodejs(project, ["X", "A"], node)
    assert [".env"] == os.listdir(project)


@pytest.mark.parametrize(
    ("before", "line"),
    [("X= \n", 1), ("# c\nX=\t\n", 2), ("export X=  \n\n", 1), ("X=1\nY=  ", 2)],
)
def test_line_whose_value_node_takes_from_the_next_line_stops_the_write(
    project: Path, canary: str, before: str, line: int
) -> None:
    """`X=` and only blanks: Node 22 and 24 read the following line as X's value."""
    env = project / ".env"
    env.write_text(before)
    with pytest.raises(WriteError, match=rf"line {line} of \.env has nothing but blanks") as e:
        write(project, DOTENV, {"A": canary})
    assert canary not in str(e.value)
    assert before == env.read_text()


@pytest.mark.parametrize("node", readers.NODES)
def test_node_does_read_the_next_line_as_the_value_of_a_blank_assignment(
    project: Path, node: str
) -> None:
    """The quirk the refusal above guards against, seen in the real binaries."""
    (project / ".env").write_text("X= \nA=1\n")
    assert {"X": "A=1", "A": None} == readers.nodejs(project, ["X", "A"], node)


def test_inspect_shows_a_line_that_would_hide_the_names(project: Path) -> None:
    """The page learns about a line that hides the names before anyone types."""
    (project / ".env").write_text("X=1\nY= \n")
    problem = inspect_target(project, DOTENV, ["A"]).problem
    assert problem is not None
    assert "Node's --env-file would not see A: line 2 of .env" in problem


def test_unclosed_backtick_above_stops_the_write(project: Path) -> None:
    """Node would run a backtick value into the new line."""
    env = project / ".env"
    env.write_text("# c\nX=`open\n")
    with pytest.raises(WriteError, match=r"line 2 of \.env opens a quote or backtick"):
        write(project, DOTENV, {"A": "has ` tick"})
    assert "# c\nX=`open\n" == env.read_text()


def test_line_node_reads_as_the_name_again_stops_the_write(project: Path, canary: str) -> None:
    """python-dotenv reads `\\'` as a quote inside the value; Node ends the value there."""
    before = "A=old\nX='it\\'s\nA=evil'\n"
    env = project / ".env"
    env.write_text(before)
    with pytest.raises(WriteError, match=r"line 3 of \.env sets it again") as e:
        write(project, DOTENV, {"A": canary})
    assert canary not in str(e.value)
    assert before == env.read_text()


def test_stray_line_below_the_replaced_name_does_not_stop_the_write(project: Path) -> None:
    """Only lines that would hide a written name matter."""
    (project / ".env").write_text("A=1\nY= \nB=2\n")
    write(project, DOTENV, {"A": "new"})
    assert "A=new\nY= \nB=2\n" == (project / ".env").read_text()


@pytest.mark.parametrize(
    ("existing", "why"),
    [
        ("X='it\\'s'\n", "an unclosed quote"),
        ("X=$(date)\n", "a $(...) command"),
        ("X=C:\\dir\\\n", "ends with a backslash"),
    ],
)
def test_line_bash_would_read_past_stops_the_write(project: Path, existing: str, why: str) -> None:
    """python-dotenv reads these lines, but bash would run on into the new statement."""
    env = project / ".env"
    env.write_text(existing)
    with pytest.raises(WriteError, match=re.escape(why)):
        write(project, DOTENV, {"A": "1"})
    assert existing == env.read_text()
