"""DESIGN §14's lists, against real bash as the oracle: each shell family the guard blocks is
shown to expose the canary in bash first, and each everyday neighbour it never blocks is shown
harmless there first (the project and the guard's call are test_oracle_families'.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from oracle import run_in_bash
from test_oracle_families import guard_code, project

__all__ = ["project"]  # the fixture, shared with test_oracle_families

# Commands that print, copy or change .env in real bash, by family of DESIGN §14's new lists.
ATTACKS = {
    "attached option forms": ["xargs -a.env echo", "xargs --arg-file=.env echo"],
    "metadata programs reading names": ["wc --files0-from=.env", "wc -l --files0-from .env"],
    "links": ["cat docker.env", "cp docker.env ../copy", "grep KEY docker.env"],
    "folders entered": [
        "pushd config >/dev/null && cat service.json",
        "builtin cd config && cat service.json",
        "cd -P config && cat service.json",
        "cd src; CDPATH=.. cd config >/dev/null && cat service.json",
    ],
    "names written then read": [
        "echo .env > list; xargs cat < list",
        "echo .env > list; xargs cat < ./list",
    ],
    "python-dotenv": [
        "dotenv list",
        "dotenv get OPENAI_API_KEY",
        "python -c 'from dotenv import load_dotenv; load_dotenv(); import os; print(os.environ)'",
        "python -c 'from dotenv import dotenv_values; print(dotenv_values())'",
        "python3 -c 'import dotenv; print(dotenv.dotenv_values())'",
    ],
    "make": [
        "make -s -f build.mk",
        "make -s --file=build.mk all",
        "printf 'include .env\\nall:\\n\\t@echo $(OPENAI_API_KEY)\\n' > Makefile; make -s",
        "printf -- '-include .env\\nall:\\n\\t@echo $(OPENAI_API_KEY)\\n' > mk; make -s -f mk",
        "printf 'sinclude .env\\nall:\\n\\t@echo $(OPENAI_API_KEY)\\n' > mk; make -sf mk",
    ],
    "git stash": [
        "git init -q; git commit -q --allow-empty -m x; git stash -q -a",
        "git init -q; git commit -q --allow-empty -m x; git stash push -q --all",
        "git init -q; git commit -q --allow-empty -m x; git stash save -q --all",
    ],
    "recursive diff": [
        "mkdir ../empty; diff -rN . ../empty",
        "mkdir ../empty; diff --recursive --new-file ../empty .",
        "mkdir ../empty; diff -ruN ../empty .",
        "mkdir ../empty; git diff --no-index ../empty .",
    ],
}

# Everyday work that reads no protected file in real bash: never blocked (DESIGN §14).
EVERYDAY = [
    "stat .env",
    "stat -c %s .env",
    "ls -l .env",
    "test -f .env && echo yes",
    "wc -l .env",
    "wc -c .env config/service.json",
    "chmod 600 .env",
    "chown $(id -u) .env",
    "git init -q; git check-ignore .env",
    "git init -q; git rm -q --cached --ignore-unmatch .env",
    "echo .env >> .gitignore",
    "cat docs.env",
    "cd src && cat main.py",
    "pushd src >/dev/null && cat main.py",
    "echo README.md > list; xargs cat < list",
    "dotenv -f README.md list >/dev/null 2>&1; true",
    "python -c 'from dotenv import dotenv_values; print(dotenv_values(\"README.md\"))'",
    "printf 'all:\\n\\t@echo hi\\n' > Makefile; make -s",
    "git init -q; git stash list",
    "make -s -f ok.mk",
    "git init -q; git add -A; git commit -qm x; git stash -q; git stash show",
    "diff README.md x",
    "mkdir ../empty; diff -r src ../empty",
    "git diff --no-index README.md x",
]


def _cases(families: dict[str, list[str]]) -> list[object]:
    return [
        pytest.param(command, id=f"{family}: {command}")
        for family, commands in families.items()
        for command in commands
    ]


@pytest.fixture
def linked(project: Path) -> Path:
    """The project with links whose names protect nothing: one to .env, one to the README."""
    (project / "docker.env").symlink_to(".env")
    (project / "docs.env").symlink_to("README.md")
    (project / "build.mk").write_text("include .env\nall:\n\t@echo $(OPENAI_API_KEY)\n")
    (project / "ok.mk").write_text("include config/notes.mk\nall:\n\t@echo hi\n")
    (project / "config" / "notes.mk").write_text("X = 1\n")
    return project


@pytest.mark.parametrize("command", _cases(ATTACKS))
def test_a_listed_read_that_exposes_the_file_in_bash_is_blocked(
    linked: Path, canary: str, command: str
) -> None:
    """Real bash prints, copies or changes .env with this command; the guard exits 2."""
    outcome = run_in_bash(command, linked, linked / ".env", canary)

    assert outcome.exposed, f"bash does not expose the file: {command!r}"
    assert 2 == guard_code(linked, command)


@pytest.mark.parametrize("command", EVERYDAY)
def test_a_listed_everyday_call_that_bash_shows_harmless_is_let_through(
    linked: Path, canary: str, command: str
) -> None:
    """Real bash exposes no protected file with this command; the guard exits 0."""
    for protected in (linked / ".env", linked / "config" / "service.json"):
        outcome = run_in_bash(command, linked, protected, canary)
        assert not outcome.exposed, f"bash exposes {protected.name}: {outcome}"

    assert 0 == guard_code(linked, command)


def test_a_stash_holding_the_file_is_not_shown(linked: Path, canary: str) -> None:
    """After `git stash -a` took .env in, `git stash show -p --include-untracked` prints it in
    real bash; the guard blocks it while a protected file is in the work tree."""
    setup = "git init -q; git commit -q --allow-empty -m x; git stash -q -a"
    assert run_in_bash(setup, linked, linked / ".env", canary).changed
    command = "git stash show -p --include-untracked"

    assert run_in_bash(command, linked, linked / ".env", canary).printed
    assert 2 == guard_code(linked, command)
