"""`offprompt status [FILE] [NAME...] [--json]` as a process: the table, the JSON the tool
answers, and the exit codes of DESIGN §9 (0 all set, 1 error, 2 usage, 4 something missing)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from helpers import assert_no_part

from offprompt import status
from offprompt.tools import schemas


def run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "status", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def filled(project: Path, canary: str) -> Path:
    """A project with an example file and a .env holding one of each status."""
    (project / ".env.example").write_text(
        "STRIPE_SECRET_KEY=\nSTRIPE_PUBLISHABLE_KEY=\nSESSION_SECRET=\nAPI_TOKEN=\nNEW_ONE=\n"
    )
    (project / ".env").write_text(
        f"STRIPE_SECRET_KEY=pk_test_{canary}\nSTRIPE_PUBLISHABLE_KEY=pk_test_{canary}\n"
        f"SESSION_SECRET={canary}\nAPI_TOKEN=<token>\n"
    )
    return project


def test_the_table_names_each_key_and_exits_4_when_one_is_missing(
    filled: Path, canary: str
) -> None:
    """A readable table: name, status, check and hint; the way to set what is missing."""
    done = run(filled)

    assert (done.returncode, done.stderr) == (4, "")
    lines = done.stdout.splitlines()
    assert lines[0] == ".env, keys from .env.example"
    assert lines[1].split() == ["NAME", "STATUS", "CHECK"]
    rows = [line.split(maxsplit=2) for line in lines[2:7]]
    assert rows == [
        [
            "STRIPE_SECRET_KEY",
            "set",
            "mismatch: looks like the Stripe publishable key; the Stripe secret key starts "
            "with sk_live_ or sk_test_ (rk_ for a restricted key)",
        ],
        ["STRIPE_PUBLISHABLE_KEY", "set", "ok"],
        ["SESSION_SECRET", "set"],
        ["API_TOKEN", "placeholder"],
        ["NEW_ONE", "missing"],
    ]
    assert lines[7] == "2 of 5 not set; to set them: offprompt collect API_TOKEN NEW_ONE"
    assert_no_part(canary, done.stdout, done.stderr)


def test_json_is_the_tools_answer(filled: Path, canary: str) -> None:
    """--json prints exactly what secret_status answers, valid against its outputSchema."""
    done = run(filled, "--json")

    assert (done.returncode, done.stderr) == (4, "")
    printed = json.loads(done.stdout)
    jsonschema.validate(printed, schemas.status_output())
    assert printed == status.report(filled).to_json()
    assert_no_part(canary, done.stdout)


def test_all_set_exits_0(project: Path, canary: str) -> None:
    """Every key set: exit 0."""
    (project / ".env").write_text(f"A_KEY={canary}\nB_KEY={canary}b\n")

    done = run(project)

    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[-1] == "Every key is set."
    assert_no_part(canary, done.stdout)


def test_a_first_argument_that_is_a_name_is_a_name(project: Path, canary: str) -> None:
    """`offprompt status A_KEY B_KEY` looks at those names in .env."""
    (project / ".env").write_text(f"A_KEY={canary}\n")

    done = run(project, "A_KEY", "B_KEY", "--json")

    assert done.returncode == 4
    assert json.loads(done.stdout)["keys"] == [
        {"name": "A_KEY", "status": "set"},
        {"name": "B_KEY", "status": "missing"},
    ]


def test_a_file_then_names(project: Path, canary: str) -> None:
    """`offprompt status cfg/.env.local A_KEY`: that file, that name; collect is told --file."""
    (project / "cfg").mkdir()
    (project / "cfg" / ".env.local").write_text(f"OTHER={canary}\n")

    done = run(project, "cfg/.env.local", "A_KEY")

    assert (done.returncode, done.stderr) == (4, "")
    assert done.stdout.splitlines()[0] == "cfg/.env.local"
    assert done.stdout.splitlines()[-1].endswith("offprompt collect A_KEY --file cfg/.env.local")
    assert_no_part(canary, done.stdout)


def test_a_missing_file_is_reported_not_an_error(project: Path) -> None:
    """No .env: every name missing, exit 4; not an error."""
    (project / ".env.example").write_text("A_KEY=\n")

    done = run(project)

    assert (done.returncode, done.stderr) == (4, "")
    assert done.stdout.splitlines()[0] == ".env (no such file), keys from .env.example"


@pytest.mark.parametrize("kind", ["folder", "fifo", "not utf-8"])
def test_an_unreadable_file_exits_1(project: Path, canary: str, kind: str) -> None:
    """A folder, a FIFO (never waited on) or bytes that are not UTF-8: one sentence, exit 1."""
    target = project / ".env"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.write_bytes(f"A_KEY={canary}".encode() + b"\xff\n")

    done = run(project)

    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr.startswith("offprompt: ")
    assert "cannot tell which keys" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert_no_part(canary, done.stderr)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ((".env", "lower_case"), "'lower_case' is not a key name"),
        (("A_KEY", "A_KEY"), "A_KEY is named twice"),
        (("../elsewhere.env",), "FILE '../elsewhere.env' leads outside the project folder"),
        (("--nope",), "No such option"),
    ],
)
def test_wrong_usage_exits_2(project: Path, args: tuple[str, ...], says: str) -> None:
    """Bad names, a FILE outside this folder, an unknown option: exit 2, saying why."""
    done = run(project, *args)

    assert done.returncode == 2
    assert says in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("stripe_secret_key",), "did you mean STRIPE_SECRET_KEY?"),
        (("name", "--json"), "did you mean NAME?"),
    ],
)
def test_a_lowercase_key_name_is_said_to_be_one_not_read_as_a_file(
    project: Path, args: tuple[str, ...], says: str
) -> None:
    """`status name` with no file called `name`: exit 2, suggesting the key name in upper case."""
    (project / ".env").write_text("NAME=x\n")

    done = run(project, *args)

    assert (done.returncode, done.stdout) == (2, "")
    assert f"{args[0]!r} is not a file here" in done.stderr
    assert says in done.stderr


def test_a_lowercase_file_that_exists_is_still_a_file(project: Path, canary: str) -> None:
    """A file really called `name` is read as the FILE, as before."""
    (project / "name").write_text(f"A_KEY={canary}\n")

    done = run(project, "name")

    assert (done.returncode, done.stdout.splitlines()[0]) == (0, "name")
    assert_no_part(canary, done.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ("A" * 256,),
        (".env", "B" * 300),
        ("a" * 300,),
        ("sub/" + "é" * 200,),
        (".env/" + "b" * 256, "A_KEY"),
    ],
    ids=["name-256", "name-300", "file-300", "file-400-bytes", "under"],
)
def test_over_long_names_and_files_are_one_line_and_exit_2(
    project: Path, args: tuple[str, ...]
) -> None:
    """A name of 256 bytes or more, or a FILE part too long for the file system: exit 2 and one
    stderr line, never a traceback."""
    (project / ".env").write_text("A_KEY=1\n")
    done = run(project, *args)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("offprompt: ")
    assert len(done.stderr.splitlines()) == 1, done.stderr


def test_keys_of_an_over_long_file_is_one_line_and_exit_2(project: Path) -> None:
    """`offprompt keys` with a FILE part too long for the file system: exit 2, one line."""
    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "keys", "k" * 300],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("offprompt: ")
    assert len(done.stderr.splitlines()) == 1, done.stderr
