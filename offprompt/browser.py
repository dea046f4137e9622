"""Opening the page in the person's browser: `$BROWSER`, else the platform's opener.

Spawned without a shell, detached, stdio closed. Success means the opener exited 0 or is still
running after the grace period (a browser that stays in the foreground).
"""

from __future__ import annotations

import asyncio
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence

GRACE_SECONDS = 2.0


def commands(url: str, env: Mapping[str, str] | None = None) -> list[list[str]]:
    """The commands to try in order for `url` (`$BROWSER` entries first, `%s` → url)."""
    env = os.environ if env is None else env
    found: list[list[str]] = []
    for entry in env.get("BROWSER", "").split(os.pathsep):
        if not entry.strip():
            continue
        try:
            argv = shlex.split(entry)
        except ValueError:
            continue
        if not argv:
            continue
        if any("%s" in a for a in argv):
            argv = [a.replace("%s", url) for a in argv]
        else:
            argv.append(url)
        found.append(argv)
    if found:
        return found
    if sys.platform == "darwin":
        return [["open", url]]
    if sys.platform == "win32":
        return [["rundll32", "url.dll,FileProtocolHandler", url]]
    return [["xdg-open", url]]


# Openers still running after the grace period (a browser in the foreground). Kept so they are
# never garbage-collected as "still running", and polled so finished ones are reaped.
_running: list[subprocess.Popen[bytes]] = []


def _try(argv: Sequence[str], grace: float) -> bool:
    exe = shutil.which(argv[0])
    if exe is None:
        return False
    # Popen, not asyncio's subprocess: asyncio kills children still running when its loop
    # closes, and the person's browser must outlive this server.
    try:
        proc = subprocess.Popen(  # noqa: S603 - argv from $BROWSER or a fixed opener, no shell
            [exe, *argv[1:]],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # detached: a Ctrl-C to the host does not reach the browser
            close_fds=True,
        )
    except OSError:
        return False
    _running[:] = [p for p in _running if p.poll() is None]
    try:
        return proc.wait(grace) == 0
    except subprocess.TimeoutExpired:
        _running.append(proc)
        return True


async def open_url(
    url: str, *, env: Mapping[str, str] | None = None, grace: float = GRACE_SECONDS
) -> bool:
    """Try each opener in turn (`$BROWSER` from `env`); True as soon as one succeeds."""
    for argv in commands(url, env):
        if await asyncio.to_thread(_try, argv, grace):
            return True
    return False
