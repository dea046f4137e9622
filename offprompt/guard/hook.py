"""`offprompt guard`, the hook hosts run before each tool call (DESIGN §14): read one event on
stdin, decide, answer in the host's dialect (exit 2 and one line on stderr to block).

Imports only os beside what Python starts with (and its C halves: `_sre`, `_json`, `_signal`),
and reads the journal itself, so the hook starts fast (DESIGN §14: ≤ 50 ms per call; issue 45:
≤ 1.5x `python -c pass`): no re, json, enum, functools, collections, fnmatch, dataclasses,
typing, datetime, pathlib, click, platformdirs or signal for a call let through
(tests/guard/test_hook_imports.py, test_hook_start.py and test_guard_fast.py check); a call
blocked, or an event the guard cannot read, may load them.
"""

from __future__ import annotations

# `signal` itself would turn every signal number into an enum member as it loads (a millisecond
# on each call); the alarm needs three of its names, which its C half holds (typeshed has no
# stubs for it).
import _signal  # type: ignore[import-not-found]
import os
import sys

from offprompt import hosts, jsonread, rx
from offprompt.guard import disk
from offprompt.guard.check import UNCHECKED
from offprompt.guard.decide import decide
from offprompt.guard.protected import Protected

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from collections.abc import Mapping

    from offprompt.hosts.host import Dialect

__all__ = [
    "DEADLINE",
    "MAX_EVENT_BYTES",
    "TIMED_OUT",
    "UNCHECKED_REASON",
    "answer",
    "crude",
    "deny_json",
    "main",
    "reason",
    "sandboxed_reads",
]

# An event larger than this is not one tool call; read no more than this from stdin.
MAX_EVENT_BYTES = 4 * 1024 * 1024

# DESIGN §9 "Hooks fail closed": a call the guard has not decided within this many seconds is
# blocked. Shorter than the time limit init gives the host (agents/hook_wrapper.HOST_LIMIT):
# Codex and Gemini CLI let a call through when the hook times out.
DEADLINE = 10.0

TIMED_OUT = (
    "offprompt guard: blocked: the guard did not decide within {:g} s, so this call was stopped"
    " in case it exposes a secret. Try again; if it keeps happening, reinstall offprompt, or"
    " take the hook out with `offprompt remove`."
)


# The crude check's patterns, compiled on first use: only an event the guard cannot read needs
# them (tests/guard/test_hook_start.py).
@rx.cache
def _crude_dotenv() -> re.Pattern[str]:
    """A dotenv name as its own token."""
    return rx.compile(
        r"(?<![\w.-])\.env(?:\.local|\.development|\.production|\.staging|\.test"
        r"|\.[\w-]+\.local)?(?![\w.-])"
    )


@rx.cache
def _token() -> re.Pattern[str]:
    """A token in the crude check's sense: a maximal run of these characters."""
    return rx.compile(r"[\w.-]+")


def _decoded(text: str) -> str:
    """The event's JSON written again without escapes (`\\u002eenv` is `.env`), for the crude
    check of an event decide could not judge; "" when it is not JSON at all."""
    import json

    try:
        return json.dumps(json.loads(text), ensure_ascii=False)
    except (ValueError, RecursionError):
        return ""


def crude(raw: str, protected: Protected) -> str | None:
    """When the event cannot be understood: a protected name anywhere in it, as a token."""
    m = _crude_dotenv().search(raw)
    if m:
        return m.group(0)
    if not protected.written_names:
        return None
    # One pass over the event for every written name (not a search per name: 200 names over a
    # 4 MiB event took 5 s): a name made of `[\w.-]` alone is a token exactly when it is one of
    # the event's maximal runs of those characters.
    token = _token()
    tokens = frozenset(token.findall(raw))
    for name in sorted(protected.written_names):
        if token.fullmatch(name):
            if name in tokens:
                return name
        elif rx.search(r"(?<![\w.-])" + rx.escape(name) + r"(?![\w.-])", raw):
            return name
    return None


UNCHECKED_REASON = (
    "offprompt guard: blocked: this call is too large or too deeply nested for the guard to"
    " check, so it was stopped in case it exposes a secret. Split it into smaller calls."
)


def reason(name: str) -> str:
    """The one line the agent reads when a call is blocked."""
    if name == UNCHECKED:
        return UNCHECKED_REASON  # past a cap of DESIGN §14's bounded time: no file to name
    return (
        f"offprompt guard: blocked: this would expose {name}, which holds secrets the model must"
        f" not see. Call the secret_status tool, or run `offprompt keys {name}`, to see which keys"
        " are set instead of reading the file."
    )


class _TooLarge(Exception):
    """The event is MAX_EVENT_BYTES or more: the guard cannot read it whole.

    Never leaves this module: `main` catches it and blocks the call."""


# --- the hosts' dialects and sandboxes ----------------------------------------------------------


def _dialect(event: Mapping[str, object]) -> Dialect | None:
    """The dialect of the first host (in `hosts.HOSTS`' order) that claims `event`, or None:
    the event is in Claude Code's shape (`tool_name`, `tool_input`, `cwd`), which decide.py
    reads, and is answered by the exit code alone (Claude Code, Codex, Gemini CLI, VS Code's
    own hooks, Cursor's events that do not come before a tool)."""
    for host in hosts.HOSTS:
        spoken = host.get("dialect")
        if spoken is not None and spoken["claims"](event):
            return spoken
    return None


def deny_json(dialect: Dialect | None, why: str) -> str | None:
    """The deny a host of `dialect` reads on stdout beside exit 2, or None (exit 2 is all).

    Written without loading json (the hosts write it with json's C escaping): the deadline's
    handler writes it too, whatever the guard was importing then."""
    return None if dialect is None else dialect["deny"](why)


def answer(dialect: Dialect | None, why: str | None) -> int:
    """Exit 2 with `why` on stderr to block (exit 2 blocks even when stderr is gone), 0 to let
    the call through; a host with a dialect also reads its answer on stdout (Cursor's hooks
    are fail-closed, and an empty answer may count as a failure)."""
    if why is not None:
        out = deny_json(dialect, why)
    else:
        out = None if dialect is None else dialect["allow"]
    # try/except rather than contextlib.suppress: contextlib costs the hook's start-up time.
    try:
        if out is not None:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        if why is not None:
            sys.stderr.write(why + "\n")
            sys.stderr.flush()
    except Exception:  # noqa: S110 - a closed stdout or stderr: the exit code still answers
        pass
    return 0 if why is None else 2


def sandboxed_reads(event: Mapping[str, object], environ: Mapping[str, str]) -> frozenset[str]:
    """DESIGN §14's masked project: the files (absolute, real paths) this event's command sees
    only as stand-ins, when a host says it runs in its sandbox in a session started in a
    project `init --mask` masked (the record beside the journal, §15); else the empty set."""
    for host in hosts.HOSTS:
        sandbox = host.get("sandbox")
        if sandbox is None:
            continue
        started = sandbox["started"](event, environ)
        if started is None:
            continue
        projects = disk.masked_projects(environ)
        if started not in projects or not sandbox["inside"](started, event, environ):
            return frozenset()
        # Loaded here alone: few calls are in a masked project.
        from offprompt.guard import masked

        return masked.files_covered(projects[started], sandbox["masked_files"](environ))
    return frozenset()


# --- the hook ----------------------------------------------------------------------------------


def _arm(deadline: float, dialect: list[Dialect | None]) -> bool:
    """Past `deadline` seconds, block in the host's dialect (`dialect[0]`, as far as known) and
    end the process at once, whatever the guard is doing (a read that never ends, a slow
    search). The alarm's handler runs between bytecodes, in regex matching too. False where
    no alarm can be set (not the main thread)."""

    def blocked(signum: int, frame: object) -> None:
        why = TIMED_OUT.format(deadline)
        try:
            out = deny_json(dialect[0], why)
            if out is not None:
                os.write(1, (out + "\n").encode())
            os.write(2, (why + "\n").encode())
        finally:
            os._exit(2)

    try:
        _signal.signal(_signal.SIGALRM, blocked)
    except ValueError:
        return False
    _signal.setitimer(_signal.ITIMER_REAL, deadline)
    return True


def _started(env: Mapping[str, str]) -> None:
    """Tell a team's shared hook that offprompt started (agents/hook_wrapper.py): it deletes
    the marker file the hook names, so a failure from here on blocks every call, as a guard's
    failure must; a marker left means uvx never got offprompt to run ("not installed")."""
    marker = env.get("OFFPROMPT_HOOK_STARTED")
    if marker and os.path.basename(marker) == "offprompt-started":
        from offprompt.disk import remove_file  # os alone: the hook loads nothing more

        remove_file(marker)


def _read_event() -> bytes:
    """The event on stdin, at most MAX_EVENT_BYTES of it; the rest is read and dropped, so a
    host writing a larger one never fails its write (Codex lets a call through then)."""
    raw = sys.stdin.buffer.read(MAX_EVENT_BYTES)
    if len(raw) == MAX_EVENT_BYTES:
        while sys.stdin.buffer.read(1 << 20):
            pass
    return raw


def main(
    stdin: bytes | None = None,
    environ: Mapping[str, str] | None = None,
    deadline: float | None = DEADLINE,
) -> int:
    """Read one event on stdin; exit 2 with one line on stderr to block, 0 to let it through.
    Cursor and the Copilot runtime also get their JSON answer on stdout.

    Any failure blocks only when the raw event names a protected file (crude check). Run as
    the hook (the event on the real stdin), a call not decided within `deadline` seconds is
    blocked whatever it names (None: no deadline).
    """
    env = os.environ if environ is None else environ
    if stdin is None:
        _started(env)
    raw = b""
    protected = Protected()
    dialect: Dialect | None = None  # Claude Code's shape, until the event says otherwise
    known = [dialect]
    armed = deadline is not None and stdin is None and _arm(deadline, known)
    try:
        raw = _read_event() if stdin is None else stdin
        text = raw.decode("utf-8", "replace")
    except Exception:
        text = ""
    try:
        try:
            protected = Protected(disk.journal_files(env))
        except Exception:
            # An unreadable journal must not open the door to the dotenv files.
            protected = Protected()
        if len(raw) >= MAX_EVENT_BYTES:
            # DESIGN §14: an input too large to read whole is blocked, never let through.
            raise _TooLarge
        event = jsonread.loads(text)
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        dialect = known[0] = _dialect(event)
        event = dict(event) if dialect is None else dialect["normalise"](event)
        home = env.get("HOME") or os.path.expanduser("~")
        # Events in Claude Code's shape only: a host with a dialect of its own has no sandbox
        # the mask leans on.
        mask = sandboxed_reads(event, env) if dialect is None else frozenset()
        hit = decide(event, protected, home, mask)
    except _TooLarge:
        hit = UNCHECKED
    except Exception:
        try:
            hit = crude(text, protected) or crude(_decoded(text), protected)
        except Exception:
            hit = ".env" if ".env" in text or "\\u00" in text.lower() else None
    if armed:
        _signal.setitimer(_signal.ITIMER_REAL, 0)
    return answer(dialect, None if hit is None else reason(hit))
