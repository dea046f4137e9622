"""rx.py, the guard's regular expressions without `re`: its table is what the running Python's
`re` compiles the guard's patterns to, and each pattern it makes matches as `re.compile`'s."""

import fnmatch
import glob
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

from offprompt import jsonread, rx
from offprompt.rx import _table as _rx_table

SAMPLES = [
    "",
    "ls -la",
    "cat README.md",
    "grep -rn API src/",
    "git diff -- src/main.py | head -50",
    'python3 -c \'import json; print(json.load(open("package.json"))["name"])\'',
    "cat .env",
    "source .env && echo $KEY",
    ".env.production.local",
    ".env.local",
    "x.env",
    ".offprompt-0123456789abcdef",
    ".a.offprompt-0123456789abcdef.tmp",
    ".offprompt-keep",
    "KEY=value",
    "export KEY_1.x = v",
    "  # a comment",
    "${HOME:-/root}",
    "a+=b",
    "arr[1]",
    "\\x41\\n\\cA\\u00e9\\U0001F600\\101",
    "1..5",
    "10..1..-3",
    "a..e..2",
    "%-5s %d%% %q",
    "load_dotenv('.env', override=True)",
    "dotenv_values(find_dotenv(usecwd=True))",
    "python3.11",
    "uvx",
    "-include .env\ninclude  config.mk\n",
    "*** Add File: a.py\n*** Move to: b.py",
    "{a,b}\\{c,d}",
    "é🙂\t\n\x00",
    "a" * 300,
]


def test_the_table_is_current() -> None:
    """`python -m offprompt.rx_write --check`: the table holds exactly the guard's patterns,
    each as this Python's `re` compiles it (a pattern added without `--write` fails here)."""
    if _rx_table.VERSION != sys.version_info[:2]:
        pytest.skip("the table is written for another Python (CI's); this one compiles with re")
    done = subprocess.run(
        [sys.executable, "-m", "offprompt.rx_write", "--check"],
        capture_output=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()


def test_the_table_is_used_on_its_python() -> None:
    """On the Python the table was written for (CI's), rx builds patterns from it."""
    if _rx_table.VERSION != sys.version_info[:2]:
        pytest.skip("the table is for another Python")
    assert rx._USABLE


@pytest.mark.parametrize("key", sorted(_rx_table.PATTERNS, key=repr))
def test_each_pattern_matches_as_res(key: tuple[str | bytes, int]) -> None:
    """Each pattern of the table, made by rx, has re.compile's attributes and finds, matches,
    splits and substitutes as re.compile's does on the samples."""
    pattern, flags = key
    ours, theirs = rx.compile(pattern, flags), re.compile(pattern, flags)
    assert ours is not theirs
    assert (ours.pattern, ours.flags, ours.groups, ours.groupindex) == (
        theirs.pattern,
        theirs.flags,
        theirs.groups,
        theirs.groupindex,
    )
    for text in SAMPLES:
        sample: str | bytes = text.encode() if isinstance(pattern, bytes) else text
        for method in ("search", "match", "fullmatch"):
            a, b = getattr(ours, method)(sample), getattr(theirs, method)(sample)
            assert (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
        assert ours.findall(sample) == theirs.findall(sample)
        assert ours.split(sample) == theirs.split(sample)
        assert ours.sub(lambda m: m.group(0)[::-1], sample) == theirs.sub(
            lambda m: m.group(0)[::-1], sample
        )


@pytest.mark.parametrize("glob", sorted(_rx_table.GLOBS))
def test_each_glob_is_fnmatchs(glob: str) -> None:
    """Each glob of the table translates, and matches the samples, as fnmatch's."""
    assert rx.glob(glob) == fnmatch.translate(glob)
    for name in SAMPLES:
        assert rx.fnmatchcase(name, glob) == fnmatch.fnmatchcase(name, glob)


def test_patterns_outside_the_table_are_res() -> None:
    """A pattern or glob made at run time is compiled by re and fnmatch, alike."""
    assert rx.compile("^x[0-9]+$", rx.MULTILINE).findall("x1\nx22\ny") == ["x1", "x22"]
    assert rx.fnmatchcase(".env.staging", ".e*[!x]") is fnmatch.fnmatchcase(
        ".env.staging", ".e*[!x]"
    )
    assert rx.sub("(a)", r"\1\1", "cat") == "caat"  # a template: _sre asks re to read it


def test_escape_is_res() -> None:
    """rx.escape escapes what re.escape does, every ASCII character and some beyond."""
    text = "".join(map(chr, range(128))) + "é🙂"
    assert rx.escape(text) == re.escape(text)


def test_flags_are_res() -> None:
    """rx's flags are re's values."""
    assert (rx.IGNORECASE, rx.MULTILINE, rx.DOTALL, rx.ASCII) == (
        re.IGNORECASE.value,
        re.MULTILINE.value,
        re.DOTALL.value,
        re.ASCII.value,
    )


DOCUMENTS: list[str | bytes] = [
    '{"a": [1, 2.5, -0, 1e400, NaN, -Infinity, Infinity, true, false, null, "x\\u002e"]}',
    " \t\n\r{}\n ",
    "[1] x",
    "[1]  ]",
    "",
    "   ",
    "[",
    '{"a" 1}',
    '"\x01"',
    '"\\ud800"',
    "\ufeff{}",
    '{"a": 1, "a": 2}',
    "12345678901234567890",
    "1.5e-3",
    "nul",
    b'{"project": "/p", "file": ".env"}',
    b"\xef\xbb\xbf[1]",
    "[1]".encode("utf-16"),
    "[1]".encode("utf-32-le"),
    '{"a": 1}'.encode("utf-16-be"),
    b"\xff\xfe",
    b"\x80abc",
    b"12",
    b"\x001",
    "[" * 100 + "]" * 100,
]


@pytest.mark.parametrize("document", DOCUMENTS, ids=repr)
def test_jsonread_reads_as_json(document: str | bytes) -> None:
    """jsonread.loads gives json.loads' value, or the same error at the same place."""

    def outcome(loads: object) -> object:
        try:
            return ("value", repr(loads(document)))  # type: ignore[operator]
        except Exception as e:
            return (type(e).__name__, str(e))

    assert outcome(jsonread.loads) == outcome(json.loads)


def test_jsonread_recursion_is_jsons() -> None:
    """A document nested past the interpreter's limit fails as json's does (RecursionError)."""
    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(RecursionError):
        json.loads(deep)
    with pytest.raises(RecursionError):
        jsonread.loads(deep)


GLOB_PATTERNS = [
    "[",
    "a[b",
    ".[",
    "d[/[",
    "d[/x",
    "d[/",
    "f[/x",
    "nope[/x",
    "d[/.[",
    "d[/sub[/[",
    "x",
    "[]",
    "[ab]",
    "*",
    "d[/*",
    "?[",
    "**/[",
]


@pytest.mark.parametrize("pattern", GLOB_PATTERNS)
@pytest.mark.parametrize("hidden", [False, True])
@pytest.mark.parametrize("recursive", [False, True])
def test_iglob_finds_what_glob_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pattern: str, hidden: bool, recursive: bool
) -> None:
    """rx.iglob finds what glob.iglob finds, for patterns whose `[` is literal (which rx answers
    itself) and for others, absolute and from the current folder, files and folders alike."""
    for name in ("[", "a[b", ".[", "x", "f["):
        (tmp_path / name).write_text("")
    (tmp_path / "d[" / "sub[").mkdir(parents=True)
    for name in ("[", "x", ".[", "sub[/["):
        (tmp_path / "d[" / name).write_text("")
    (tmp_path / "link[").symlink_to(tmp_path / "gone")
    monkeypatch.chdir(tmp_path)
    for p in (pattern, str(tmp_path / pattern), "link[", str(tmp_path / "link[")):
        ours = list(rx.iglob(p, recursive=recursive, include_hidden=hidden))
        theirs = list(glob.iglob(p, recursive=recursive, include_hidden=hidden))
        assert sorted(ours) == sorted(theirs), p
