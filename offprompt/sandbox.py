"""Whether the person's browser is on this machine (local) or another one (remote, DESIGN §5).

Read once from the environment at start; the tool's `sandbox` argument counts only where the
environment cannot tell (Linux with a display, or a platform offprompt has no rule for).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Detection", "detect"]

_log = logging.getLogger("offprompt")

BrowserPlace = Literal["remote", "local", "argument"]

_YES = frozenset({"1", "true", "yes", "on"})
_NO = frozenset({"0", "false", "no", "off"})


@dataclass(frozen=True)
class Detection:
    """What the environment says, and the variable that said it (for logs and results)."""

    verdict: BrowserPlace
    reason: str

    def remote(self, argument: bool | None) -> bool:
        """Whether a request is remote, given the tool's optional `sandbox` argument."""
        if self.verdict == "argument":
            return bool(argument)
        return self.verdict == "remote"


def _set(env: Mapping[str, str], name: str) -> bool:
    return bool(env.get(name, "").strip())


def _is_true(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "").strip().lower() == "true"


def detect(env: Mapping[str, str], platform: str | None = None) -> Detection:
    """The verdict for `env` on `platform` (default `sys.platform`), in DESIGN §5's order."""
    platform = sys.platform if platform is None else platform
    forced = env.get("OFFPROMPT_SANDBOX", "").strip().lower()
    if forced in _YES:
        return Detection("remote", "OFFPROMPT_SANDBOX=1")
    if forced in _NO:
        return Detection("local", "OFFPROMPT_SANDBOX=0")
    if forced:
        _log.warning("OFFPROMPT_SANDBOX is neither 1 nor 0; deciding from the environment")
    if _is_true(env, "CLAUDE_CODE_REMOTE"):
        return Detection("remote", "CLAUDE_CODE_REMOTE=true")
    if _set(env, "SSH_CONNECTION"):
        return Detection("remote", "SSH_CONNECTION is set")
    if _is_true(env, "CODESPACES"):
        return Detection("remote", "CODESPACES=true")
    display = _set(env, "DISPLAY") or _set(env, "WAYLAND_DISPLAY")
    # An explicit BROWSER is the person's way to open pages here (a text browser, a helper that
    # hands the link to the desktop): it counts as a display, as README's Troubleshooting says.
    if platform.startswith("linux") and not display and not _set(env, "BROWSER"):
        return Detection("remote", "Linux without DISPLAY, WAYLAND_DISPLAY or BROWSER")
    if platform in ("darwin", "win32") and not display:
        return Detection("local", f"{platform} without DISPLAY or WAYLAND_DISPLAY")
    return Detection("argument", "the environment cannot tell; the sandbox argument decides")
