"""The shell command a host runs for the guard (DESIGN §9 "Hooks fail closed"): a few lines of
POSIX `sh` around `… offprompt guard` that pass the guard's own verdicts through and turn
anything else — a program that cannot start (a deleted venv, an uninstalled tool), a crash —
into the host's blocking answer with one stderr line saying how to mend it. A team's shared
hook (DESIGN §9) differs where its program is not installed at all: a name check in sh.

Hosts hand the command to a shell (bash, `$SHELL -lc`, zsh, even fish), so the script goes to
`/bin/sh -c` in single quotes, and holds no `'` and no backslash pair that fish would read
differently. `unwrap` gives back the guard's argv for `guard_argv` and the doctor.
"""

from __future__ import annotations

import shlex
from typing import Literal

__all__ = [
    "HOST_LIMIT",
    "NAME",
    "SHELL",
    "Answer",
    "script",
    "shared_script",
    "unwrap",
    "wrap",
]

# The time limit init gives a host for the hook, in seconds, where the host lets a hook declare
# one: longer than the guard's own deadline (offprompt/guard/hook.py), which blocks a call the
# guard has not decided by then, so a slow guard is the guard's block, not the host's timeout
# (which lets the call through in Codex and Gemini CLI).
HOST_LIMIT = 30

# How a host takes "blocked": exit 2 with the reason on stderr (Claude Code, Codex, Gemini CLI,
# Windsurf), or also a deny on stdout (Cursor's `permission`, the Copilot runtime's
# `permissionDecision`, as offprompt/guard/events.py answers).
Answer = Literal["exit", "cursor", "copilot"]

SHELL = "/bin/sh"
# `$0` of the script: marks the command as offprompt's wrapper, so guard_argv can find it.
NAME = "offprompt-guard"

# Neither `"`, a backtick nor a backslash: it goes inside double quotes and JSON below.
_MEND = (
    "offprompt guard: blocked: offprompt could not run (exit $s): reinstall it, or take this"
    " hook out with offprompt remove."
)

# Kept short: Claude Code shows the model the whole command beside a hook's reason. The guard
# ("$@") runs with the host's stdout (fd 3) and its stderr kept in $e; the host's stderr is fd 4
# (the shell's own words, such as "Killed", go nowhere). Exit 0 or 2 is the guard's verdict:
# pass it on, with a reason however short (Codex does not block on an exit 2 with an empty
# stderr). Anything else: read the rest of the event (a host whose write fails may let the
# call through), then block with the mend line.
_OPEN = "exec 3>&1 4>&2 2>/dev/null;"
_GUARD = (
    'e=$("$@" 2>&1 >&3);s=$?;'
    "[ $s = 2 ]&&e=${e:-offprompt guard: blocked.};"
    'case $s in 0|2)[ "$e" ]&&printf "%s\\n" "$e">&4;exit $s;;esac;'
    f'cat>/dev/null;m="{_MEND}";'
)
_RUN = _OPEN + _GUARD
_DENY = {
    "exit": "",
    "cursor": (
        'printf "%s\\n" "{\\"permission\\":\\"deny\\",\\"user_message\\":\\"$m\\",'
        '\\"agent_message\\":\\"$m\\"}";'
    ),
    "copilot": (
        'printf "%s\\n" "{\\"permissionDecision\\":\\"deny\\",'
        '\\"permissionDecisionReason\\":\\"$m\\"}";'
    ),
}
_END = 'printf "%s\\n" "$m">&4;exit 2'

# A team's shared hook (DESIGN §9) where its program does not resolve on PATH (offprompt not
# installed; a link left by an uninstall): a name check in sh stands in for the guard. A
# program that resolves but fails stays the guard's failure above: every call blocked.
_ABSENT = (
    "offprompt guard: blocked: this call names a .env file, which this project guards with"
    " offprompt, and offprompt is not installed here: install it (see the offprompt README)."
)
# What the check blocks, case-insensitively over the raw event JSON, bytes as they are
# (DESIGN §14's dotenv names, `.offprompt-`): a name after a character no name continues (or
# after a JSON escape such as `\n`), and any `\uXXXX` however many backslashes lead it (an
# event may carry JSON inside a string: Copilot's toolArgs), since an escape can spell a name
# the check would not see. `[\]` is one backslash: the script holds no backslash pair (see the
# module's docstring); `\$` is `$` in double quotes.
_WORD = "a-zA-Z0-9_"
_LOOKS = (
    "[\\]u[0-9a-fA-F]{4}",
    f"(^|[^{_WORD}]|[\\][a-zA-Z])[.]env([^{_WORD}.-]|[.](local|development|production|staging"
    f"|test)([^{_WORD}-]|\\$)|[.][{_WORD}.-]*[.]local([^{_WORD}-]|\\$)|[.][*?[]|\\$)",
    "[.]offprompt-",
)
_CHECK = "LC_ALL=C grep -Eiq" + "".join(f' -e "{p}"' for p in _LOOKS) + ";"
# How a host takes "let through" from a hook: exit 0, and for Cursor also its `allow` (an
# empty answer may count as a failure there, as offprompt/guard/events.py answers).
_ALLOW = {
    "exit": "",
    "cursor": 'printf "%s\\n" "{\\"permission\\":\\"allow\\"}";',
    "copilot": "",
}


def script(answer: Answer) -> str:
    """The `sh` script for a host that takes `answer` as its blocking answer."""
    return _RUN + _DENY[answer] + _END


def shared_script(answer: Answer) -> str:
    """`script`, for a team's shared hook: where the guard's program does not resolve on PATH,
    it blocks only an event naming a dotenv file (or `.offprompt-`), saying to install
    offprompt, and lets every other call through (grep failing blocks too)."""
    absent = _CHECK + f'[ $? = 1 ]&&{{ {_ALLOW[answer]}exit 0;}};cat>/dev/null;m="{_ABSENT}";'
    return (
        f'{_OPEN}if command -v "$1">/dev/null;then {_GUARD}else {absent}fi;' + _DENY[answer] + _END
    )


_ANSWERS: tuple[Answer, ...] = ("exit", "cursor", "copilot")
_SCRIPTS = {f(a) for a in _ANSWERS for f in (script, shared_script)}


def wrap(argv: tuple[str, ...], answer: Answer, *, shared: bool = False) -> str:
    """The hook command running `argv` (the guard) so that every failure blocks; `shared`: a
    team's shared hook, which checks names only where `argv`'s program is not installed."""
    body = shared_script(answer) if shared else script(answer)
    return shlex.join([SHELL, "-c", body, NAME, *argv])


def unwrap(words: list[str]) -> tuple[list[str], bool]:
    """The guard's argv inside a hook command split into `words`, and whether the command is
    today's wrapper (False: a bare command, which fails open, or another script of ours)."""
    if len(words) > 4 and words[0] in (SHELL, "sh") and words[1] == "-c" and words[3] == NAME:
        return words[4:], words[0] == SHELL and words[2] in _SCRIPTS
    return words, False
