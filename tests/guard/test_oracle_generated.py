"""Generated commands against real bash: names by spellings (quotes, escapes, braces, `$'…'`,
`$"…"`, variables set or unset, globs, paths, substitutions) by programs that read. A fixed
seed picks the same few hundred each run. Every one that exposes a protected file in bash must
be blocked; every one over a file that is not protected must be harmless in bash and let through.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import pytest
from oracle import run_in_bash
from test_oracle_families import guard_code
from test_oracle_families import project as project  # the same project, fixture and all

PROTECTED = [".env", ".env.local", ".env.production", ".env.development.local"]
OTHERS = ["README.md", ".env.example", "notes.txt"]

# A spelling of a name: (what runs first, the word that names it).
Spelling = Callable[[str], tuple[str, str]]


def _ansi_hex(n: str) -> tuple[str, str]:
    return "", f"$'\\x{ord(n[0]):02x}'{n[1:]}"


def _ansi_octal(n: str) -> tuple[str, str]:
    return "", f"$'\\{ord(n[1]):03o}'".join([n[:1], n[2:]])


SPELLINGS: dict[str, Spelling] = {
    "plain": lambda n: ("", n),
    "single quotes": lambda n: ("", f"'{n[:2]}'{n[2:]}"),
    "double quotes": lambda n: ("", f'"{n[:2]}"{n[2:]}'),
    "empty quotes": lambda n: ("", f"{n[:2]}''{n[2:]}"),
    "backslash": lambda n: ("", f"\\{n}"),
    "brace": lambda n: ("", f"{n[:1]}{{{n[1:2]},}}{n[2:]}"),
    "brace sequence": lambda n: ("", f"{n[:1]}{{{n[1]}..{n[1]}}}{n[2:]}"),
    "ansi-c hex": _ansi_hex,
    "ansi-c octal": _ansi_octal,
    "locale": lambda n: ("", f'$"{n}"'),
    "empty locale": lambda n: ("", f'$""{n}'),
    "unset before": lambda n: ("", f"${{UNSET}}{n}"),
    "unset inside": lambda n: ("", f"{n[:2]}${{UNSET}}{n[2:]}"),
    "positional": lambda n: ("", f"{n[:2]}$1{n[2:]}"),
    "assigned part": lambda n: (f"f={n[:2]}; ", f"${{f}}{n[2:]}"),
    "assigned whole": lambda n: (f"f='{n}'; ", '"$f"'),
    "for loop": lambda n: (f"for f in x {n}; do ", "$f"),
    "glob tail": lambda n: ("", f"{n[:-1]}?"),
    "bracket": lambda n: ("", f"{n[:1]}[{n[1]}]{n[2:]}"),
    "dot slash": lambda n: ("", f"./{n}"),
    "pwd": lambda n: ("", f"$PWD/{n}"),
    "tilde plus": lambda n: ("", f"~+/{n}"),
    "up and back": lambda n: ("", f"src/../{n}"),
    "substitution": lambda n: ("", f"$(echo {n})"),
    "backticks": lambda n: ("", f"`echo {n}`"),
    "substitution part": lambda n: ("", f"{n[:2]}$(true){n[2:]}"),
}

PROGRAMS = [
    "cat {w}",
    "head -n 5 {w}",
    "tail -n 3 {w}",
    "grep -h KEY {w}",
    "sed -n p {w}",
    "awk 1 {w}",
    "cat < {w}",
    "cp {w} ../copied",
    'while IFS= read -r l; do echo "$l"; done < {w}',
    "source {w} && echo $OPENAI_API_KEY",
    "echo {w} | xargs cat",
    "bash -c 'cat \"$0\"' {w}",
]

SEED = 21
COUNT = 400


def cases(names: list[str]) -> list[tuple[str, str, str]]:
    """COUNT (name, spelling, command) picked with SEED from every combination."""
    every = [
        (name, spelling, program)
        for name in names
        for spelling in SPELLINGS
        for program in PROGRAMS
    ]
    picked = random.Random(SEED).sample(every, min(COUNT, len(every)))  # noqa: S311 - a test
    out = []
    for name, spelling, program in picked:
        before, word = SPELLINGS[spelling](name)
        command = before + program.format(w=word)
        if before.startswith("for "):
            command += "; done"
        out.append((name, spelling, command))
    return out


def write_files(project: Path, canary: str) -> None:
    for name in PROTECTED:
        (project / name).write_text(f"OPENAI_API_KEY={canary}\n")
    (project / ".env.example").write_text("OPENAI_API_KEY=\n")
    (project / "notes.txt").write_text("notes\n")


def test_every_generated_command_that_exposes_a_protected_file_is_blocked(
    project: Path, canary: str
) -> None:
    """Over the protected names: bash's verdict first; each exposing command exits 2."""
    write_files(project, canary)
    exposing, leaks = 0, []
    for name, spelling, command in cases(PROTECTED):
        if not run_in_bash(command, project, project / name, canary).exposed:
            continue  # a spelling bash itself does not make the name of (no claim on it)
        exposing += 1
        if guard_code(project, command) != 2:
            leaks.append(f"{spelling}: {command!r}")
    assert exposing > COUNT // 2  # the generator makes attacks, not noise
    assert [] == leaks


def test_every_generated_command_over_other_files_is_harmless_and_let_through(
    project: Path, canary: str
) -> None:
    """Over names that are not protected (spelled the same ways): bash exposes nothing, and
    the guard lets each through."""
    write_files(project, canary)
    blocked = []
    for _name, spelling, command in cases(OTHERS):
        assert not run_in_bash(command, project, project / ".env", canary).exposed, command
        if guard_code(project, command) != 0:
            blocked.append(f"{spelling}: {command!r}")
    assert [] == blocked


@pytest.mark.parametrize("names", [PROTECTED, OTHERS])
def test_the_generated_commands_are_the_same_every_run(names: list[str]) -> None:
    """The seed fixes them: a failure here can be run again and read."""
    assert cases(names) == cases(names)


# Recursion, however spelled, over a folder spelled many ways: `{d}` is the folder.
RECURSIONS = [
    "grep -r KEY {d}",
    "grep -R KEY {d}",
    "grep -rn KEY {d}",
    "grep -Rh KEY {d}",
    "grep --recursive KEY {d}",
    "grep --directories=recurse KEY {d}",
    "grep -d recurse KEY {d}",
    "egrep -r KEY {d}",
    "tar cf ../out.tar {d}",
    "tar -cf ../out.tar {d}",
    "zip -q -0 -r ../out.zip {d}",
    "cp -r {d} ../copy",
    "cp -R {d} ../copy",
    "cp -a {d} ../copy",
    "find {d} -type f -exec cat {{}} +",
    "find {d} -exec grep -h KEY {{}} \\;",
    "find {d} -type f | xargs cat",
    "ls -A {d} | xargs -I{{}} cat {d}/{{}}",
]
FOLDERS = {
    "here": ".",
    "here, slash": "./",
    "pwd": '"$PWD"',
    "tilde plus": "~+",
    "named": "{f}",
    "named, slash": "{f}/",
    "dot slash": "./{f}",
    "through ..": "{f}/../{f}",
    "brace": "{{{f},nothing}}",
    "unset beside": "${{UNSET}}{f}",
    "assigned": "$d",
}


def recursion_cases(folder: str) -> list[tuple[str, str]]:
    """Every recursion over every spelling of `folder` (a sub-folder's name)."""
    out = []
    for label, spelling in FOLDERS.items():
        where = spelling.format(f=folder)
        before = f"d={folder}; " if "$d" in where else ""
        for template in RECURSIONS:
            out.append((label, before + template.format(d=where)))
    return out


def test_every_recursion_into_a_folder_holding_a_protected_file_is_blocked(
    project: Path, canary: str
) -> None:
    """Over `sub` (which holds a .env) and the project itself: each command bash shows
    exposing the file is blocked."""
    exposing, leaks = 0, []
    for label, command in recursion_cases("sub"):
        if not run_in_bash(command, project, project / "sub" / ".env", canary).exposed:
            continue
        exposing += 1
        if guard_code(project, command) != 2:
            leaks.append(f"{label}: {command!r}")
    assert exposing > len(RECURSIONS) * len(FOLDERS) // 2
    assert [] == leaks


def test_every_recursion_into_a_folder_of_sources_is_let_through(
    project: Path, canary: str
) -> None:
    """The same commands over `src` (no protected file under it): harmless in bash, and let
    through. The spellings that name the project itself are left out: they do hold .env."""
    blocked = []
    for label, command in recursion_cases("src"):
        if label in ("here", "here, slash", "pwd", "tilde plus"):
            continue
        assert not run_in_bash(command, project, project / ".env", canary).exposed, command
        if guard_code(project, command) != 0:
            blocked.append(f"{label}: {command!r}")
    assert [] == blocked


# Where bash takes a variable's name, and so evaluates a subscript in it: `{s}` is the name.
CARRIERS = [
    "test -v {s}",
    "[ -v {s} ]",
    "[[ -v {s} ]]",
    "declare -i x={s}",
    "typeset -i x={s}",
    "local -i x={s} 2>/dev/null; declare -i y={s}",
    "printf -v {s} x",
    "read {s} <<< x",
    "let {s}",
    "(( {s} ))",
    "x={s}; (( x ))",
    "x={s}; echo $(( x ))",
    "x={s}; echo $[ x ]",
]
SUBSCRIPTS = {
    "single quoted": "'a[$(cat {n} >&2)]'",
    "double quoted": '"a[$(cat {n} >&2)]"',
    "backticks": "'a[`cat {n} >&2`]'",
    "nested": "'a[$(echo $(cat {n} >&2))]'",
}
READ_AS = {"plain": ".env", "split": '.e""nv', "brace": ".{{e,}}nv", "unset": "${{U}}.env"}


def subscript_cases() -> list[tuple[str, str]]:
    out = []
    for carrier in CARRIERS:
        for how, subscript in SUBSCRIPTS.items():
            for spelled, name in READ_AS.items():
                word = subscript.format(n=name.format())
                out.append((f"{how}, {spelled}", carrier.format(s=word)))
    return out


def test_every_subscript_that_runs_a_read_is_blocked(project: Path, canary: str) -> None:
    """A `$(…)` in an array subscript runs wherever bash takes a variable's name: each
    carrier by quoting by spelling that bash shows printing .env is blocked."""
    exposing, leaks = 0, []
    for label, command in subscript_cases():
        if not run_in_bash(command, project, project / ".env", canary).exposed:
            continue
        exposing += 1
        if guard_code(project, command) != 2:
            leaks.append(f"{label}: {command!r}")
    assert exposing > len(CARRIERS) * len(SUBSCRIPTS)
    assert [] == leaks


@pytest.mark.parametrize("carrier", CARRIERS)
def test_a_plain_subscript_in_the_same_place_is_let_through(
    project: Path, canary: str, carrier: str
) -> None:
    """`a[1]` and `a[$((1 + 1))]` where the attacks put theirs: harmless, and let through."""
    for subscript in ("'a[1]'", "'a[$((1 + 1))]'"):
        command = carrier.format(s=subscript)
        assert not run_in_bash(command, project, project / ".env", canary).exposed
        assert 0 == guard_code(project, command), command
