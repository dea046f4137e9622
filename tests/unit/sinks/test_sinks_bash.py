"""Whatever the other lines of a .env do, bash (`set -a; . ./.env`) reads exactly what was written,
or the write is refused naming the line and nothing changes. Real bash is the oracle."""

import os
import re
import secrets
import subprocess
import tempfile
from pathlib import Path

import pytest
import sinks_readers as readers
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from offprompt.errors import WriteError
from offprompt.sinks import SinkSpec, dotenv, inspect_target, shell, write

DOTENV = SinkSpec()


def bash_reads(folder: Path, name: str = "API_KEY") -> str | None:
    """What bash holds in `name` after `set -a; . ./.env` in `folder`."""
    return readers.bash(folder, [name])[name]


def bash_reads_text(text: str, name: str = "API_KEY") -> str | None:
    """What bash would hold in `name` if `text` were the .env (written to a scratch folder)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / ".env").write_text(text)
        (Path(tmp) / "other").write_text(f"{name}=evil\n")
        try:
            return bash_reads(Path(tmp), name)
        except subprocess.CalledProcessError:
            return None  # bash stopped on an error (`declare -i` of a non-number): not our value


def refused(project: Path, before: str, value: str, line: int) -> str:
    """Write `value` to API_KEY over `before`: refused naming `line`, and nothing changed."""
    env = project / ".env"
    env.write_text(before)
    with pytest.raises(WriteError, match=rf"\bline {line} of \.env\b") as caught:
        write(project, DOTENV, {"API_KEY": value})
    assert before == env.read_text()
    assert [".env"] == os.listdir(project)
    message = str(caught.value)
    assert not value or value not in message
    assert "evil" not in message
    return message


# --- The reported lines ----------------------------------------------------------------------

LATER_LINES = [
    "X=a;API_KEY=evil",
    "X=1 API_KEY=evil",
    "X=a&&API_KEY=evil",
    "X=a;export API_KEY=evil",
    "unset API_KEY",
    "X=$((API_KEY=5))",
]


@pytest.mark.parametrize("later", LATER_LINES)
def test_a_later_line_bash_runs_stops_the_write(project: Path, canary: str, later: str) -> None:
    """The issue's lines after `API_KEY=old`: bash would read another value, so refuse line 2."""
    before = f"API_KEY=old\n{later}\n"
    assert canary != bash_reads_text(dotenv.upsert(before, {"API_KEY": canary}).text)
    refused(project, before, canary, 2)


# --- The wider family ------------------------------------------------------------------------
# (existing file, the line to name). Each one makes bash end with something other than the
# written value, checked against real bash before offprompt is asked.
HAZARDS = [
    ("API_KEY=old\ndeclare API_KEY=evil\n", 2),
    ("readonly API_KEY\nAPI_KEY=old\n", 1),
    ("declare -i API_KEY\nAPI_KEY=old\n", 1),
    ("declare -l API_KEY\nAPI_KEY=old\n", 1),
    ("API_KEY=old\nX=${API_KEY:=evil}\n", 2),
    ("API_KEY=old\nA[API_KEY=5]=1\n", 2),
    ("API_KEY=old\nX=$[API_KEY=5]\n", 2),
    ("API_KEY=old\n((API_KEY=5))\n", 2),
    ("API_KEY=old\nY=abcdef\nX=${Y:API_KEY=5}\n", 3),
    ("trap 'API_KEY=evil' RETURN\nAPI_KEY=old\n", 1),
    ("API_KEY=old\n. ./other\n", 2),
    ("API_KEY=old\nsource ./other\n", 2),
    ("API_KEY=old\neval API_KEY=evil\n", 2),
    ("API_KEY=old\nread API_KEY <<<evil\n", 2),
    ("API_KEY=old\nprintf -v API_KEY %s evil\n", 2),
    ("API_KEY=old\nmapfile API_KEY <<<evil\n", 2),
    ("API_KEY=old\n{ API_KEY=evil; }\n", 2),
    ("API_KEY=old\nAPI_KEY+=evil\n", 2),
    ("API_KEY=old\nexport API_KEY+=evil\n", 2),
    ("API_KEY=old\nX=1 export API_KEY=evil\n", 2),
    ("API_KEY=old\nAPI_\\\nKEY=evil\n", 2),
    ('API_KEY=old\nX="$\\\n{API_KEY:=evil}"\n', 2),
    ("API_KEY=old\nX=1 \\\nY=2 API_KEY=evil\n", 3),
    ("return\nAPI_KEY=old\n", 1),
    ("X=1 ||\nAPI_KEY=old\n", 1),
    ("f() { API_KEY=evil; }\nAPI_KEY=old\nf\n", 1),
    ("API_KEY=old\nX=$(echo 1) API_KEY=evil\n", 2),
    ("API_KEY=old\nX=`echo 1` API_KEY=evil\n", 2),
    ("API_KEY=old\ncat <<EOF\nEOF\nY=1 API_KEY=evil\n", 2),
    ("API_KEY=old\nX=C:\\dir\\\nY=1 API_KEY=evil\n", 3),
    ("X=C:\\dir\\\nAPI_KEY=old\n", 1),
]


@pytest.mark.parametrize(("before", "line"), HAZARDS)
def test_any_line_that_changes_what_bash_reads_stops_the_write(
    project: Path, before: str, line: int
) -> None:
    """Before or after our statement, a line that makes bash read another value is named."""
    values = ("Vv-" + secrets.token_hex(8), "")  # `${API_KEY:=x}` assigns only when empty
    misread = [
        v for v in values if v != bash_reads_text(dotenv.upsert(before, {"API_KEY": v}).text)
    ]
    assert misread
    for written in values:
        refused(project, before, written, line)


# Lines offprompt does not follow, refused though bash might happen to read the value: nothing
# in the file is vouched for unless every command bash runs is understood.
UNFOLLOWED = [
    ("X=$(date)\nAPI_KEY=old\n", 1, "a $(...) command"),
    ("API_KEY=old\nX=`date`\n", 2, "a backtick command"),
    ("API_KEY=old\necho hi\n", 2, "the command 'echo'"),
    ("API_KEY=old\nif true; then X=1; fi\n", 2, "the shell keyword 'if'"),
    ("API_KEY=old\nsk_live_secretish\n", 2, "a command (only assignments"),
    ("API_KEY=old\nX=(1 2)\n", 2, "a parenthesis"),
    ("API_KEY=old\nX=1 > out\n", 2, "a redirection"),
    ("API_KEY=old\nX=1 &\n", 2, "a '&'"),
    ("API_KEY=old\nX=1 ;;\n", 2, "';;'"),
    ("API_KEY=old\nX=${Y:?}\n", 2, "a ${...} expansion"),
    ("API_KEY=old\nX=${!Y}\n", 2, "a ${...} expansion"),
    ("API_KEY=old\nX=${API_KEY=evil}\n", 2, "a ${...} expansion"),
    ("API_KEY=old\nX=$(API_KEY=evil)\n", 2, "a $(...) command"),
    ("API_KEY=old\nY=1 API_KEY=evil | true\n", 2, "a pipe"),
    ("API_KEY=old\nX=${Y@P}\n", 2, "a ${...} expansion"),
    ("API_KEY=old\nX=${Y:-a b}\n", 2, "a ${...} expansion"),
    ("API_KEY=old\nexport -n X\n", 2, "an 'export' with an option"),
    ("API_KEY=old\nexport\n", 2, "an 'export' with no name"),
    ("API_KEY=old\nexport $V\n", 2, "an 'export' of something"),
    ("API_KEY=old\nPROMPT_COMMAND='API_KEY=evil'\n", 2, "PROMPT_COMMAND"),
    ("API_KEY=old\nPS4='${API_KEY:=evil}'\n", 2, "PS4"),
    ("API_KEY=old\nX='unclosed\n", 2, "an unclosed quote"),
    ('API_KEY=old\nX=$"hi"\n', 2, 'a $"..."'),
    ("API_KEY=old\nX=1 &&\n", 2, "a && with no command after it"),
]


@pytest.mark.parametrize(("before", "line", "what"), UNFOLLOWED)
def test_a_line_offprompt_cannot_follow_stops_the_write(
    project: Path, canary: str, before: str, line: int, what: str
) -> None:
    """The reason names the line and says in words what is there, never a value."""
    message = refused(project, before, canary, line)
    assert what in message
    assert "secretish" not in message


def test_a_risky_line_shows_on_the_page_before_anyone_types(project: Path) -> None:
    """inspect_target tries the write with a stand-in and reports the line."""
    (project / ".env").write_text("API_KEY=old\nunset API_KEY\n")
    problem = inspect_target(project, DOTENV, ["API_KEY"]).problem
    assert problem is not None
    assert "line 2 of .env holds the command 'unset'" in problem


def test_the_line_named_is_the_one_in_the_file_as_it_is(project: Path, canary: str) -> None:
    """Line numbers count the existing file, not the text offprompt would have written."""
    before = "API_KEY='one\ntwo\nthree'\nX=1\nAPI_KEY=dup\n\nunset X\n"
    refused(project, before, canary, 7)


def test_a_name_bash_sets_itself_is_refused(project: Path, canary: str) -> None:
    """SECONDS, RANDOM and their kind would read back as bash's own value."""
    with pytest.raises(WriteError, match="bash keeps a value of its own in SECONDS"):
        write(project, DOTENV, {"SECONDS": canary})
    assert [] == os.listdir(project)


def test_bash_own_names_really_do_not_read_back(project: Path) -> None:
    """Each name offprompt refuses as bash's own reads back otherwise (COLUMNS and LINES only in
    an interactive shell, BASH_CMDS once PATH is assigned)."""
    names = sorted(shell.BASH_OWN - {"BASH_CMDS", "COLUMNS", "LINES"})
    (project / ".env").write_text("".join(f"{n}=zz{i}\n" for i, n in enumerate(names)))
    seen = readers.bash(project, names)
    assert [] == [n for i, n in enumerate(names) if seen[n] == f"zz{i}"]


def test_every_variable_of_bash_is_refused_or_reads_back(project: Path) -> None:
    """Against `compgen -v` of real bash: no variable name offprompt writes reads otherwise."""
    out = subprocess.run(
        ["bash", "-c", "compgen -v"], env=readers.CLEAN_ENV, capture_output=True, check=True
    ).stdout.decode()
    names = sorted({n for n in out.split() if dotenv.NAME_PATTERN.fullmatch(n)} | shell.BASH_OWN)
    accepted: dict[str, str] = {}
    for i, name in enumerate(names):
        try:
            write(project, DOTENV, {name: f"zz{i}"})
        except WriteError:
            continue
        accepted[name] = f"zz{i}"
    assert len(accepted) > 10
    assert accepted == readers.bash(project, list(accepted))


# --- Ordinary files stay writable ----------------------------------------------------------

ORDINARY = [
    "",
    "# app settings\n\nexport X=1\nY='two words' # note\nZ=\"it's\"\n",
    'API_KEY=old\nURL=${HOST}:${PORT:-80}/x\nB="${HOST:+on}"\nC=$HOST/$1\n',
    "X='multi\nline value'\nAPI_KEY=old\nY=\"also\nmulti\"\n",
    "# windows\r\nX=1\r\n\r\nAPI_KEY=old\r\n  \r\nexport Y='a b'\r\n",
    "X=1;Y=2 && Z=3 || W=4\nAPI_KEY=early;API_KEY=early2\nAPI_KEY=old\n",
    "UID=1000\nGID=1000\nAPI_KEY=old\nexport API_KEY\nCOPY=$API_KEY\n",
    "X=$'tab\\there'\nY=a\\ b\nZ=C:\\\\dir\nW=a=b=c\nV=\nexport U=1 T\n",
    "X=1 \\\n  Y=2\nAPI_KEY=old # trailing comment\n",
]


@pytest.mark.parametrize("before", ORDINARY)
@pytest.mark.parametrize("form", ["plain", "it's quoted", "multi\nline"])
def test_ordinary_files_stay_writable(project: Path, canary: str, before: str, form: str) -> None:
    """Comments, quotes, references, multi-line values, CRLF: the write goes through and every
    reader gets the value."""
    (project / ".env").write_bytes(before.encode())
    value = f"{form}-{canary}"
    write(project, DOTENV, {"API_KEY": value})
    for reader, seen in readers.all_readers(project, ["API_KEY"]).items():
        assert (reader, value) == (reader, seen["API_KEY"])


# --- Property ------------------------------------------------------------------------------
# Files built from the lines people leave in a .env and the lines that would defeat a write.
# Every line is safe to run: nothing here writes outside the scratch folder.
HARMLESS_VALUES = [
    "a",
    "",
    "'two words'",
    '"it\'s"',
    "$'x\\ty'",
    "${OTHER}",
    '"${OTHER:-d}"',
    "$OTHER/x",
    "'multi\nline'",
    '"multi\nline"',
    "a\\ b",
    "old # note",
    "a=b",
]
RISKY_VALUES = [
    "C:\\dir\\",
    "${API_KEY:=evil}",
    "$((API_KEY=5))",
    "$[API_KEY=5]",
    "$(echo evil)",
    "`echo evil`",
    '"$\\\n(echo evil)"',
    "${OTHER:-a b}",
    "~",
    "'open",
]
NAMES = ["X", "OTHER", "API_KEY", "API_KEY", "API_\\\nKEY"]
COMMANDS = [
    "unset API_KEY",
    "declare API_KEY=evil",
    "readonly API_KEY",
    "declare -i API_KEY",
    "eval API_KEY=evil",
    "read API_KEY <<<evil",
    "printf -v API_KEY %s evil",
    ". ./other",
    "trap 'API_KEY=evil' RETURN",
    "export API_KEY",
    "export X",
    "true",
    "X=1 | true",
    "return",
    "{ API_KEY=evil; }",
    "f() { :; }",
    "cat <<EOF\nAPI_KEY=evil\nEOF",
    "PROMPT_COMMAND=x",
]
ASSIGNMENTS = st.builds(
    lambda export, name, op, value: f"{export}{name}{op}{value}",
    st.sampled_from(["", "", "export "]),
    st.sampled_from(NAMES),
    st.sampled_from(["=", "=", "+="]),
    st.one_of(st.sampled_from(HARMLESS_VALUES), st.sampled_from(HARMLESS_VALUES + RISKY_VALUES)),
)
ITEMS = st.one_of(ASSIGNMENTS, ASSIGNMENTS, ASSIGNMENTS, st.sampled_from(COMMANDS))
LINES = st.one_of(
    st.sampled_from(["", "  ", "# it's a comment", "API_KEY=old", "export API_KEY='old'", "\r"]),
    st.lists(ITEMS, min_size=1, max_size=3).flatmap(
        lambda items: st.lists(
            st.sampled_from([";", " ", " && ", " || ", "; ", " \\\n"]),
            min_size=len(items) - 1,
            max_size=len(items) - 1,
        ).map(lambda seps: "".join(i + s for i, s in zip(items, [*seps, ""], strict=True)))
    ),
)
FILES = st.lists(st.tuples(LINES, st.sampled_from(["\n", "\n", "\r\n", " # c\n"])), max_size=6).map(
    lambda lines: "".join(line + end for line, end in lines)
)
FORMS = ["{}", "it's {}", "{}\nsecond line", "a b {}", "{} # not a comment"]


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(before=FILES, form=st.sampled_from(FORMS))
def test_bash_reads_every_accepted_write_exactly_and_a_refusal_changes_nothing(
    before: str, form: str
) -> None:
    """Whatever lines the file holds, a write offprompt accepts is what real bash reads."""
    value = form.format("canary-" + secrets.token_hex(8))
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        env = project / ".env"
        env.write_bytes(before.encode())
        (project / "other").write_text("API_KEY=evil\n")
        why = None
        try:
            write(project, DOTENV, {"API_KEY": value})
        except WriteError as e:
            why = str(e)
        if why is None:
            event("written")
            assert value == bash_reads(project)
        else:
            event("refused")
            assert before.encode() == env.read_bytes()
            assert value not in why
            assert re.search(r"\bline \d+ of \.env\b", why) or "bash" not in why


# --- What bash reads for the other keys ----------------------------------------------------
OTHERS = ["X", "OTHER", "API_KEY", "NEW_KEY"]


def bash_all(folder: Path) -> dict[str, str | None] | None:
    """What bash reads for every name of OTHERS (None when bash stops on an error)."""
    try:
        return readers.bash(folder, OTHERS)
    except subprocess.CalledProcessError:
        return None


# Found with the oracle: python-dotenv reads the whole line as API_KEY's statement, so its
# rewrite took X's assignment with it, or ended a continuation that had swallowed the next line.
OTHER_KEY_CASES = [
    "API_KEY=old;X=5\n",
    "API_KEY=old X=5\n",
    "API_KEY=old && X=5\n",
    "API_KEY=old\nAPI_KEY=dup;X=5\n",
    "API_KEY=a\\\nX=5\n",
    "API_KEY=old\\\nX=5\nAPI_KEY=2\n",
    "API_KEY=old\r\nAPI_KEY=dup;X=5\r\n",
]


@pytest.mark.parametrize("before", OTHER_KEY_CASES)
def test_a_rewritten_line_that_sets_another_key_for_bash_stops_the_write(
    project: Path, canary: str, before: str
) -> None:
    """A line bash reads as more than API_KEY's assignment is not rewritten under it: the
    write is refused naming the line, and nothing changes."""
    env = project / ".env"
    env.write_bytes(before.encode())
    (project / "other").write_text("API_KEY=evil\n")
    old = bash_all(project)
    with pytest.raises(WriteError, match=r"\bline \d+ of \.env\b") as caught:
        write(project, DOTENV, {"API_KEY": canary})
    assert "X" in str(caught.value)
    assert before.encode() == env.read_bytes()
    assert old == bash_all(project)


# Lines that set API_KEY and another key at once, so a random file meets them often.
SHARED_LINES = st.builds(
    lambda name, sep, other: f"{name}=old{sep}{other}",
    st.sampled_from(["API_KEY", "X", "NEW_KEY"]),
    st.sampled_from([";", " ", " && ", " || ", "\\\n", " \\\n"]),
    st.sampled_from(["X=5", "OTHER=6", "API_KEY=7", "Y"]),
)
MIXED_FILES = st.lists(
    st.tuples(st.one_of(LINES, SHARED_LINES), st.sampled_from(["\n", "\n", "\r\n"])), max_size=6
).map(lambda lines: "".join(line + end for line, end in lines))


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    before=MIXED_FILES,
    names=st.lists(
        st.sampled_from(["API_KEY", "X", "NEW_KEY"]), min_size=1, max_size=2, unique=True
    ),
    form=st.sampled_from(FORMS),
)
def test_a_write_never_changes_what_bash_reads_for_another_key(
    before: str, names: list[str], form: str
) -> None:
    """Property (issue 22 item 4): upserting some keys leaves bash's reading of every other
    key of the file exactly as it was, or the write is refused and nothing changes."""
    value = form.format("canary-" + secrets.token_hex(8))
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        env = project / ".env"
        env.write_bytes(before.encode())
        (project / "other").write_text("API_KEY=evil\n")
        old = bash_all(project)
        try:
            write(project, DOTENV, dict.fromkeys(names, value))
        except WriteError:
            event("refused")
            assert before.encode() == env.read_bytes()
            return
        event("written")
        new = bash_all(project)
        if old is None:
            return  # bash stopped on the old file: nothing it read to keep
        assert new is not None, env.read_text()
        others = [k for k in OTHERS if k not in names]
        assert {k: new[k] for k in others} == {k: old[k] for k in others}, env.read_text()
