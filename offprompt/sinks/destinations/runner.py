"""Running a destination's program through the one runner (disk.process: no shell, the values
on stdin only, a time limit, bounded output), and its output reduced to one line with every
value taken out.

The values never go into argv, the environment or a file; what the program prints is read into
memory only, and only its scrubbed last line leaves this module.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from offprompt.disk import process
from offprompt.echo import echoes

__all__ = ["TIMEOUT_SECONDS", "Ran", "child_env", "find_program", "last_line", "run"]

# The limit for each destination as a whole (DESIGN §13): every name and environment it takes
# shares it, so a program that hangs holds the send 60 s per destination, never per run.
TIMEOUT_SECONDS: float = 60.0
_MAX_DETAIL: Final = 200
_MAX_OUTPUT: Final = 256 * 1024
# A line that echoes a value (offprompt.echo: any 4 characters of it, in any common encoding)
# is withheld whole.
_HIDDEN: Final = "[value removed]"
_WITHHELD: Final = "(its last line quoted part of a value, so it is not shown)"
_ANSI: Final = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]")


@dataclass(frozen=True)
class Ran:
    """How one run ended: `ok` (exit 0 in time) and the scrubbed last line (or why not run).

    `out` and `err` are what it printed, unscrubbed and in memory only, for a destination that
    reads the program's answer (a store's current secret, the words of its error): never shown,
    logged or returned past the destination's module. `code` is its exit status (None: not run,
    or stopped: at the limit, `stopped`, or for printing more than 4 MiB)."""

    ok: bool
    detail: str
    code: int | None = None
    stopped: bool = False
    out: bytes = field(default=b"", repr=False)
    err: bytes = field(default=b"", repr=False)


def find_program(names: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The absolute path of the first of `names` on `env`'s PATH, else None."""
    # Only absolute folders (disk.process.find): an empty entry or `.` would be the project,
    # where the agent can put a program of its own named `gh` or `fly`.
    return process.find(names, env)


def child_env(env: Mapping[str, str], drop: Collection[str]) -> dict[str, str]:
    """The program's environment: ours, less the variables that would change its target, and
    no colour (the last line is read, not seen)."""
    out = {k: v for k, v in env.items() if k not in drop}
    out["NO_COLOR"] = "1"
    return out


def run(
    program: str,
    args: Sequence[str],
    stdin: bytes,
    *,
    cwd: Path,
    env: Mapping[str, str],
    values: Collection[str],
    timeout: float = TIMEOUT_SECONDS,
    noise: Sequence[re.Pattern[str]] = (),
    limit: float | None = None,
) -> Ran:
    """Run `program args` in `cwd` with `stdin` as its whole input, through the one runner
    (disk.process); blocking, at most `timeout` seconds (then its process group is killed), at
    most 4 MiB on each output (then too). `values` are taken out of what it printed; the
    detail is the last line of stderr on failure (of stdout on success), the other stream's
    when that one is blank; lines matching `noise` (a program's own sign-off) do not count.
    `limit` is the limit a stop is reported against (the destination's whole one, of which
    `timeout` is what is left), `timeout` when None."""
    try:
        ended = process.run([program, *args], env=env, cwd=cwd, stdin=stdin, timeout=timeout)
    except OSError as e:
        return Ran(False, f"could not start ({(e.strerror or type(e).__name__).lower()})")
    out, err = ended.out, ended.err
    code = ended.code
    if code is None:
        line = last_line(err, values, noise) or last_line(out, values, noise)
        said = timeout if limit is None else limit
        why = (
            f"stopped: it printed more than {process.MOST // (1024 * 1024)} MiB"
            if ended.too_long
            else f"stopped after {said:g} s"
        )
        detail = why + (f": {line}" if line else "")
        return Ran(False, detail, stopped=ended.stopped, out=out, err=err)
    if code == 0:
        line = last_line(out, values, noise) or last_line(err, values, noise)
        return Ran(True, line, code, out=out, err=err)
    # A failing program says why on stderr; its stdout may hold progress lines printed earlier.
    line = last_line(err, values, noise) or last_line(out, values, noise)
    why = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
    return Ran(False, f"{line} ({why})" if line else why, code, out=out, err=err)


def last_line(output: bytes, values: Collection[str], noise: Sequence[re.Pattern[str]] = ()) -> str:
    """The last non-blank line of `output`, with every value (and each line of a multi-line
    one) taken out, controls spelled out, at most 200 characters; withheld entirely when it
    still echoes a value (offprompt.echo: 4 characters of it in any common encoding)."""
    text = _ANSI.sub("", output[-_MAX_OUTPUT:].decode("utf-8", "replace"))
    lines = [ln.strip() for ln in re.split(r"[\r\n]+", text)]
    lines = [ln for ln in lines if ln and not any(n.search(ln) for n in noise)]
    if not lines:
        return ""
    line = lines[-1]
    pieces = set()
    for value in values:
        if value:
            pieces.add(value)
            pieces.update(p for p in (q.strip() for q in re.split(r"[\r\n]+", value)) if p)
    for piece in sorted(pieces, key=len, reverse=True):
        line = line.replace(piece, _HIDDEN)
    if echoes(line, values):
        return _WITHHELD
    line = "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in {"Cc", "Cf", "Cs"} else ch for ch in line
    )
    return line if len(line) <= _MAX_DETAIL else line[: _MAX_DETAIL - 1] + "…"
