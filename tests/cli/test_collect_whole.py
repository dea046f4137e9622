"""`offprompt collect --file PATH` where PATH is no dotenv file by its name, and `--whole`
(issue 46): the value is the whole file, as an agent's `{kind: "file"}` sink writes it, so
`offprompt keys` and `status` (DESIGN §12: such a file is reported by its file alone) say what
the file is rather than refusing lines they would not read; a value no dotenv quoting carries
can be written from the terminal. Real CLI, the page filled over plain http by person.py."""

import subprocess
import sys
from pathlib import Path

from test_collect import collect, person_env, person_said

from offprompt.sinks.dotenv_quoting import unsafe_reason

# Both quote kinds with `$`: no dotenv form carries it for python-dotenv, node and bash.
UNQUOTABLE = "a'b\"$c"


def offprompt(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "offprompt", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_file_that_is_no_dotenv_file_gets_the_value_whole(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """`--file config/token.txt`: the file holds the value alone (no `TOKEN=` line that `keys`
    would never name); `keys` names no key and says why, `status` says the file is set; the
    fingerprint is the person's."""
    env = person_env(tmp_path, {"TOKEN": canary}, "http")
    done = collect(project, "TOKEN", "--file", "config/token.txt", env=env)

    assert done.returncode == 0, done.stderr
    assert canary == (project / "config" / "token.txt").read_text()
    (said,) = person_said(tmp_path)
    assert done.stdout.splitlines()[-1] == f"Fingerprint {said['fingerprint']}"
    keys = offprompt(project, "keys", "config/token.txt")
    status = offprompt(project, "status", "config/token.txt", "--json")
    assert (0, "") == (keys.returncode, keys.stdout)
    assert "config/token.txt shows no key names" in keys.stderr
    assert 0 == status.returncode, status.stderr
    assert '"status": "set"' in status.stdout
    for text in (done.stdout, done.stderr, keys.stdout, keys.stderr, status.stdout):
        assert canary not in text


def test_several_names_for_a_file_that_is_no_dotenv_file_are_refused(project: Path) -> None:
    """Two NAMEs and `--file config/token.txt`: wrong usage (exit 2), saying why and what to
    give instead; nothing written."""
    args = ("A", "B", "--file", "config/token.txt", "--timeout", "2")
    done = collect(project, *args, env={"BROWSER": "false"})

    assert 2 == done.returncode, done.stderr
    assert "config/token.txt" in done.stderr
    assert "dotenv" in done.stderr
    assert not (project / "config").exists()


def test_whole_writes_a_value_no_dotenv_quoting_carries(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """`--whole` with a dotenv-named file: the value, both quote kinds and `$` in it, is the
    whole file, byte for byte."""
    value = canary + UNQUOTABLE
    env = person_env(tmp_path, {"TOKEN": value}, "http")
    done = collect(project, "TOKEN", "--file", "keys/token.env", "--whole", env=env)

    assert done.returncode == 0, done.stderr
    assert value == (project / "keys" / "token.env").read_text()
    assert canary not in done.stdout + done.stderr


def test_the_refusal_of_such_a_value_names_whole() -> None:
    """What the page says of a value no dotenv form carries names the terminal's way out."""
    said = unsafe_reason(UNQUOTABLE)

    assert said is not None
    assert "offprompt collect NAME --file PATH --whole" in said
