"""How much work a .env write does, counted rather than timed: each reader reads the file a fixed
number of times whatever the number of names, and the work grows with the file, not faster."""

import io
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import dotenv.parser
import pytest

from offprompt import sinks
from offprompt.disk import git as git_runner
from offprompt.sinks import atomic, nodeenv, shell

DOTENV = sinks.SinkSpec()


def big_dotenv(path: Path, lines: int) -> None:
    """What bench/collect.py writes: a comment every tenth line, plain assignments between."""
    body = [f"# config line {i}" if i % 10 == 0 else f"KEY_{i}=value-{i}" for i in range(lines)]
    path.write_text("\n".join(body) + "\n")


def new_values(count: int) -> dict[str, str]:
    return {f"NEW_KEY_{i}": f"v-{i} with blanks" for i in range(count)}


def counting(
    monkeypatch: pytest.MonkeyPatch, counts: Counter[str], name: str, owner: Any, attr: str
) -> None:
    """Count the calls of `owner.attr` under `name`, passing them through."""
    real: Callable[..., Any] = getattr(owner, attr)

    def counted(*args: Any, **kwargs: Any) -> Any:
        counts[name] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, attr, counted)


@pytest.fixture
def passes(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of: reads of the file, python-dotenv parses, Node and bash readings, git runs."""
    counts: Counter[str] = Counter()
    counting(monkeypatch, counts, "read", atomic, "read_existing")
    counting(monkeypatch, counts, "python-dotenv", dotenv.parser, "parse_stream")
    counting(monkeypatch, counts, "node", nodeenv, "assignments")
    counting(monkeypatch, counts, "bash", shell, "analyze")
    counting(monkeypatch, counts, "git", git_runner, "run")
    return counts


def test_appended_keys_are_read_by_python_dotenv_from_the_end_of_the_file_on(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The text about to be written agrees with the file up to the keys appended, so python-dotenv
    reads the file once and then little more than the new lines."""
    read: list[int] = []
    real = dotenv.parser.parse_stream

    def sized(stream: io.StringIO) -> Any:
        read.append(len(stream.getvalue()))
        return real(stream)

    monkeypatch.setattr(dotenv.parser, "parse_stream", sized)
    big_dotenv(project / ".env", 1000)
    size = len((project / ".env").read_text())
    sinks.write(project, DOTENV, new_values(12))
    assert (2, size) == (len(read), read[0])
    assert read[1] < 1000, read


def counted_write(tmp_path: Path, passes: Counter[str], keys: int, *, git: bool) -> Counter[str]:
    project = tmp_path / f"project-{keys}"
    project.mkdir()
    if git:
        subprocess.run(["git", "init", "-q", str(project)], check=True)
    big_dotenv(project / ".env", 1000)
    passes.clear()
    sinks.write(project, DOTENV, new_values(keys))
    return Counter(passes)


def test_a_write_reads_and_parses_as_often_for_twelve_keys_as_for_one(
    tmp_path: Path, passes: Counter[str]
) -> None:
    """One read before and one read back; python-dotenv parses the old and the new text once
    each, Node and bash read the new text once; git answers in two runs (inside? tracked?)."""
    one = counted_write(tmp_path, passes, 1, git=True)
    twelve = counted_write(tmp_path, passes, 12, git=True)
    expected = {"read": 2, "python-dotenv": 2, "node": 1, "bash": 1, "git": 2}
    assert (expected, expected) == (dict(one), dict(twelve))


def test_a_look_at_the_file_reads_and_parses_it_once(tmp_path: Path, passes: Counter[str]) -> None:
    """What the page shows before a write: one read; python-dotenv parses the file and the
    file with stand-ins once each, Node and bash read the latter once; git runs three times."""
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    big_dotenv(project / ".env", 1000)
    passes.clear()
    sinks.inspect_target(project, DOTENV, list(new_values(12)))
    assert {"read": 1, "python-dotenv": 2, "node": 1, "bash": 1, "git": 3} == dict(passes)


def lines_run(call: Callable[[], object]) -> int:
    """How many lines of Python `call` runs (offprompt, python-dotenv, the standard library): a
    measure of work that does not depend on the machine or its load."""
    count = 0

    def local(frame: FrameType, event: str, arg: object) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: FrameType, event: str, arg: object) -> Any:
        return local

    sys.settrace(calls)
    try:
        call()
    finally:
        sys.settrace(None)
    return count


def write_work(tmp_path: Path, lines: int, keys: int) -> int:
    project = tmp_path / f"project-{lines}-{keys}"
    project.mkdir()
    big_dotenv(project / ".env", lines)
    return lines_run(lambda: sinks.write(project, DOTENV, new_values(keys)))


def test_write_work_is_linear_in_the_file(tmp_path: Path) -> None:
    """Four times the lines cost at most four times the work (plus a little): no pass over the
    file per statement, per key or per line."""
    small, large = write_work(tmp_path, 500, 12), write_work(tmp_path, 2000, 12)
    assert large <= 4.2 * small, (small, large)


def test_each_more_key_costs_less_than_a_pass_over_the_file(tmp_path: Path) -> None:
    """Each key past the first adds less than one line of Python per line of a 1,000-line file
    (the whole write runs hundreds per line): nothing walks the file once per key."""
    one, twelve = write_work(tmp_path, 1000, 1), write_work(tmp_path, 1000, 12)
    assert (twelve - one) / 11 < 1000, (one, twelve)
