"""The real readers a written .env must satisfy: python-dotenv, `node --env-file` in every
maintained Node line (the official 22 and 24 binaries), and bash.

Each returns {key: value or None when unset} for the keys asked, read from `folder/.env`.
"""

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path

from dotenv import dotenv_values
from helpers import tool_or_skip

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


# The Node lines that decide (DESIGN §8); Node 20, the `node` on PATH, is past its end of life.
NODES = ("node22", "node24")


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


def nodejs(folder: Path, keys: Sequence[str], line: str) -> Values:
    """node --env-file=.env with the official binary of `line` ("node22"), process.env as JSON.

    Skips locally when that binary is missing, fails in CI."""
    out = subprocess.run(
        [tool_or_skip(line), "--env-file=.env", "-e", _NODE_DUMP, *keys],
        cwd=folder,
        env=CLEAN_ENV,
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    found: Values = json.loads(out)
    return found


def all_readers(folder: Path, keys: Sequence[str]) -> dict[str, Values]:
    """What each reader sees, by reader name (python-dotenv, node22, node24, bash)."""
    return {
        "python-dotenv": python_dotenv(folder, keys),
        **{line: nodejs(folder, keys, line) for line in NODES},
        "bash": bash(folder, keys),
    }
