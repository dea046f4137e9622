"""Files a program opens that its words do not name (DESIGN §14): python-dotenv's CLI and API
called without a path open `.env`; `make` reads the files its Makefile includes.
"""

from __future__ import annotations

import os

from offprompt import rx
from offprompt.guard.bash import Word
from offprompt.guard.check import UNCHECKED, Check

__all__ = ["code", "opens"]

# python-dotenv's functions that read `.env` (found from the caller, or the cwd for `-c`) when
# no path or stream is given to them: `load_dotenv()`, `dotenv_values(override=True)`.
_DOTENV_CALL = rx.compile(r"\b(?:load_dotenv|dotenv_values|find_dotenv)\s*\(([^()]*)\)")
_DOTENV_KEYWORDS = rx.compile(r"^\s*(?:override|verbose|interpolate|encoding|usecwd|"
                              r"raise_error_if_not_found)\s*=")  # fmt: skip
# Programs whose code words may call python-dotenv: Python, and the runners that start it.
_PYTHON = rx.compile(r"^(?:python[0-9.]*|ipython3?|pypy3?|uv|uvx|pipx|poetry|pdm|hatch)$")
# The options of the dotenv CLI that give the file (`dotenv -f FILE list`).
_DOTENV_FILE = ("-f", "--file")
# GNU make's options naming the makefile and the folder it runs in, and the names it tries.
_MAKE_FILE = ("-f", "--file", "--makefile")
_MAKE_DIR = ("-C", "--directory")
_MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_INCLUDE = rx.compile(r"^[ \t]*(?:-|s)?include[ \t]+(.+)$", rx.MULTILINE)
# How much of a Makefile is read for its includes.
_MAKEFILE_BYTES = 65_536


def code(program: str, text: str) -> str | None:
    """`.env` when `text`, code a Python `program` runs, calls python-dotenv without a path."""
    if not _PYTHON.match(program) or "dotenv" not in text:
        return None
    for m in _DOTENV_CALL.finditer(text):
        given = [a for a in m.group(1).split(",") if a.strip()]
        if all(_DOTENV_KEYWORDS.match(a) for a in given):
            return ".env"
    return None


def opens(check: Check, program: str, args: list[Word], said: dict[str, str]) -> str | None:
    """The protected file `program` run with `args` opens without naming it, or None."""
    texts = [a.text for a in args]
    if program == "dotenv" or (_PYTHON.match(program) and texts[:2] == ["-m", "dotenv"]):
        if not any(t in _DOTENV_FILE or t.startswith(("--file=", "-f")) for t in texts):
            return ".env"  # the CLI's default file, in the cwd
        return None
    if program in ("make", "gmake"):
        return _make(check, texts, said)
    return None


def _make(check: Check, texts: list[str], said: dict[str, str]) -> str | None:
    """A protected file a makefile make reads includes (`include .env`, `-include`,
    `sinclude`), as the file is now or as the command wrote it (`said`)."""
    folder, files = check.dirs[-1], []
    for i, t in enumerate(texts):
        nxt = texts[i + 1] if i + 1 < len(texts) else ""
        name, eq, value = t.partition("=")
        if t in _MAKE_DIR:
            folder = os.path.join(folder, nxt)
        elif eq and name in _MAKE_DIR[1:]:
            folder = os.path.join(folder, value)
        elif t.startswith("-C") and len(t) > 2:
            folder = os.path.join(folder, t[2:])
        elif t in _MAKE_FILE:
            files.append(nxt)
        elif eq and name in _MAKE_FILE[1:]:
            files.append(value)
        elif t.startswith("-") and not t.startswith("--") and "f" in t[1:]:
            rest = t[t.index("f", 1) + 1 :]  # `-sf mk`, `-fmk`
            files.append(rest or nxt)
    paths = [os.path.join(folder, f) for f in files] or [
        os.path.join(folder, f) for f in _MAKEFILES
    ]
    for path in paths:
        path = os.path.normpath(path)
        if path in said:
            return said[path]
        if not os.path.isfile(path):
            continue
        if not check.spend(64):
            return UNCHECKED
        try:
            with open(path, "rb") as f:
                text = f.read(_MAKEFILE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        for m in _INCLUDE.finditer(text):
            for name in m.group(1).split("#", 1)[0].split():
                hit = check.path(os.path.join(folder, name), glob=any(c in name for c in "*?["))
                if hit is not None:
                    return name
        if not files:
            break  # make reads the first default makefile it finds, no other
    return None
