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

import re
import shlex
from typing import Literal

__all__ = [
    "DEADLINE",
    "HOST_LIMIT",
    "NAME",
    "SHELL",
    "STARTED",
    "Answer",
    "fetches",
    "recorded_source",
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
# `permissionDecision`, as their hosts' dialects in offprompt/hosts/ answer).
Answer = Literal["exit", "claude", "cursor", "copilot"]

SHELL = "/bin/sh"
# `$0` of the script: marks the command as offprompt's wrapper, so guard_argv can find it.
NAME = "offprompt-guard"

# Neither `"`, a backtick nor a backslash: it goes inside double quotes and JSON below.
_MEND = (
    "offprompt guard: blocked: offprompt could not run (exit $s): reinstall it, or take this"
    " hook out with offprompt remove."
)

# Claude Code (2.1.332) shows a hook's exit 2 to the model as `[<the whole command>]: <stderr>`,
# this script first; with `{"decision":"block","reason":…}` on stdout too it shows the reason
# alone (measured in real Claude Code; an answer it cannot read still blocks, as `[…]:
# <stderr>`). So for "claude", a block also prints that answer, the reason as it is inside the
# JSON string unless it holds a `"` (which could end the string) or a control character
# (which JSON refuses): then stderr alone. A backslash cannot end the string: at worst an
# escape Claude Code refuses, which blocks as before.
_CLAUDE_SAID = (
    'case $e in *[\\"]*|*[[:cntrl:]]*);;*)'
    'printf "%s\\n" "{\\"decision\\":\\"block\\",\\"reason\\":\\"$e\\"}">&3;;esac;'
)

# Kept short: Claude Code shows the model the whole command beside a hook's reason. The guard
# ("$@") runs with the host's stdout (fd 3) and its stderr kept in $e; the host's stderr is fd 4
# (the shell's own words, such as "Killed", go nowhere). Exit 0 or 2 is the guard's verdict:
# pass it on, with a reason however short (Codex does not block on an exit 2 with an empty
# stderr). Anything else: read the rest of the event (a host whose write fails may let the
# call through), then block with the mend line.
_OPEN = "exec 3>&1 4>&2 2>/dev/null;"


def _guard(answer: Answer) -> str:
    said = f"[ $s = 2 ]&&{{ {_CLAUDE_SAID}}};" if answer == "claude" else ""
    return (
        'e=$("$@" 2>&1 >&3);s=$?;'
        "[ $s = 2 ]&&e=${e:-offprompt guard: blocked.};"
        f'case $s in 0|2){said}[ "$e" ]&&printf "%s\\n" "$e">&4;exit $s;;esac;'
        f'cat>/dev/null;m="{_MEND}";'
    )


_DENY = {
    "exit": "",
    "claude": 'printf "%s\\n" "{\\"decision\\":\\"block\\",\\"reason\\":\\"$m\\"}";',
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
# `$w` is why: the call names one, or only holds an escape the check cannot read (`_WHY`).
_ABSENT = (
    "offprompt guard: blocked: $w, which this project guards with"
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
# The matches land in $k (grep reads the whole event, so the host's write never fails); `$?`
# is grep's: 1 no match (let through), else blocked. A match naming no `env` nor `offprompt-`
# is an escape alone: said as such, not as a name.
_GREP = "LC_ALL=C grep -Eio" + "".join(f' -e "{p}"' for p in _LOOKS)
_CHECK = f"k=$({_GREP});"
_WHY = (
    'case $k in *[eE][nN][vV]*|*[oO][fF][fF][pP][rR][oO][mM][pP][tT]-*|"")'
    'w="this call names a .env file";;*)w="this call holds a JSON escape code, which could'
    ' spell the name of a .env file";;esac;'
)
# How a host takes "let through" from a hook: exit 0, and for Cursor also its `allow` (an
# empty answer may count as a failure there, as their hosts' dialects in offprompt/hosts/ answer).
_ALLOW = {
    "exit": "",
    "claude": "",
    "cursor": 'printf "%s\\n" "{\\"permission\\":\\"allow\\"}";',
    "copilot": "",
}


def script(answer: Answer) -> str:
    """The `sh` script for a host that takes `answer` as its blocking answer."""
    return _OPEN + _guard(answer) + _DENY[answer] + _END


# The same, where `init --shared` knew where offprompt was installed from (the script begins
# `u="SOURCE";`): the teammate's install line (DESIGN §9).
_ABSENT_FROM = (
    "offprompt guard: blocked: $w, which this project guards with"
    " offprompt, and offprompt is not installed here: install it: pipx install $u"
)
# The prefix naming that source; `command.install_source` keeps it to these characters.
_NAMED = re.compile(r'u="[A-Za-z0-9._~:/?#\[\]@!&()*+,;=%-]+";')


def shared_script(answer: Answer, named: bool = False) -> str:
    """`script`, for a team's shared hook: where the guard's program does not resolve on PATH,
    it blocks only an event naming a dotenv file (or `.offprompt-`), saying to install
    offprompt (`named`: with `pipx install $u`), and lets every other call through (grep
    failing blocks too)."""
    line = _ABSENT_FROM if named else _ABSENT
    absent = _CHECK + f'[ $? = 1 ]&&{{ {_ALLOW[answer]}exit 0;}};{_WHY}m="{line}";'
    return (
        f'{_OPEN}if command -v "$1">/dev/null;then {_guard(answer)}else {absent}fi;'
        + _DENY[answer]
        + _END
    )


# A team's shared hook that fetches offprompt each time it starts it (`uvx --from SOURCE`,
# DESIGN §9 "Hooks fail closed"): a source that cannot be fetched (unreachable, no access, no
# answer within DEADLINE) is "not installed", the name check above with a line naming SOURCE;
# a guard that started and then failed still blocks every call. The guard says it started by
# deleting the marker file named in $OFFPROMPT_HOOK_STARTED (offprompt/guard/hook.py).
#
# The host's limit is never reached: a watchdog signals the script after DEADLINE seconds and
# the script answers then, leaving uvx to finish a slow fetch in the background (so the cache
# fills for the next call: the MCP server's own start fetches it too), bounded by git's low-
# speed limit, its temporary folder removed when it is done (by whichever side ends last).
# Everything it runs in the background gets /dev/null, never the host's pipes (the host waits
# for them to close).
DEADLINE = 15
STARTED = "offprompt-started"
_FETCHED = (
    "offprompt guard: blocked: $w, which this project guards with"
    " offprompt, and offprompt is not installed here (nor could uvx fetch it from $u):"
    " install it: pipx install $u"
)
_TIMED_OUT = (
    f"offprompt guard: blocked: the guard did not decide within {DEADLINE} s, so this call was"
    " stopped in case it exposes a secret. Try again; if it keeps happening, reinstall"
    " offprompt, or take this hook out with offprompt remove."
)
_QUIET = "</dev/null >/dev/null 2>&1 3>&- 4>&-"
_SOURCE = (
    "u=offprompt;f=;for a;do [ $f ]&&{ u=$a;break;};"
    "case $a in --from)f=1;;--from=*)u=${a#--from=};break;;esac;done;"
)


def _fetching_script(answer: Answer) -> str:
    check = _CHECK.removesuffix(";")
    allow = f"{{ {_ALLOW[answer]}exit 0;}}"
    absent = f'{_WHY}m="{_FETCHED}"'
    return (
        f"{_OPEN}{_SOURCE}"
        f'if ! command -v "$1">/dev/null;then {check};[ $? = 1 ]&&{allow};cat>/dev/null;{absent};'
        'elif ! d=$(mktemp -d);then cat>/dev/null;s=mktemp;m="' + _MEND + '";'
        "else "
        f': >"$d/{STARTED}";cat>"$d/i";'
        # The run, in a subshell that removes the folder itself once it ends late (the script
        # has left: "$d/q"); each side marks its end before looking at the other's mark.
        "(GIT_HTTP_LOW_SPEED_LIMIT=1 GIT_HTTP_LOW_SPEED_TIME=60"
        f' OFFPROMPT_HOOK_STARTED="$d/{STARTED}" "$@" <"$d/i" >"$d/o" 2>"$d/e";r=$?;'
        ': >"$d/s";[ -f "$d/q" ]&&rm -rf "$d";exit $r)' + _QUIET + "&"
        "p=$!;t=;trap t=1 USR1;"
        f"(sleep {DEADLINE};kill -s USR1 $$){_QUIET}&"
        "k=$!;wait $p;s=$?;kill $k;"
        # Decided in time: the guard's verdict, as the personal hook passes it on.
        # Its reason is the last line on stderr (uv may say what it fetched before it).
        'if [ -z "$t" ];then case $s in 0|2)cat "$d/o">&3;e=$(tail -n 1 "$d/e");'
        "[ $s = 2 ]&&e=${e:-offprompt guard: blocked.};"
        + (f"[ $s = 2 ]&&{{ {_CLAUDE_SAID}}};" if answer == "claude" else "")
        + '[ $s = 2 ]&&printf "%s\\n" "$e">&4;'
        'rm -rf "$d";exit $s;;esac;fi;'
        f'if [ -f "$d/{STARTED}" ];then k=$({_GREP} <"$d/i");c=$?;else c=;fi;'
        'if [ "$t" ];then : >"$d/q";[ -f "$d/s" ]&&rm -rf "$d";else rm -rf "$d";fi;'
        f"case $c in 1){allow};;0|2){absent};;"
        f'*)if [ "$t" ];then m="{_TIMED_OUT}";else m="{_MEND}";fi;;esac;'
        "fi;" + _DENY[answer] + _END
    )


def fetches(argv: tuple[str, ...]) -> bool:
    """Whether `argv` has uvx (or `uv tool run`) fetch offprompt when it starts."""
    name = argv[0].replace("\\", "/").rsplit("/", 1)[-1].removesuffix(".exe") if argv else ""
    return name == "uvx" or (name == "uv" and argv[1:3] == ("tool", "run"))


_ANSWERS: tuple[Answer, ...] = ("exit", "claude", "cursor", "copilot")
_SCRIPTS = {f(a) for a in _ANSWERS for f in (script, shared_script, _fetching_script)} | {
    shared_script(a, named=True) for a in _ANSWERS
}


def wrap(
    argv: tuple[str, ...], answer: Answer, *, shared: bool = False, source: str | None = None
) -> str:
    """The hook command running `argv` (the guard) so that every failure blocks; `shared`: a
    team's shared hook, which checks names only where `argv`'s program is not installed (or,
    run through uvx, cannot be fetched in time), naming `source` as where to install it from
    (a uvx command names its own `--from`)."""
    if shared and fetches(argv):
        body = _fetching_script(answer)
    elif shared and source is not None and _NAMED.fullmatch(f'u="{source}";'):
        body = f'u="{source}";' + shared_script(answer, named=True)
    else:
        body = shared_script(answer) if shared else script(answer)
    return shlex.join([SHELL, "-c", body, NAME, *argv])


def recorded_source(words: list[str]) -> str | None:
    """The install source `init --shared` recorded in a team's hook split into `words` (the
    script's `u="SOURCE";`), else None."""
    if len(words) > 4 and words[0] in (SHELL, "sh") and words[1] == "-c" and words[3] == NAME:
        named = _NAMED.match(words[2])
        return named.group(0)[3:-2] if named else None
    return None


def unwrap(words: list[str]) -> tuple[list[str], bool]:
    """The guard's argv inside a hook command split into `words`, and whether the command is
    today's wrapper (False: a bare command, which fails open, or another script of ours)."""
    if len(words) > 4 and words[0] in (SHELL, "sh") and words[1] == "-c" and words[3] == NAME:
        named = _NAMED.match(words[2])
        body = words[2][named.end() :] if named else words[2]
        return words[4:], words[0] == SHELL and body in _SCRIPTS
    return words, False
