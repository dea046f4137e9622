"""The guard against bash itself, by a differential fuzzer (fuzz.py, issue 45): commands made from
bash's grammar, run by the real bash under strace in a scratch project, decided by the guard.
Every command under which bash opened a protected file is blocked; every everyday command under
which it opened none passes. A fixed seed and count here; a longer run is one command:

    OFFPROMPT_FUZZ_CASES=100000 OFFPROMPT_FUZZ_SEED=7 python -m pytest tests/guard/test_fuzz.py

What it found and was fixed stays below as regression tests (FOUND); what it found and is not
fixed yet is KNOWN_OPEN (THREAT_MODEL lists each), and must keep failing to stay there.
"""

from __future__ import annotations

import os
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from fuzz import STRACE, Case, Scratch, generate

# CI's budget: 1,500 cases took 30 s on a busy 2-core machine (load 10), bash and strace
# included (2,000 took 40 s).
SEED = int(os.environ.get("OFFPROMPT_FUZZ_SEED", "45"))
CASES = int(os.environ.get("OFFPROMPT_FUZZ_CASES", "1500"))
# Scratch projects bash runs in side by side (strace's waits overlap on 2 cores).
WORKERS = int(os.environ.get("OFFPROMPT_FUZZ_WORKERS", "3"))

pytestmark = pytest.mark.slow

# Found by the fuzzer, fixed, kept: each must agree with bash. `True`: an everyday command.
FOUND: list[tuple[str, bool]] = [
    # A here-doc given to a shell is its script.
    ("bash <<'EOF'\ncommand cat config/servi{ce.json,}\nEOF", False),
    ("bash <<'EOF'\ntest -f sub/.env && echo yes\nEOF", True),
    # What `printf -v` assigns after a keyword (`then`).
    ("if true; then printf -v f %s 'config/service.json'; sed -n p $f; fi", False),
    # A here-string is expanded as bash does.
    ("f='.'; xargs cat <<< ${f}env", False),
    # `$PWD` after a `cd` is the folder entered.
    ('echo "$(CDPATH=. cd ./config >/dev/null && cat -- "$PWD"/service.json)"', False),
    ("cd config; cat ~+/service.json", False),
    ('cd src && cat "$PWD"/main.py', True),
    # A here-doc's quote inside `$( … )`.
    (
        "x=$(cat <<EOF >/dev/null\nit's $HOME\nEOF\nxargs -a <(echo sub/.e${UNSET}nv) cat)\n"
        'echo "$x"',
        False,
    ),
    ("x=$(cat <<EOF\nit's ) here\nEOF\n); cat README.md", True),
    # find's `-path` tests are honoured.
    ("find . -path ./src/main.py -exec cat {} +", True),
    ("find . -path './sub/.e*' -exec cat {} +", False),
    # A braced word's parts are each word bash makes of it.
    ("cat .env{.example,.example}", True),
    ("cat .env{.example,}", False),
    # A `case` pattern's `)` inside `$( … )` closes nothing.
    ('echo "$(case x in x) grep -h . src/../sub/.env;; esac)"', False),
    ("x=$(case $y in a) echo 1;; *) echo 2;; esac); cat README.md", True),
    # Inside `$( … )` a here-doc also ends at its delimiter then `)`.
    (
        "echo \"$(bash <<'EOF'\nCDPATH=$PWD; cd [c]onfig >/dev/null && diff service.js${UNSET}on"
        ' /dev/null\nEOF)"',
        False,
    ),
    # `${X:-word}`'s word as bash expands it, and an option's value with an unknown part.
    (': x; a=(x config/service.json); cat "${X:-"${a[1]}"}"', False),
    ("for i in 1; do cat \"${X:-$'sub/.\\x65nv'}\"; done", False),
    ('true && cat "${X:-.en${UNSET}v}"', False),
    ('f=sub/.; cat "${X:-${f}env}"', False),
    ('cat "${X:-README.md}"', True),
    ('echo "$(dd if=.en${UNSET}v status=none)"', False),
    # A `case` after `{` (or `then`, `do`) inside `$( … )`; `~` after `NAME=` in an argument.
    ('echo "$({ case x in x) timeout 5 cat .\\\nenv;; esac; })"', False),
    ('x=$({ case x in x) cat README.md;; esac; }); echo "$x"', True),
    ("( dd if=~+/config/service.json status=none )", False),
    # Code that `trap` and `alias` keep, and a script given on `source /dev/stdin`'s input.
    ("trap 'cat sub/.e\"\"nv' EXIT", False),
    ("source /dev/stdin <<< 'cat sub/.e\"\"nv'", False),
    ("shopt -s expand_aliases; alias c='cat sub/.e\"\"nv'\nc", False),
    ("trap 'rm -f out' EXIT; cat README.md", True),
    ("source /dev/stdin <<< 'test -f .env && echo yes'", True),
    # A `coproc`'s command is a command.
    ('coproc { ls ".env"; }; wait', True),
    ("coproc { eval \"f() { sort sub/.en''v; }; f\"; }; wait", False),
    ("coproc { coproc { cd -P $(echo config) && ( exec cat `echo service.json` ); }; }", False),
    # A subscript is `NAME[…]`: a `[ … ]` test in code is none.
    (
        "shopt -s expand_aliases\nalias a='source /dev/stdin <<< \"echo $(( 2 << 1 ))\n"
        "[ -s .env ]\"'\na",
        True,
    ),
    # A function's body after `function NAME {`, and what it assigns.
    ("function g { ls sub/.e''nv; }\ng", True),
    ("function g { printf -v f %s sub/.env; cat $f; }\ng", False),
    ('function g { cd config; cat "$PWD"/service.json; }\ng', False),
    # Arithmetic's `<<` after `{`, and as the first command of a `$( … )`.
    ("# it's a comment\nfunction g702 { (( 1 << 2 ))\nenv cat sub/.\\\nenv; }\ng702", False),
    ('echo "$((( 1 << 2 ))\nwhile IFS= read -r l; do echo "$l"; done < .e""nv)"', False),
    ("for ((i = 0; i < 1; i++)); do cat README.md; done", True),
]

# Found by the fuzzer and not fixed yet (THREAT_MODEL, "Open"): each a real failing example.
KNOWN_OPEN: dict[str, str] = {}


def _tracer_or_skip() -> None:
    """strace records what bash opens; without it (or where ptrace is refused) the test skips,
    which CI (`CI=true`) turns into a failure."""
    if STRACE is None:
        pytest.skip("strace is not installed (apt-get install strace)")
    done = subprocess.run(
        [STRACE, "-f", "-qq", "-e", "trace=openat", "-o", os.devnull, "/bin/sh", "-c", ":"],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"strace cannot trace here: {done.stderr.decode(errors='replace')[:200]}")


@pytest.fixture
def scratch(tmp_path: Path, canary: str) -> Scratch:
    _tracer_or_skip()
    return Scratch(tmp_path / "fuzz", canary)


def test_the_guard_agrees_with_bash_on_every_generated_command(tmp_path: Path, canary: str) -> None:
    """SEED's CASES commands: each that bash opened a protected file under is blocked, each
    everyday one under which it opened none passes (KNOWN_OPEN aside). WORKERS scratch
    projects run bash side by side; the guard decides in this process, one case at a time."""
    _tracer_or_skip()
    started = time.monotonic()
    cases = generate(SEED, CASES)
    scratches = [Scratch(tmp_path / f"fuzz{i}", canary) for i in range(WORKERS)]
    chunks = [cases[i::WORKERS] for i in range(WORKERS)]

    def run(i: int) -> list[tuple[Case, tuple[str, ...]]]:
        return [(case, scratches[i].opened(case.command)) for case in chunks[i]]

    with ThreadPoolExecutor(WORKERS) as pool:
        runs = list(pool.map(run, range(WORKERS)))
    findings, attacks = [], 0
    for i, done in enumerate(runs):
        for case, opened in done:
            attacks += bool(opened)
            finding = scratches[i].judge(case, opened)
            if finding is not None and case.command not in KNOWN_OPEN:
                findings.append(str(finding))
    elapsed = time.monotonic() - started
    print(
        f"fuzz: seed {SEED}, {len(cases)} cases, {attacks} opened a protected file, {elapsed:.1f} s"
    )
    assert attacks > len(cases) // 5  # the generator makes reads bash carries out, not noise
    assert [] == findings


@pytest.mark.parametrize(("command", "everyday"), FOUND, ids=[c for c, _ in FOUND])
def test_a_case_the_fuzzer_found_agrees_with_bash(
    scratch: Scratch, command: str, everyday: bool
) -> None:
    """A command the fuzzer once found the guard wrong on: bash opens a protected file and the
    guard blocks it, or it is everyday work that opens none and passes."""
    opened = scratch.opened(command)
    assert bool(opened) != everyday, f"bash opened {opened}"
    assert scratch.judge(Case(command, everyday), opened) is None


def test_each_known_open_case_still_fails(scratch: Scratch) -> None:
    """Each entry of KNOWN_OPEN is a real failing example (bash opens a protected file the
    guard lets through, or the guard blocks everyday work); once fixed it moves to FOUND."""
    for command, why in KNOWN_OPEN.items():
        everyday = why.startswith("false positive")
        assert scratch.judge(Case(command, everyday), scratch.opened(command)) is not None, command


def test_the_generated_commands_are_the_same_every_run() -> None:
    """The seed fixes them: a failure can be run again and read."""
    assert generate(SEED, 50) == generate(SEED, 50)
    assert generate(SEED, 50) != generate(SEED + 1, 50)
