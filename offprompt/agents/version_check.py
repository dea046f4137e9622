"""Checking that a declared command runs (DESIGN §9): the program run with `--version`, all at
once, each stopped with everything it started when it has not answered within its time limit.
"""

from __future__ import annotations

import shlex
import signal
from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from offprompt import disk
from offprompt.agents.command import shebang
from offprompt.agents.interface import Machine
from offprompt.disk import process

__all__ = ["TIMEOUT", "Check", "Probe", "run_checks"]

# How long a declared command has to answer `--version` (DESIGN §9).
TIMEOUT = 5.0
# At most this many checks run at once (seven agents, two declarations each, mostly the same).
_WORKERS = 8
# What is kept of a program's answer: its first line, this long at most.
_SHOWN = 120


@dataclass(frozen=True)
class Check:
    """Whether a declared command runs here: `ok` True (answered `--version`), False (it does
    not run: missing, not executable, failed, hung) or None (not run, `why` says why)."""

    ok: bool | None
    why: str
    ran: tuple[str, ...] | None = None
    version: str | None = None


@dataclass(frozen=True)
class Probe:
    """One check to make: `argv` (a program and its `--version`), run in the folder `cwd`."""

    argv: tuple[str, ...]
    cwd: Path


def run_checks(
    probes: Iterable[Probe],
    machine: Machine,
    *,
    timeout: float = TIMEOUT,
) -> dict[Probe, Check]:
    """Run each distinct probe (at once, with the machine's environment) and say whether it
    answered: exit 0 within `timeout` seconds. A program still running then is killed with
    everything it started."""
    distinct = list(dict.fromkeys(probes))
    if not distinct:
        return {}
    env = dict(machine.environ)

    def check(probe: Probe) -> Check:
        where = probe.cwd if probe.cwd.is_dir() else machine.home
        return _run(probe.argv, where, env, timeout)

    with ThreadPoolExecutor(max_workers=min(_WORKERS, len(distinct))) as pool:
        return dict(zip(distinct, pool.map(check, distinct), strict=True))


def _run(argv: tuple[str, ...], cwd: Path, env: Mapping[str, str], timeout: float) -> Check:
    shown = shlex.join(argv)
    try:
        # The one runner: its own session, so a timeout kills whatever it started too (uvx
        # starts a Python); stdin closed.
        ended = process.run(argv, env=env, cwd=cwd, timeout=timeout)
    except OSError as e:
        missing = _missing_interpreter(argv[0]) if isinstance(e, FileNotFoundError) else None
        if missing is not None:
            return Check(
                False, f"`{shown}` could not start: its interpreter {missing} is gone", argv
            )
        return Check(False, f"`{shown}` could not start ({disk.reason(e)})", argv)
    if ended.stopped:
        return Check(False, f"`{shown}` did not answer within {timeout:g} s", argv)
    if ended.code is None:
        return Check(False, f"`{shown}` printed more than {process.MOST} bytes", argv)
    out, err = ended.out, ended.err
    if ended.code != 0:
        said = _last_line(err) or _last_line(out)
        why = f"`{shown}` exited with {_exit_status(ended.code)}"
        return Check(False, f"{why}: {said}" if said else why, argv)
    version = _first_line(out) or _first_line(err)
    return Check(True, f"answers `{shown}`", argv, version)


def _missing_interpreter(program: str) -> str | None:
    """The `#!` interpreter of an existing script when that is what is missing (the venv a
    script belonged to was deleted or rebuilt), else None."""
    word = shebang(program)
    return word if word is not None and not Path(word).exists() else None


def _exit_status(code: int) -> str:
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"status {code}"


def _first_line(data: bytes) -> str:
    for line in data.decode("utf-8", "replace").splitlines():
        if line.strip():
            return _clip(line.strip())
    return ""


def _last_line(data: bytes) -> str:
    lines = [s.strip() for s in data.decode("utf-8", "replace").splitlines() if s.strip()]
    return _clip(lines[-1]) if lines else ""


def _clip(text: str) -> str:
    text = "".join(c if c.isprintable() else "?" for c in text)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"
