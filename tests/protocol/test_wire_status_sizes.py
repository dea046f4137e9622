"""secret_status at every size over a real `offprompt serve` pipe (DESIGN §12): refusals for
over-long names and paths, big targets answered in time and off the event loop, so `ping` and
`tools/list` never wait behind them; above 16 MiB, a refusal."""

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hung_fs import hung_mount
from wire import OFFPROMPT, Wire

REFUSED = "offprompt refused that request: "
ENV = {"OFFPROMPT_SANDBOX": "0", "BROWSER": "false"}
MiB = 1 << 20


@pytest.fixture
def server(spawn: Callable[..., Wire], project: Path) -> Wire:
    w = spawn(OFFPROMPT, env=ENV, cwd=str(project))
    w.initialize()
    return w


def call(w: Wire, arguments: dict[str, Any], timeout: float = 10.0) -> dict[str, Any]:
    params = {"name": "secret_status", "arguments": arguments}
    reply = w.request("tools/call", params, timeout=timeout)
    assert "result" in reply, reply  # never a JSON-RPC error such as -32603
    result: dict[str, Any] = reply["result"]
    return result


def refused(result: dict[str, Any]) -> str:
    assert result.get("isError") is True, result
    assert "structuredContent" not in result
    (block,) = result["content"]
    text: str = block["text"]
    assert text.startswith(REFUSED)
    return text


def big_env(path: Path, size: int) -> None:
    """A .env of `size` bytes: many keys, then one long value, as a real big file has."""
    lines = b"".join(b"KEY_%06d=value-%06d\n" % (i, i) for i in range(min(size // 40, 20000)))
    filler = size - len(lines) - len(b"BIG=\n")
    path.write_bytes(lines + b"BIG=" + b"x" * max(filler, 0) + b"\n")


@pytest.mark.parametrize(
    "arguments",
    [
        {"names": ["A" * 256]},
        {"names": ["A" * 300, "B"]},
        {"path": "a" * 256},
        {"path": "sub/" + "é" * 200},
        {"path": "a" * 5000},
        {"path": "/".join(["a" * 200] * 30)},
        {"names": ["A"], "path": ".env/" + "b" * 256},
    ],
    ids=["name-256", "name-300", "path-256", "path-400-bytes", "path-5000", "deep", "under"],
)
def test_over_long_names_and_paths_are_refusals(server: Wire, arguments: dict[str, Any]) -> None:
    """A name of 256 bytes or more, or a path component too long for the file system, is an
    isError refusal, never -32603."""
    refused(call(server, arguments))
    assert server.request("ping")["result"] == {}


@pytest.mark.parametrize(("size", "limit"), [(MiB, 2.0), (16 * MiB, 10.0)], ids=["1MiB", "16MiB"])
def test_big_target_is_answered_in_time(
    server: Wire, project: Path, size: int, limit: float
) -> None:
    """A 1 MiB .env within 2 s, a 16 MiB one within 10 s (linear in the file's size)."""
    big_env(project / ".env", size)
    start = time.monotonic()
    result = call(server, {"names": ["KEY_000001", "BIG", "NOPE"]}, timeout=limit + 5)
    took = time.monotonic() - start
    assert result.get("isError") is not True, result
    statuses = {k["name"]: k["status"] for k in result["structuredContent"]["keys"]}
    assert statuses == {"KEY_000001": "set", "BIG": "placeholder", "NOPE": "missing"}
    assert took < limit, f"{took:.1f}s for {size} bytes"


@pytest.mark.parametrize(
    "shape",
    [b"F='x\n" + b"A=1\n" * (4 * MiB - 2), b"J='q' junk\n" * (16 * MiB // 11)],
    ids=["quote-left-open", "junk-after-quotes"],
)
def test_a_16_mib_target_python_dotenv_is_slow_on_is_answered_within_10_s(
    server: Wire, project: Path, shape: bytes
) -> None:
    """Text python-dotenv's parser takes most of a minute on: an answer or a refusal within
    10 s, never a wait."""
    (project / ".env").write_bytes(shape)
    start = time.monotonic()
    result = call(server, {"names": ["A"]}, timeout=20)
    took = time.monotonic() - start
    if result.get("isError"):
        assert "could not be read within" in refused(result)
    assert took < 10.5, f"{took:.1f}s"


def test_target_over_16_mib_is_refused(server: Wire, project: Path) -> None:
    (project / ".env").write_bytes(b"A=" + b"x" * (16 * MiB) + b"\n")
    text = refused(call(server, {}))
    assert "16 MiB" in text


def test_ping_and_tools_list_do_not_wait_behind_a_status_read(server: Wire, project: Path) -> None:
    """A status call on a big file, then `ping` and `tools/list` right after: both answers
    come before the status answer."""
    big_env(project / ".env", 16 * MiB - 100)
    server.send(
        {
            "jsonrpc": "2.0",
            "id": "big",
            "method": "tools/call",
            "params": {"name": "secret_status", "arguments": {}},
        }
    )
    time.sleep(0.05)  # the status call is being read by now
    server.send({"jsonrpc": "2.0", "id": "p", "method": "ping"})
    server.send({"jsonrpc": "2.0", "id": "l", "method": "tools/list"})
    order = []
    while len(order) < 3:
        msg = server.next(timeout=30)
        assert msg is not None
        if msg.get("id") in ("big", "p", "l"):
            order.append(msg["id"])
    assert order.index("p") < order.index("big")
    assert order.index("l") < order.index("big")


def test_ping_is_answered_while_collect_reads_the_project_files(
    server: Wire, project: Path
) -> None:
    """collect_secret's creation reads the project's files off the event loop: with fly.toml on
    a file system that never answers, `ping` and `tools/list` are answered at once, and the
    call's own answer (fly.toml not read in time, a refusal) comes after them."""
    fly = project / "fly.toml"
    fly.touch()
    args = {
        "secrets": [{"name": "API_KEY"}],
        "reason": "The app needs it",
        "also": [{"kind": "fly"}],
    }
    with hung_mount(fly):
        server.send(
            {
                "jsonrpc": "2.0",
                "id": "c",
                "method": "tools/call",
                "params": {"name": "collect_secret", "arguments": args},
            }
        )
        time.sleep(0.3)  # the call is waiting on fly.toml by now
        start = time.monotonic()
        assert server.request("ping", rid="p", timeout=5)["result"] == {}
        assert "result" in server.request("tools/list", rid="l", timeout=5)
        took = time.monotonic() - start
        assert [m.get("id") for m in server.backlog] == [], "collect answered before ping"
        answer = server.response("c", timeout=10)
    assert took < 0.5, f"ping and tools/list took {took:.2f}s"
    text = refused(answer["result"])
    assert "fly.toml was not read in time" in text, text


def test_the_server_exits_on_end_of_input_while_file_work_is_stuck(
    server: Wire, project: Path
) -> None:
    """A request's file work that never ends (its sink path lies on a file system that never
    answers) does not keep the server from exiting promptly on end of input (DESIGN §3)."""
    stuck = project / "stuck"
    stuck.mkdir()
    args = {
        "secrets": [{"name": "API_KEY"}],
        "reason": "The app needs it",
        "sink": {"kind": "dotenv", "path": "stuck/.env"},
    }
    with hung_mount(stuck):
        server.send(
            {
                "jsonrpc": "2.0",
                "id": "c",
                "method": "tools/call",
                "params": {"name": "collect_secret", "arguments": args},
            }
        )
        assert server.request("ping", rid="p", timeout=5)["result"] == {}
        with pytest.raises(TimeoutError):  # still stuck on the sink path
            server.response("c", timeout=1)
        start = time.monotonic()
        assert server.close(timeout=5) == 0
        assert time.monotonic() - start < 2
