"""`offprompt fingerprints` and `offprompt keys`: names and fingerprints, never a value."""

import json
import os
import secrets
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from offprompt import sinks
from offprompt.crypto.fingerprint import fingerprint
from offprompt.spec import SinkSpec
from offprompt.table import cells, local_time
from offprompt.write.journal import Journal, JournalEntry

Run = Callable[..., Result]
FIELDS = ["at", "project", "file", "names", "kept", "fingerprint", "client", "request_id"]


def record(project: Path, n: int, **fields: object) -> JournalEntry:
    values: dict[str, object] = {
        "at": f"2026-11-30T02:41:{n:02d}Z",
        "project": str(project),
        "file": ".env",
        "names": ("STRIPE_SECRET_KEY",),
        "kept": (),
        "fingerprint": "🍋 🥝 🌮 🧀",
        "client": "claude-code",
        "request_id": f"req{n:04d}",
    }
    values.update(fields)
    entry = JournalEntry(**values)  # type: ignore[arg-type]
    Journal().append(entry)
    return entry


@pytest.fixture
def written(project: Path, canary: str) -> list[JournalEntry]:
    """Two real writes of canary values into the project's .env, journaled as the server does."""
    entries = []
    for n, names in enumerate((("STRIPE_SECRET_KEY",), ("DATABASE_URL", "SESSION_SECRET"))):
        values = {name: f"{canary}-{name}" for name in names}
        sinks.write(project, SinkSpec(), values)
        fp = fingerprint(secrets.token_bytes(32), list(values.items()))
        entries.append(record(project, n, names=names, fingerprint=str(fp)))
    return entries


def test_fingerprints_lists_writes_newest_first(
    run: Run, project: Path, written: list[JournalEntry], canary: str
) -> None:
    """A table of when, project, file, names, fingerprint and client; no value anywhere."""
    result = run("fingerprints")

    assert (0, "") == (result.exit_code, result.stderr)
    lines = result.stdout.splitlines()
    assert lines[0].split() == [
        "LOCAL",
        "TIME",
        "PROJECT",
        "FILE",
        "NAMES",
        "FINGERPRINT",
        "CLIENT",
    ]
    assert lines[1].startswith(local_time("2026-11-30T02:41:01Z") + "  ")
    assert "DATABASE_URL, SESSION_SECRET" in lines[1]
    assert written[1].fingerprint in lines[1]  # type: ignore[operator]
    assert lines[2].startswith(local_time("2026-11-30T02:41:00Z") + "  ")
    assert canary not in result.output


def test_fingerprints_table_lines_up_and_shows_local_time(
    project: Path, home: Path, tmp_path: Path
) -> None:
    """Each column starts at the same cell on every row (emoji are two cells wide), and the
    time is this machine's: 02:41 UTC is 08:11 at UTC+05:30."""
    record(project, 0, fingerprint="🍋 🥝 🌮 🧀", client="claude-code")
    record(project, 1, fingerprint=None, client="codex")
    env = {**os.environ, "TZ": "IST-05:30", "OFFPROMPT_STATE_DIR": str(home / "state")}

    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "fingerprints"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )

    header, newest, oldest = done.stdout.splitlines()
    assert newest.startswith("2026-11-30 08:11:01  ")
    assert oldest.startswith("2026-11-30 08:11:00  ")
    for column, new, old in (("FINGERPRINT", "- ", "🍋 🥝"), ("CLIENT", "codex", "claude-code")):
        at = cells(header[: header.index(column)])
        assert from_cell(newest, at).startswith(new)
        assert from_cell(oldest, at).startswith(old)


def from_cell(line: str, at: int) -> str:
    """What `line` shows from terminal cell `at` on."""
    for i in range(len(line) + 1):
        if cells(line[:i]) >= at:
            return line[i:]
    return ""


def test_fingerprints_json_is_the_contract(
    run: Run, written: list[JournalEntry], canary: str
) -> None:
    """--json: an array, newest first, of objects with exactly the DESIGN §9 fields."""
    result = run("fingerprints", "--json")

    items = json.loads(result.stdout)
    assert [FIELDS, FIELDS] == [list(item) for item in items]
    assert [e.to_dict() for e in reversed(written)] == items
    assert canary not in result.output


def test_fingerprints_marks_kept_names_and_missing_fingerprints(run: Run, project: Path) -> None:
    """Generated keys left as they were say "(kept)"; a write without a fingerprint shows "-"."""
    record(project, 0, names=("A", "B"), kept=("B",), fingerprint=None, client=None)

    line = run("fingerprints").stdout.splitlines()[1]

    assert "A, B (kept)" in line
    assert line.split()[-2:] == ["-", "-"]


def test_fingerprints_marks_a_key_its_provider_refused(run: Run, project: Path) -> None:
    """A key written with "Write anyway" after its provider refused it says so (DESIGN §16);
    `--json` carries the statuses as `checked`."""
    record(project, 0, names=("A", "B"), checked=(("A", "rejected"), ("B", "ok")))

    line = run("fingerprints").stdout.splitlines()[1]

    assert "A (refused by its provider), B " in line
    [item] = json.loads(run("fingerprints", "--json").stdout)
    assert {"A": "rejected", "B": "ok"} == item["checked"]


def test_fingerprints_for_one_project(run: Run, project: Path, tmp_path: Path) -> None:
    """--project keeps the writes into that folder only."""
    other = tmp_path / "other"
    other.mkdir()
    record(project, 0)
    record(other, 1)

    items = json.loads(run("fingerprints", "--json", "--project", str(other)).stdout)

    assert [str(other)] == [i["project"] for i in items]


def test_fingerprints_with_an_empty_journal(run: Run, home: Path) -> None:
    """No journal yet: a sentence saying where it would be, or [] for scripts."""
    text = run("fingerprints")
    as_json = run("fingerprints", "--json")

    assert f"No writes recorded (journal: {home / 'state' / 'journal.jsonl'}).\n" == text.stdout
    assert ([], 0) == (json.loads(as_json.stdout), as_json.exit_code)


ENV = """\
# Stripe — the value below is live
STRIPE_SECRET_KEY={c}-bare
export DATABASE_URL="{c}-double # not a comment"
  SESSION_SECRET='{c}-single'
MULTI="{c}-line one
{c}-line two"
EMPTY=
DUPLICATE={c}-first
DUPLICATE={c}-second
'broken={c}-unclosed
AFTER=1 # {c}-comment
"""


def test_keys_prints_names_only(
    run: Run, project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each assigned name once, in file order; no value, comment or broken line is echoed."""
    (project / ".env").write_text(ENV.format(c=canary))
    monkeypatch.chdir(project)

    result = run("keys")

    assert 0 == result.exit_code
    assert [
        "STRIPE_SECRET_KEY",
        "DATABASE_URL",
        "SESSION_SECRET",
        "MULTI",
        "EMPTY",
        "DUPLICATE",
        "AFTER",
    ] == result.stdout.splitlines()
    assert canary not in result.stdout
    assert canary not in result.stderr


def test_keys_names_unreadable_lines_by_number_only(
    run: Run, project: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line python-dotenv cannot read is reported by its number, never by its text."""
    (project / ".env").write_text(ENV.format(c=canary))
    monkeypatch.chdir(project)

    result = run("keys", str(project / ".env"))

    assert "offprompt: line 10 of" in result.stderr
    assert "is not a KEY=value statement; skipped" in result.stderr
    assert canary not in result.stderr


def test_keys_json(run: Run, project: Path, canary: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """--json: a JSON array of names."""
    (project / "prod.env").write_text(f"A={canary}\nB={canary}\n")
    monkeypatch.chdir(project)

    result = run("keys", "--json", str(project / "prod.env"))

    assert ["A", "B"] == json.loads(result.stdout)
    assert canary not in result.output


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda p: None, "does not exist; name the .env file to read"),
        (lambda p: p.mkdir(), "is a folder"),
        (lambda p: p.write_bytes(b"A=\xff\n"), "is not UTF-8 text"),
    ],
)
def test_keys_errors_say_what_to_do(
    make: Callable[[Path], object],
    says: str,
    run: Run,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A missing file, a folder or binary data: one `offprompt:` sentence and exit 1."""
    path = project / ".env"
    make(path)
    monkeypatch.chdir(project)

    result = run("keys", str(path))

    assert 1 == result.exit_code
    assert result.stderr.startswith(f"offprompt: {path} ")
    assert says in result.stderr
    assert "" == result.stdout


def test_keys_on_an_empty_file_prints_nothing(
    run: Run, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No keys, no output, exit 0."""
    (project / ".env").write_text("# nothing yet\n")
    monkeypatch.chdir(project)

    result = run("keys", str(project / ".env"))

    assert (0, "") == (result.exit_code, result.stdout)


@pytest.mark.parametrize(
    "outside", ["../other/.env", "/proc/self/environ", "/dev/stdin", "/dev/zero"]
)
def test_keys_refuses_a_path_outside_the_project_as_status_does(
    outside: str, project: Path, canary: str
) -> None:
    """`keys` on a file outside this folder's project (beside it, the process's environment, a
    device) is refused with status's words and exit 2, at once and without reading it."""
    other = project.parent / "other"
    other.mkdir()
    (other / ".env").write_text(f"{canary}=1\n")

    def offprompt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "offprompt", *args],
            cwd=project,
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={**os.environ, canary: "1"},
        )

    keys, status = offprompt("keys", outside), offprompt("status", outside)

    assert (2, "") == (keys.returncode, keys.stdout)
    assert keys.stderr == status.stderr
    assert f"offprompt: FILE {outside!r} leads outside the project folder" in keys.stderr
    assert canary not in keys.stderr


def test_keys_refuses_a_fifo_in_the_project_at_once(
    run: Run, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO named as the .env is refused without a read (it would wait for a writer)."""
    os.mkfifo(project / "pipe.env")
    monkeypatch.chdir(project)

    result = run("keys", "pipe.env")

    assert 1 == result.exit_code
    assert "offprompt: pipe.env is not a regular file" in result.stderr


@pytest.mark.parametrize(
    "args", [(), (".env",), (".env", "--json")], ids=["default", "named", "json"]
)
def test_keys_in_a_project_with_no_env_yet_is_not_an_error(
    args: tuple[str, ...], project: Path
) -> None:
    """No .env yet in this folder: exit 0, no names (`--json`: []), one note on stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "keys", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert 0 == done.returncode
    assert ("[]\n" if "--json" in args else "") == done.stdout
    assert done.stderr.startswith("offprompt: no .env in this folder yet")
    assert 1 == len(done.stderr.splitlines())
