"""`sink.path` in every result is the destination relative to the project, `/` separators
(DESIGN §3.2), whatever the agent wrote: awaiting, cancelled, expired and written alike, from
collect_secret, await_secret and cancel_secret."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from dotenv import dotenv_values
from wire import OFFPROMPT, Wire

ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false", "OFFPROMPT_AWAIT_SECONDS": "0"}


def raw_paths(project: Path) -> dict[str, tuple[str, str]]:
    """What the agent may write for a destination, and what results must say."""
    return {
        "dot-dot": ("sub/../.env", ".env"),
        "dot segments": ("./cfg/./.env", "cfg/.env"),
        "double slash": ("cfg//.env", "cfg/.env"),
        "absolute": (str(project / "cfg" / ".env"), "cfg/.env"),
        "symlink": ("linked.env", "cfg/real.env"),
    }


CASES = list(raw_paths(Path("/p")))


@pytest.fixture
def server(spawn: Callable[..., Wire], project: Path) -> Callable[..., Wire]:
    """Start `offprompt serve` in the project (holding a symlink linked.env → cfg/real.env)."""
    (project / "cfg").mkdir()
    (project / "linked.env").symlink_to("cfg/real.env")

    def start(**env: str) -> Wire:
        w = spawn(OFFPROMPT, env={**ENV, **env}, cwd=str(project))
        w.initialize()
        return w

    return start


def call(w: Wire, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = w.request("tools/call", {"name": name, "arguments": arguments})["result"]
    assert "isError" not in result, result
    out: dict[str, Any] = result["structuredContent"]
    return out


def ask(path: str, **entry: Any) -> dict[str, Any]:
    return {"secrets": [{"name": "API_KEY", **entry}], "reason": "tests", "sink": {"path": path}}


@pytest.mark.parametrize("case", CASES)
def test_awaiting_and_cancelled_results_show_the_resolved_path(
    server: Callable[..., Wire], project: Path, case: str
) -> None:
    """collect, await and cancel each report the path relative to the project."""
    raw, shown = raw_paths(project)[case]
    w = server()
    first = call(w, "collect_secret", ask(raw))
    assert ("awaiting", shown) == (first["status"], first["sink"]["path"])
    rid = {"request_id": first["request_id"]}
    waited = call(w, "await_secret", rid)
    assert ("awaiting", shown) == (waited["status"], waited["sink"]["path"])
    cancelled = call(w, "cancel_secret", rid)
    assert ("cancelled", shown) == (cancelled["status"], cancelled["sink"]["path"])
    again = call(w, "await_secret", rid)
    assert ("cancelled", shown) == (again["status"], again["sink"]["path"])


@pytest.mark.parametrize("case", ["dot-dot", "absolute"])
def test_expired_results_show_the_resolved_path(
    server: Callable[..., Wire], project: Path, case: str
) -> None:
    """After the TTL, await and cancel report `expired` with the path relative to the project."""
    raw, shown = raw_paths(project)[case]
    w = server(OFFPROMPT_TTL="1")
    rid = {"request_id": call(w, "collect_secret", ask(raw))["request_id"]}
    time.sleep(1.3)
    for name in ("await_secret", "cancel_secret"):
        out = call(w, name, rid)
        assert ("expired", shown) == (out["status"], out["sink"]["path"])


@pytest.mark.parametrize("case", CASES)
def test_written_results_show_the_resolved_path(
    server: Callable[..., Wire], project: Path, case: str
) -> None:
    """A generated key is written at once; every later result says the same path, and the value
    is in the file and in no answer or log."""
    raw, shown = raw_paths(project)[case]
    w = server()
    first = call(w, "collect_secret", ask(raw, generate={}))
    assert ("written", shown) == (first["status"], first["sink"]["path"])
    rid = {"request_id": first["request_id"]}
    for name in ("await_secret", "cancel_secret"):
        out = call(w, name, rid)
        assert ("written", shown) == (out["status"], out["sink"]["path"])
    value = dotenv_values(project / shown)["API_KEY"]
    assert value
    w.close()
    assert value not in b"".join(w.lines).decode()
    assert value not in w.wait_stderr()
