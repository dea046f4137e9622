"""Where the guard's reader lost its place in bash's grammar (issue 45), each run in real bash
first: a `#` comment holding a quote inside `$( … )`, an arithmetic command whose `<<` is a shift
and not a here-doc, and a `cd` (`pushd`, `cd -P`, `CDPATH`, `builtin cd`) to a folder named by a
pattern before a relative read. Bash reads the file in each; the guard blocks each."""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import run_in_bash
from test_oracle_families import guard_code
from test_oracle_families import project as project  # the same project, fixture and all

# (command, the protected file bash reads with it, relative to the project)
GRAMMAR = [
    ("echo $( # it's\n)\ncat sub/.e''nv", "sub/.env"),
    ("x=$( # don't\necho 1 )\ncat sub/.e''nv", "sub/.env"),
    ('echo "$( # a "quote\n)"\ncat sub/.e""nv', "sub/.env"),
    ("echo `# it's`\ncat sub/.e''nv", "sub/.env"),
    ("(( 1 << 2 ))\ncat sub/.e''nv", "sub/.env"),
    ("(( x = 1 << 2 ))\ncd config; cat service.json", "config/service.json"),
    ("((1<<2)) && cat sub/.e''nv", "sub/.env"),
    ("echo $(( 1 << 2 ))\ncat sub/.e''nv", "sub/.env"),
    ("cd conf* && cat service.json", "config/service.json"),
    ("cd con?ig && cat service.json", "config/service.json"),
    ("cd [c]onfig && cat service.json", "config/service.json"),
    ("cd {config,} 2>/dev/null; cat service.json", "config/service.json"),
    ("pushd c* >/dev/null && cat service.json", "config/service.json"),
    ("cd -P conf* && cat service.json", "config/service.json"),
    ("builtin cd conf* && cat service.json", "config/service.json"),
    ("CDPATH=. cd c* >/dev/null && cat service.json", "config/service.json"),
    ("CDPATH=$PWD; cd con*g >/dev/null && cat service.json", "config/service.json"),
    ("d=conf; cd $d* && cat service.json", "config/service.json"),
    ("cd $(echo config) && cat service.json", "config/service.json"),
    ('cd "$(ls -d c*)" && cat service.json', "config/service.json"),
]


@pytest.mark.parametrize(("command", "read"), GRAMMAR, ids=[c for c, _ in GRAMMAR])
def test_a_read_bash_reaches_through_its_grammar_is_blocked(
    project: Path, canary: str, command: str, read: str
) -> None:
    """Real bash reads the protected file with this command; the guard exits 2."""
    assert run_in_bash(command, project, project / read, canary).exposed, command
    assert 2 == guard_code(project, command)


EVERYDAY = [
    "echo $( # it's fine\necho 1 )\ncat README.md",
    "(( 1 << 2 ))\ncat README.md",
    "cd sr* && cat main.py",
    "cd conf* && cat notes.md",
    "pushd s?c >/dev/null && wc -l main.py",
    "cd $(echo src) && cat main.py",
]


@pytest.mark.parametrize("command", EVERYDAY)
def test_the_same_shapes_over_other_files_are_let_through(
    project: Path, canary: str, command: str
) -> None:
    """The same grammar around files that are not protected: harmless in bash, let through."""
    for protected in (project / ".env", project / "config" / "service.json"):
        assert not run_in_bash(command, project, protected, canary).exposed
    assert 0 == guard_code(project, command)
