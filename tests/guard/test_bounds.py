"""DESIGN §14: the guard's time is bounded for any input up to the host's limit. These count
work (lexer steps, file system looks), never wall time, so they cannot be noisy; the figures
are in bench/guard.py ("worst inputs"). Past a cap the call is blocked, never let through."""

from __future__ import annotations

import contextlib
import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_guard import claude_event, run_guard, written_project

from offprompt.guard import bash, check, commands, hook, search
from offprompt.guard.check import BUDGET, UNCHECKED, Check
from offprompt.guard.protected import Protected

# What one event may carry (hook.MAX_EVENT_BYTES is 4 MiB); the families use about this much.
BIG = 1_000_000


def families() -> dict[str, str]:
    """Each shape of input that once took the guard super-linear time (or a step per byte)."""

    def fill(unit: str, head: str = "", tail: str = "") -> str:
        return head + unit * ((BIG - len(head) - len(tail)) // len(unit)) + tail

    return {
        "cds and words": fill("cd d1; cd d2; echo a b c; "),
        "distinct cds": " ; ".join(f"cd d{i}" for i in range(2000)) + " ; cat " + "w " * 2000,
        "words": fill("ab ", "cat "),
        "pipeline": fill("cat f | ", "", "cat f"),
        "semicolons": fill("cat f ; "),
        "redirections": fill("> f ", "cat "),
        "globs": fill("f* ", "cat "),
        "huge word": fill("a", "cat "),
        "glob word": fill("a*", "cat "),
        "quotes": fill("'a'\"b\"", "cat "),
        "double quoted": fill("a", 'cat "', '"'),
        "backslashes": fill("\\a", "cat "),
        "here-doc": fill("line\n", "cat <<EOF\n", "EOF\n"),
        "substitutions": fill("$(echo a) ", "cat "),
        "backticks": fill("`a` ", "cat "),
        "big substitution": fill("a", "cat $(echo ", ")"),
        "nested substitutions": "cat " + "$(echo " * 40 + "a" + ")" * 40,
        "eval chain": fill("eval ", "", "cat a"),
        "eval chain under the cap": "eval " * 16 + "cat " + "a " * 45_000,
        "bash -c of a long script": "bash -c " * 16 + "'" + "cat a; " * 30_000 + "'",
        "bash -c chain": "bash -c " * 40 + "a",
        "slashes": fill("a/", "cat "),
        "cd globs": fill("cd d*; "),
        "here-docs in $( )": fill("cat <<a\nx'\na\n", "cat $(", ")"),
        "case in $( )": fill("case x in x) a;; esac; ", "echo $(", ")"),
        "arithmetic": fill("(( 1 << 2 )); "),
        "defaults": fill("${X:-a} ", "cat "),
        "nested defaults": "cat " + '"${X:-' * 40 + "a" + '}"' * 40,
    }


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Counts the lexer's steps and every realpath and glob the checks ask for."""
    counts = {"steps": 0, "realpath": 0, "glob": 0}
    real_step = bash.Env.step
    real_realpath = os.path.realpath
    real_expand = check._expand

    def step(self: object) -> None:
        counts["steps"] += 1
        real_step(self)  # type: ignore[arg-type]

    def realpath(path: str, *args: object, **kwargs: object) -> str:
        counts["realpath"] += 1
        return real_realpath(path, *args, **kwargs)  # type: ignore[arg-type]

    def expand(pattern: str, *options: object) -> object:
        counts["glob"] += 1
        return real_expand(pattern, *options)  # type: ignore[arg-type]

    monkeypatch.setattr(bash.Env, "step", step)
    monkeypatch.setattr(check.os.path, "realpath", realpath)
    monkeypatch.setattr(check, "_expand", expand)
    return counts


def a_check(root: Path, written: tuple[str, ...] = ()) -> Check:
    return Check(str(root), str(root), Protected(str(root / w) for w in written), [str(root)])


@pytest.mark.parametrize("family", sorted(families()))
def test_each_family_costs_bounded_work_and_never_opens(
    family: str, counted: dict[str, int], tmp_path: Path
) -> None:
    text = families()[family]
    hit = commands.script(a_check(tmp_path, ("config/service.json",)), text)
    assert counted["steps"] <= bash.MAX_STEPS + 1
    # Each look is a folder a name is tried in: at most two realpaths (staging, written).
    assert counted["realpath"] <= 2 * BUDGET + 64
    assert counted["glob"] <= BUDGET
    assert hit in (None, UNCHECKED)


def test_a_plain_run_of_characters_is_one_step(counted: dict[str, int], tmp_path: Path) -> None:
    commands.script(a_check(tmp_path), "cat " + "a" * BIG + ' "' + "b" * BIG + '"')
    assert counted["steps"] < 10


def test_a_long_here_doc_is_read_in_one_search(counted: dict[str, int], tmp_path: Path) -> None:
    commands.script(a_check(tmp_path), "cat <<EOF\n" + "line\n" * 100_000 + "EOF\necho done")
    assert counted["steps"] < 20


def test_a_repeated_cd_is_one_folder(counted: dict[str, int], tmp_path: Path) -> None:
    c = a_check(tmp_path, ("config/service.json",))
    assert commands.script(c, "cd sub; cd sub; " * 500 + "cat x") is None
    assert len(c.dirs) == 2
    assert counted["realpath"] <= 12  # two folders, two names (cat, x): not 1,000 cds


def test_a_repeated_name_is_looked_at_once(counted: dict[str, int], tmp_path: Path) -> None:
    assert (
        commands.script(a_check(tmp_path, ("config/service.json",)), "cat " + "x " * 5000) is None
    )
    assert counted["realpath"] <= 8  # two names (cat, x), not 5,000


@pytest.mark.parametrize(
    "text",
    [
        "cat " + " ".join(f"w{i}" for i in range(BUDGET + 10)) + "; cat config/service.json",
        " ; ".join(f"cd d{i}" for i in range(100)) + " ; cat config/service.json",  # too many cds
        "echo " + "a;" * (bash.MAX_STEPS + 10) + " cat config/service.json",  # too long to read
        "cat $(echo " * 30 + "config/service.json" + ")" * 30,  # nested too deeply
        "eval " * 40 + "cat config/service.json",  # code run by code, too deep
    ],
    ids=["budget", "cds", "steps", "nesting", "eval"],
)
def test_a_read_hidden_past_a_cap_is_blocked(text: str, tmp_path: Path) -> None:
    c = a_check(tmp_path, ("config/service.json",))
    assert commands.script(c, text) == UNCHECKED


def test_under_the_caps_the_same_read_is_blocked_by_its_name(tmp_path: Path) -> None:
    c = a_check(tmp_path, ("config/service.json",))
    assert commands.script(c, "echo w w w; cat config/service.json") == "config/service.json"
    assert commands.script(a_check(tmp_path), "cat " + "w " * 1000 + "; cat README.md") is None


def test_the_real_guard_blocks_a_link_to_a_written_file_hidden_after_the_cap(
    tmp_path: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = written_project(tmp_path, canary)
    (root / "notes").symlink_to(root / "config" / "service.json")
    monkeypatch.chdir(root)
    make: Callable[[str, dict[str, object]], dict[str, object]] = claude_event(root)
    under = run_guard(make("Bash", {"command": "echo a b; cat notes"}))
    assert under.returncode == 2  # the link is seen for what it leads to
    hidden = "cat " + " ".join(f"w{i}" for i in range(BUDGET + 10)) + "; cat notes"
    done = run_guard(make("Bash", {"command": hidden}))
    assert done.returncode == 2
    assert done.stderr.decode().strip() == hook.UNCHECKED_REASON
    assert canary.encode() not in done.stdout + done.stderr
    plain = run_guard(make("Bash", {"command": "echo a b; cat README.md"}))
    assert plain.returncode == 0


@pytest.mark.parametrize(
    "text", ["cat $(echo x) .e''nv", "cat `echo x` .e''nv", "cat .e''nv $(echo)"]
)
def test_a_substitution_before_a_protected_name_does_not_hide_it(text: str, tmp_path: Path) -> None:
    # A substitution's word (its output marked by NUL) once made realpath raise, and the guard
    # fell back to its crude check, which does not see `.e''nv`: the call went through.
    assert commands.script(a_check(tmp_path), text) == ".env"


def test_the_crude_check_reads_a_big_event_once_for_all_written_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    names = [f"/p{i}/config/s{i}.json" for i in range(200)] + ["/q/my secrets.txt"]
    protected = Protected(names)
    searches = {"n": 0}
    real_search = hook.rx.search

    def search(*args: object, **kwargs: object) -> object:
        searches["n"] += 1
        return real_search(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hook.rx, "search", search)
    raw = "cat 'x " + "a " * 100_000
    assert hook.crude(raw, protected) is None
    assert searches["n"] == 1  # only the name with a space is searched for on its own
    assert hook.crude(raw + " config/s7.json", protected) == "s7.json"
    assert hook.crude(raw + " xs7.json s7.jsonx", protected) is None
    assert hook.crude(raw + " ~/my secrets.txt", protected) == "my secrets.txt"


def test_recursive_searches_walk_a_bounded_number_of_times(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    walks = {"n": 0}
    real = search.under

    def under(c: Check, root: str) -> list[str]:
        walks["n"] += 1
        return real(c, root)

    monkeypatch.setattr(search, "under", under)
    c = a_check(tmp_path)  # nothing protected under it: each search alone lets the call through
    assert commands.script(c, "grep -r KEY . ; " * 1000) == UNCHECKED
    assert walks["n"] <= BUDGET // search.SEARCH_LOOKS
    assert commands.script(a_check(tmp_path), "grep -r KEY . ; grep -r KEY .") is None


@pytest.mark.parametrize(
    "text",
    [
        "cat " + " ".join(f"x{i}*" for i in range(5000)),
        "cat " + " ".join(f"*/x{i}*" for i in range(100)),
        "cat */*/*/x*",
    ],
    ids=["globs", "folder globs", "deep glob"],
)
def test_glob_expansions_are_bounded_and_block_past_the_budget(
    text: str, counted: dict[str, int], tmp_path: Path
) -> None:
    for i in range(3):
        (tmp_path / f"d{i}").mkdir()
    assert commands.script(a_check(tmp_path), text) == UNCHECKED
    assert counted["glob"] <= BUDGET // check.GLOB_LOOKS[0]


def test_an_everyday_glob_is_still_expanded(tmp_path: Path) -> None:
    staged = tmp_path / "src" / ".offprompt-0123456789abcdef"
    staged.mkdir(parents=True)
    (staged / "config.json.new").write_text("K=v\n")
    assert commands.script(a_check(tmp_path), "cat src/.o*/*") == "src/.o*/*"  # found by expanding
    assert commands.script(a_check(tmp_path), "cat src/*.md */*.py") is None


def test_a_name_of_many_parts_costs_a_look_a_part(counted: dict[str, int], tmp_path: Path) -> None:
    # realpath takes an lstat per part: 500 names of 1,500 parts took 2.8 s.
    text = "cat " + " ".join(f"{i}" + "/a" * 1500 for i in range(500))
    assert commands.script(a_check(tmp_path, ("config/service.json",)), text) == UNCHECKED
    assert counted["realpath"] <= 2 * (BUDGET // 1500 + 1) + 4


@pytest.mark.parametrize(
    "text",
    [
        "cat .e''nv\necho 'x",
        'cat .e""nv\necho "x',
        "cat .e''nv; echo $(ls",
        "cat .e''nv\necho `x",
        "cat .e''nv\necho ${x",
        "cat .e''nv\necho $'x",
        "cat .e''nv\necho \"$(echo 'x",
        "cat .e''nv\necho >",
    ],
)
def test_a_line_bash_runs_before_one_it_cannot_read_is_still_checked(
    text: str, tmp_path: Path
) -> None:
    # bash -c runs `cat .env` and only then fails on the open quote; the crude check alone,
    # which the guard fell back to, does not see `.e''nv`.
    assert commands.script(a_check(tmp_path), text) == ".env"
    with pytest.raises(bash.ShellSyntax):
        commands.script(a_check(tmp_path), "cat README.md\necho 'x")  # the caller's fallback


def test_the_real_guard_blocks_a_read_before_an_open_quote(
    tmp_path: Path, canary: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = written_project(tmp_path, canary)
    monkeypatch.chdir(root)
    done = run_guard(claude_event(root)("Bash", {"command": "cat .e''nv\necho 'x"}))
    assert done.returncode == 2
    assert canary.encode() not in done.stdout + done.stderr


def test_a_search_with_too_many_filters_is_blocked_unmatched(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / ".env").write_text("K=v\n")
    matches = {"n": 0}
    real = search.rx.fnmatchcase

    def fnmatchcase(name: str, pattern: str) -> bool:
        matches["n"] += 1
        return real(name, pattern)

    monkeypatch.setattr(search.rx, "fnmatchcase", fnmatchcase)
    many = " ".join(f"--include=a{i}" for i in range(search.MAX_FILTERS + 1))
    assert commands.script(a_check(tmp_path), f"grep -r {many} KEY .") == UNCHECKED
    assert matches["n"] == 0
    few = " ".join(f"--include=a{i}" for i in range(search.MAX_FILTERS))
    assert commands.script(a_check(tmp_path), f"grep -r {few} KEY .") is None
    assert commands.script(a_check(tmp_path), "grep -r --include=.env KEY .") == "s/.env"


@pytest.mark.parametrize(
    "command",
    [
        "cat " + "{a,b}" * 40,  # 2**40 words
        "cat x{1..100000}",
        "".join(f"f=v{i}; " for i in range(300)) + "cat $f",
    ],
)
def test_expansions_past_their_caps_block_fast(tmp_path: Path, command: str) -> None:
    """Brace expansion past MAX_VARIANTS words, or a variable given more values than the guard
    follows, is blocked as too big to check, within a second."""
    started = time.perf_counter()

    assert commands.script(a_check(tmp_path), command) == UNCHECKED
    assert time.perf_counter() - started < 1.0


# Pieces of the forms the rules read (expansions, options, subscripts, here-docs…), joined at
# random into text that is mostly not shell at all.
_PIECES = (
    "cat", "grep", "-r", "--directories=recurse", "tar", "cf", "zip", "-x", "cp", "-a", "find",
    "-exec", "{}", "+", "\\;", "-name", "-iname", "-type", "d", "xargs", "-a", "--arg-file=",
    "printf", "-v", "f", "'%s'", "echo", "-e", "ls", "-A", "git", "-c", "log", "--grep",
    "commit", "-m", "gh", "--title", "jq", "env", "-S", "--split-string=", "test", "declare",
    "-i", "read", "mapfile", "shopt", "-s", "dotglob", "GLOBIGNORE=", "f=.e", "a=(", ")", "(",
    "$f", "${f}", "${f#x}", "${f/x/.}", "${a[0]}", "$'\\x2e'", '$"', '"', "'", "{", "}", ",",
    "{a,b}", "{1..3}", ".env", "nv", ".e", "*", "*/", "~+", "~-", "$(", "`", "<<EOF", "\nEOF\n",
    "<<<", "<", ">", ">>", "|", ";", "&&", "\n", "for", "in", "do", "done", "bash", "-c", "eval",
    "$1", "@(", "!(", "[", "]", "$((", "))", "\\", "=", "%s", "2>&1", "${UNSET}",
    "a[$(cat .env)]", "-d", "recurse", "sub", ".",
)  # fmt: skip


def test_the_rules_never_fail_on_generated_text(tmp_path: Path) -> None:
    """5,000 texts made of the forms the rules read, joined at random (a fixed seed): each is
    decided or found not to be shell, never an exception (which would leave the call to the
    looser check for events the guard cannot read)."""
    (tmp_path / ".env").write_text("K=v\n")
    (tmp_path / "sub").mkdir()
    rng = random.Random(21)  # noqa: S311 - a test's fixed seed
    for _ in range(5000):
        text = " ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 14)))
        with contextlib.suppress(bash.ShellSyntax):
            commands.script(a_check(tmp_path), text)
