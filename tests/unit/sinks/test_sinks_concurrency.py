"""Concurrent writes of different keys to one .env never lose each other's keys."""

import subprocess
import sys
import threading
import time
from pathlib import Path

from offprompt.sinks import SinkSpec, dotenv, write

ROUNDS = 40


def test_two_threads_writing_at_once_lose_no_key(project: Path) -> None:
    """Each round both threads start together; every key of every round survives."""
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        try:
            for i in range(ROUNDS):
                barrier.wait()
                write(project, SinkSpec(), {f"{tag}_{i}": f"{tag} value {i}"})
        except BaseException as e:  # reported below, so a failure does not hang the barrier
            errors.append(e)
            barrier.abort()

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("T1", "T2")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [] == errors
    expected = {f"{t}_{i}": f"{t} value {i}" for t in ("T1", "T2") for i in range(ROUNDS)}
    assert expected == dotenv.Parsed((project / ".env").read_text()).values


WRITER = """
import sys, time
from pathlib import Path
from offprompt.sinks import SinkSpec, write
project, tag, start, rounds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
time.sleep(max(0.0, start - time.time()))
for i in range(rounds):
    write(project, SinkSpec(), {f"{tag}_{i}": f"{tag} value {i}"})
"""


def test_two_processes_writing_at_once_lose_no_key(project: Path) -> None:
    """Two processes released at the same instant; every key of both survives."""
    start = str(time.time() + 1.0)
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(project), tag, start, str(ROUNDS)],
            stderr=subprocess.PIPE,
        )
        for tag in ("P1", "P2")
    ]
    outcomes = [(p.communicate(timeout=120)[1], p.returncode) for p in procs]
    assert [(b"", 0), (b"", 0)] == outcomes
    expected = {f"{t}_{i}": f"{t} value {i}" for t in ("P1", "P2") for i in range(ROUNDS)}
    assert expected == dotenv.Parsed((project / ".env").read_text()).values
