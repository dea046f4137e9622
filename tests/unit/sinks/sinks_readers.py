"""The three real readers a written .env must satisfy: python-dotenv, `node --env-file`, bash.

Each returns {key: value or None when unset} for the keys asked, read from `folder/.env`.
"""

import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest
from dotenv import dotenv_values

Values = dict[str, str | None]

# Nothing from outside: Node never overrides a variable already in its environment, and bash
# would inherit one the file failed to set.
CLEAN_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}

_BASH_DUMP = (
    "set -a; . ./.env; "
    'for k in "$@"; do if [ -n "${!k+x}" ]; then printf "1%s\\0" "${!k}"; '
    'else printf "0\\0"; fi; done'
)
_NODE_DUMP = (
    "const o = {}; for (const k of process.argv.slice(1)) o[k] = process.env[k] ?? null;"
    " process.stdout.write(JSON.stringify(o));"
)


def node() -> str:
    """The node binary; skips locally when missing, fails in CI where it must be installed."""
    found = shutil.which("node")
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("node is missing in CI")
    pytest.skip("node not installed")


def python_dotenv(folder: Path, keys: Sequence[str]) -> Values:
    """python-dotenv's `dotenv_values()` with its defaults (interpolation on)."""
    found = dotenv_values(folder / ".env")
    return {k: found.get(k) for k in keys}


def bash(folder: Path, keys: Sequence[str]) -> Values:
    """bash -c 'set -a; . ./.env', each variable dumped NUL-terminated."""
    out = subprocess.run(
        ["bash", "-c", _BASH_DUMP, "bash", *keys],
        cwd=folder,
        env=CLEAN_ENV,
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    items = out.split(b"\0")[:-1]
    assert len(items) == len(keys)
    return {
        k: item[1:].decode("utf-8", "surrogateescape") if item[:1] == b"1" else None
        for k, item in zip(keys, items, strict=True)
    }


def nodejs(folder: Path, keys: Sequence[str]) -> Values:
    """node --env-file=.env, process.env dumped as JSON."""
    out = subprocess.run(
        [node(), "--env-file=.env", "-e", _NODE_DUMP, *keys],
        cwd=folder,
        env=CLEAN_ENV,
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    found: Values = json.loads(out)
    return found


def all_three(folder: Path, keys: Sequence[str]) -> dict[str, Values]:
    """What each reader sees, by reader name."""
    return {
        "python-dotenv": python_dotenv(folder, keys),
        "node": nodejs(folder, keys),
        "bash": bash(folder, keys),
    }
