"""Remote or local (DESIGN §5): the environment first, the tool's `sandbox` argument last."""

from __future__ import annotations

import pytest

from offprompt.sandbox import detect
from offprompt.tools.service import Service

SHOWN = {"DISPLAY": ":0"}

# (environment, platform, verdict without an argument, with sandbox=true, with sandbox=false)
TABLE = [
    ({"OFFPROMPT_SANDBOX": "1", **SHOWN}, "linux", True, True, True),
    ({"OFFPROMPT_SANDBOX": "1"}, "darwin", True, True, True),
    ({"OFFPROMPT_SANDBOX": "0"}, "linux", False, False, False),
    (
        {"OFFPROMPT_SANDBOX": "0", "SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"},
        "linux",
        False,
        False,
        False,
    ),
    ({"OFFPROMPT_SANDBOX": "0", "CODESPACES": "true"}, "linux", False, False, False),
    ({"CLAUDE_CODE_REMOTE": "true", **SHOWN}, "linux", True, True, True),
    ({"CLAUDE_CODE_REMOTE": "true"}, "darwin", True, True, True),
    ({"CLAUDE_CODE_REMOTE": "false", **SHOWN}, "linux", False, True, False),
    ({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22", **SHOWN}, "linux", True, True, True),
    ({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "darwin", True, True, True),
    ({"SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "win32", True, True, True),
    ({"SSH_CONNECTION": ""}, "darwin", False, False, False),
    ({"CODESPACES": "true", **SHOWN}, "linux", True, True, True),
    ({"CODESPACES": "false", **SHOWN}, "linux", False, True, False),
    ({}, "linux", True, True, True),
    ({"DISPLAY": ""}, "linux", True, True, True),
    ({"DISPLAY": ":0"}, "linux", False, True, False),
    ({"WAYLAND_DISPLAY": "wayland-0"}, "linux", False, True, False),
    ({}, "darwin", False, False, False),
    ({}, "win32", False, False, False),
    ({"DISPLAY": ":0"}, "darwin", False, True, False),
    ({}, "freebsd14", False, True, False),
    # An explicit BROWSER is a way to open the page here, as a display is (README: "set BROWSER").
    ({"BROWSER": "w3m"}, "linux", False, True, False),
    ({"BROWSER": " "}, "linux", True, True, True),
    ({"BROWSER": "w3m", "SSH_CONNECTION": "1.2.3.4 5 6.7.8.9 22"}, "linux", True, True, True),
]


@pytest.mark.parametrize(("env", "platform", "plain", "asked", "declined"), TABLE)
def test_detection_table(
    env: dict[str, str], platform: str, plain: bool, asked: bool, declined: bool
) -> None:
    """Each environment gives DESIGN §5's verdict; the argument counts only where it can't tell."""
    found = detect(env, platform)
    assert (found.remote(None), found.remote(True), found.remote(False)) == (
        plain,
        asked,
        declined,
    )


@pytest.mark.parametrize("value", ["true", "yes", "on", " 1 "])
def test_sandbox_variable_accepts_spelled_out_yes(value: str) -> None:
    """OFFPROMPT_SANDBOX=true (or yes/on) means the same as 1."""
    assert detect({"OFFPROMPT_SANDBOX": value, **SHOWN}, "linux").verdict == "remote"


def test_unknown_sandbox_value_falls_through_to_the_environment() -> None:
    """An OFFPROMPT_SANDBOX that is neither yes nor no is ignored, with a warning."""
    assert detect({"OFFPROMPT_SANDBOX": "maybe", **SHOWN}, "linux").verdict == "argument"


def test_detection_names_what_decided() -> None:
    """The verdict carries the variable that decided it, for the log."""
    assert detect({"SSH_CONNECTION": "x"}, "linux").reason == "SSH_CONNECTION is set"


def test_service_reads_the_environment_once_at_start() -> None:
    """Settings snapshot the environment: changing the mapping later changes nothing."""
    env = {"DISPLAY": ":0"}
    service = Service(env=env, platform="linux")
    env["OFFPROMPT_SANDBOX"] = "1"
    assert service.settings.sandbox.verdict == "argument"
