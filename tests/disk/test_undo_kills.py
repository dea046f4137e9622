"""A masked write killed at every step (DESIGN §8: old or new, never a mix; §15: in place).

A real writer process runs `sinks.write(..., in_place=True)` under strace, which SIGKILLs it on
entry to the N-th call of one file-changing system call (pwrite64, write, ftruncate, fsync,
rename, unlink…), for each of them and N = 1, 2, … until a run ends by itself: every instant a
crash (or a reader between two calls) can see. After each kill the real readers
(python-dotenv, `node --env-file` 22 and 24, bash `set -a; . ./.env`) see the old values or the
new ones, all of one, and the mask's `extract` pattern captures every value in the file; then
the next start of `collect` or the next write settles it to exactly the old or the new bytes."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from unit.sinks.sinks_readers import all_readers

from offprompt import sinks
from offprompt.agents.mask.claude_entry import extract
from offprompt.collect.core import Collector
from offprompt.collect.settings import Settings
from offprompt.spec import SinkSpec

KEY = "OPENAI_API_KEY"
_CALLS = (
    "pwrite64", "write", "ftruncate", "fsync", "fdatasync",
    "rename", "renameat", "renameat2", "unlink", "unlinkat",
)  # fmt: skip
_WRITER = """
import json, sys
from pathlib import Path
from offprompt import sinks
from offprompt.spec import SinkSpec
order = json.loads(sys.stdin.read())
sinks.write(Path(order["project"]), SinkSpec(order["kind"], order["path"]), order["values"],
            in_place=True)
"""


def strace_or_skip() -> str:
    found = shutil.which("strace")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("strace is missing in CI; .ci/run must install it")
    pytest.skip("strace not installed")


def killed_at(
    project: Path, values: dict[str, str], call: str, n: int, kind: str, path: str
) -> bool:
    """Run the writer, SIGKILLed on entry to its `n`-th `call` (strace counts each call of a
    set apart); False when it ended by itself first (the write is whole)."""
    order = {"project": str(project), "kind": kind, "path": path, "values": values}
    done = subprocess.run(
        [strace_or_skip(), "-qq", "-o", "/dev/null", "-e", f"trace={call}",
         "-e", f"inject={call}:signal=SIGKILL:when={n}",
         sys.executable, "-c", _WRITER],
        input=json.dumps(order).encode(),
        capture_output=True,
        timeout=120,
    )  # fmt: skip
    if done.returncode == 0:
        return False
    assert done.returncode in (-9, 137, 128 + 9), done.stderr
    return True


def kills(
    project: Path, values: dict[str, str], before: str, kind: str = "dotenv"
) -> Iterator[str]:
    """Each point at which the writer was killed ("fsync#2"), the project's file left as the
    kill left it (the caller may settle it); before each run the file holds `before` again
    and no record is left."""
    path = ".env" if kind == "dotenv" else "key.txt"
    for call in _CALLS:
        for n in range(1, 100):
            (project / path).write_text(before)
            state = Path(os.environ["OFFPROMPT_STATE_DIR"]) / ".offprompt-keep"
            shutil.rmtree(state, ignore_errors=True)
            shutil.rmtree(project / ".offprompt-keep", ignore_errors=True)  # earlier versions'
            if not killed_at(project, values, call, n, kind, path):
                break
            yield f"{call}#{n}"
        else:
            pytest.fail("the writer never ended by itself")


def masked_text(text: str, names: list[str]) -> str:
    """`text` as Claude Code's mask shows it: group 1 of every match of the entry's pattern
    replaced by a stand-in (tests/agents/mask runs the same pattern in node)."""
    pattern = re.compile(extract(names))
    out, last = [], 0
    for m in pattern.finditer(text):
        out += [text[last : m.start(1)], "STANDIN"]
        last = m.end(1)
    return "".join([*out, text[last:]])


OLD = "sk-proj-" + "O" * 48  # 56 characters, as in the issue


def test_a_shorter_value_killed_at_every_step_is_old_or_new_for_every_reader(
    project: Path, canary: str
) -> None:
    """The new value is shorter than the old one: at no kill does a reader see a mix (the old
    tail behind the new start), nor does any old or new value escape the mask's pattern; the
    next start of `collect` leaves the file exactly old or new."""
    env = project / ".env"
    before = f"A=1\n{KEY}={OLD}\nB=two-words\n"
    new = canary[:20]
    after = f"A=1\n{KEY}={new}\nB=two-words\n"
    old_values = {"A": "1", KEY: OLD, "B": "two-words"}
    new_values = {**old_values, KEY: new}
    seen = 0
    for n in kills(project, {KEY: new}, before):
        seen += 1
        text = env.read_text()
        for reader, got in all_readers(project, ["A", KEY, "B"]).items():
            assert got in (old_values, new_values), f"kill {n}: {reader} saw a mix"
        shown = masked_text(text, [KEY])
        assert OLD[8:16] not in shown, f"kill {n}: an old value unmasked"
        assert new[8:] not in shown, f"kill {n}: a new value unmasked"

        Collector(Settings.read())  # the next start settles what the kill left

        assert env.read_text() in (before, after), f"kill {n}"
        # A record cut short in its first write (the file untouched) waits for that file's next
        # write, or a start a minute later: a writer may be making it right now.
        assert [] == [r for r in undo_records() if not r.endswith(".tmp")], f"kill {n}"
    assert seen >= 4  # the record, the padded write, the cut, the drop: each was killed at


def test_a_killed_file_sink_never_keeps_old_bytes_after_new_ones(
    project: Path, canary: str
) -> None:
    """A file sink's file (no inert padding in an unknown format) is emptied, then written:
    at every kill it is the old bytes, nothing, or the new bytes; the next write settles it."""
    key = project / "key.txt"
    before = "x" * 40 + canary
    for n in kills(project, {"KEY": canary[:10]}, before, "file"):
        assert key.read_text() in (before, "", canary[:10]), f"kill {n}"
        sinks.write(project, SinkSpec("file", "other.txt"), {"K": "1"}, in_place=True)
        sinks.write(project, SinkSpec("file", "key.txt"), {"KEY": "next"}, in_place=True)
        assert "next" == key.read_text()


def test_nothing_of_a_value_lands_in_the_project_beside_the_file_at_any_kill(
    project: Path, canary: str
) -> None:
    """The undo record (old values, keys never rotated included) lives in the state dir: at no
    kill does any file in the project but the `.env` hold a byte of the old or new value, so a
    process the agent left running there never reads one."""
    env = project / ".env"
    old = canary[::-1]
    for n in kills(project, {KEY: canary}, f"{KEY}={old}\n"):
        for here, _, names in os.walk(project):
            for name in names:
                path = Path(here, name)
                if path != env:
                    data = path.read_bytes()
                    assert old.encode() not in data, f"kill {n}"
                    assert canary.encode() not in data, f"kill {n}"
        sinks.write(project, SinkSpec(), {"Z": "1"}, in_place=True)


def test_a_change_the_person_makes_after_a_killed_write_is_never_undone(
    project: Path, canary: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Killed after it changed the file, the writer left a record; a moment later the person
    edits the file. The next write cannot prove the file is what the killed write left,
    so it keeps the person's edit (a value-free line in the log says so)."""
    env = project / ".env"
    before = f"A=1\n{KEY}={OLD}\n"
    edited = f"MINE=typed-by-hand\n{KEY}={OLD}\n"
    # The first kill that left the file torn: the person edits it at once, not a minute later.
    kills_left = kills(project, {KEY: canary[:12]}, before)
    where = next((w for w in kills_left if env.read_text() != before), None)
    assert where is not None, "no kill left the file changed"
    time.sleep(0.05)
    env.write_text(edited)

    with caplog.at_level("INFO", logger="offprompt"):
        sinks.write(project, SinkSpec(), {"Z": "1"}, in_place=True)

    assert edited + "Z=1\n" == env.read_text(), f"kill {where}"
    assert "changed after an interrupted write" in caplog.text
    assert OLD not in caplog.text
    assert canary not in caplog.text


def undo_records() -> list[str]:
    state = Path(os.environ["OFFPROMPT_STATE_DIR"]) / ".offprompt-keep"  # disk.undo.RECORDS
    return [n for n in os.listdir(state) if not n.startswith("legacy-")] if state.exists() else []
