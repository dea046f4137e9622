"""Reading what the project's own files link it to: git remotes, `.vercel/project.json`, the
wrangler config and `fly.toml`. Read-only; nothing here runs a destination's program.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path
from typing import Any, Final

__all__ = ["first_remote", "github_repo", "jsonc_loads", "read_config"]

_MAX_CONFIG: Final = 1024 * 1024
_OWNER: Final = r"(?P<owner>[A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))"
_REPO: Final = r"(?P<repo>[A-Za-z0-9._-]{1,100}?)"
_TAIL: Final = r"(?:\.git)?/?"
_KEYS: Final = r"^remote\..+\.url$"
_GITHUB_URL: Final = re.compile(
    rf"(?:https?|git|ssh|git\+ssh)://(?:[^@/\s]+@)?github\.com(?::\d+)?/{_OWNER}/{_REPO}{_TAIL}",
    re.IGNORECASE,
)
_GITHUB_SCP: Final = re.compile(
    rf"(?:[^@/:\s]+@)?github\.com:/?{_OWNER}/{_REPO}{_TAIL}", re.IGNORECASE
)


def first_remote(project: Path) -> tuple[str, str] | None:
    """(name, url) of the project's first git remote, in the order its config lists them (the
    order they were added; `git remote` sorts by name); None when there is none.

    OSError or ValueError when git cannot answer. The url may hold credentials: never show it.
    """
    git = shutil.which("git")
    if git is None:
        raise OSError("git is not installed")
    # Our own repository only: GIT_DIR & co. from outside would name another one.
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["LC_ALL"] = "C"
    done = subprocess.run(  # noqa: S603 - fixed argv, no shell
        [git, "-c", "safe.directory=*", "config", "--local", "--null", "--get-regexp", _KEYS],
        cwd=project,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=5.0,
        check=False,
    )
    if done.returncode == 1:  # no such key: no remote
        return None
    if done.returncode == 128:  # --local outside a repository (never the global config)
        raise ValueError("the project is not a git repository")
    if done.returncode != 0:
        raise ValueError(f"git config exited with {done.returncode}")
    for entry in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        key, _, url = entry.partition("\n")
        if key.startswith("remote.") and key.endswith(".url"):
            return key[len("remote.") : -len(".url")], url.strip()
    return None


def github_repo(url: str) -> str | None:
    """`OWNER/REPO` when `url` is a github.com remote (https, ssh or scp form), else None."""
    match = _GITHUB_URL.fullmatch(url) or _GITHUB_SCP.fullmatch(url)
    if match is None:
        return None
    repo = match["repo"]
    if repo in {".", ".."} or repo.endswith(".git"):
        return None
    return f"{match['owner']}/{repo}"


def read_config(path: Path) -> dict[str, Any] | None:
    """The top-level table of a TOML, JSON or JSONC config; None when the file is absent.
    ValueError when it is not one (unreadable, too large, not a table)."""
    try:
        with path.open("rb") as f:
            data = f.read(_MAX_CONFIG + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ValueError(f"{path.name} cannot be read ({e.strerror})") from None
    if len(data) > _MAX_CONFIG:
        raise ValueError(f"{path.name} is larger than 1 MiB")
    try:
        text = data.decode("utf-8-sig")
        parsed: Any = tomllib.loads(text) if path.suffix == ".toml" else jsonc_loads(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path.name} is not valid {_format(path)}") from None
    if not isinstance(parsed, dict):
        raise ValueError(f"{path.name} does not hold a table of settings")
    return parsed


def _format(path: Path) -> str:
    return {".toml": "TOML", ".jsonc": "JSONC"}.get(path.suffix, "JSON")


def jsonc_loads(text: str) -> Any:
    """JSON with `//` and `/* */` comments and trailing commas, as wrangler reads it."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise json.JSONDecodeError("unclosed comment", text, i)
            out.append(" ")
            i = j + 2
        else:
            out.append(ch)
            i += 1
    stripped = re.sub(r",(\s*[}\]])", r"\1", "".join(out))
    return json.loads(stripped)
