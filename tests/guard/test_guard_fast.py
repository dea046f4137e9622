"""What the hook, started as init writes it for an installed offprompt, loads for a call it lets
through (issue 45: ≤ 1.5x `python -c pass`): none of the standard library's modules that cost
milliseconds to load. Counted (`python -X importtime`), not timed, so the check is not noisy;
bench/guard.py times it."""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import ROOT
from test_hook_command_start import installed

from offprompt import rx
from offprompt.agents import guard_start
from offprompt.agents.interface import ServerCommand

# Each costs a call let through a millisecond or more (re with enum; json's decoder loads re).
SLOW = ("re", "json", "enum", "functools", "collections", "fnmatch", "typing", "dataclasses")


def bench() -> ModuleType:
    """bench/guard.py, whose events are the calls timed against the floor."""
    spec = importlib.util.spec_from_file_location("bench_guard", ROOT / "bench" / "guard.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def setting(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], Path, dict[str, str]]:
    """The hook's argv as init writes it for an install, the bench's project, and an
    environment whose user state dir holds the bench's journal of 200 writes."""
    where = tmp_path_factory.mktemp("fast")
    python, script = installed(where / "venv")
    argv = list(guard_start.argv(ServerCommand(str(script), ("serve",)), str(python)))
    assert argv[1:3] == ["-I", "-S"]
    project = where / "app"
    (project / "src").mkdir(parents=True)
    (project / ".env").write_text("KEY=value\n")
    (project / "README.md").write_text("# app\n")
    (project / "src" / "main.py").write_text("print(1)\n")
    env = {
        k: v for k, v in os.environ.items() if k not in ("OFFPROMPT_STATE_DIR", "XDG_STATE_HOME")
    }
    env["HOME"] = str(where / "home")
    bench().journal_at(str(where), env)
    return argv, project, env


def imported(
    argv: list[str], event: object, cwd: Path, env: dict[str, str]
) -> tuple[int, set[str]]:
    """The hook's exit code for `event` and every module its process imported."""
    done = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        input=json.dumps(event).encode(),
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )
    names = {
        line.split("|")[-1].strip()
        for line in done.stderr.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert "offprompt.guard.hook" in names, done.stderr.decode()[-2000:]
    return done.returncode, names


def all_events(project: Path) -> list[dict[str, object]]:
    b = bench()
    return [e for _tool, e in b.events(project)] + b.other_hosts(project)


def what(event: dict[str, object]) -> str:
    return json.dumps(event.get("tool_input") or event.get("tool_info") or event.get("command"))


@pytest.mark.skipif(not rx._USABLE, reason="rx's table is for another Python: re compiles")
def test_a_call_let_through_loads_no_slow_module(
    setting: tuple[list[str], Path, dict[str, str]],
) -> None:
    """Each of the bench's calls let through (every host's), run as init writes the hook for an
    installed offprompt: none of re, json, enum, functools, collections, fnmatch, typing,
    dataclasses is imported; the bench's reads of .env are still blocked."""
    argv, project, env = setting
    let_through, blocked = [], []
    for event in all_events(project):
        code, names = imported(argv, event, project, env)
        if code == 0:
            let_through.append(what(event))
            assert [m for m in SLOW if m in names] == [], what(event)
        else:
            assert code == 2
            blocked.append(what(event))
    assert len(let_through) == 15
    assert all(".env" in b and ".env.example" not in b for b in blocked)
    assert len(blocked) == 5


def test_no_guard_module_loads_a_slow_module() -> None:
    """Every module of the guard, loaded in an interpreter without site: none of the slow
    modules comes with them (a pattern goes through rx, JSON through jsonread)."""
    modules = [
        *rx.MODULES,
        "offprompt.rx",
        "offprompt.jsonread",
        "offprompt.hosts",
        "offprompt.__main__",
    ]
    code = (
        f"import sys; sys.path.insert(0, {str(ROOT)!r})\n"
        f"for m in {modules!r}: __import__(m)\n"
        f"print(sorted(m for m in {SLOW!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, timeout=60, check=True
    )
    assert done.stdout.decode().strip() == "[]"


def test_cursors_allow_is_what_json_writes() -> None:
    """The answer Cursor reads for a call let through, written out, is json's."""
    from offprompt.hosts import cursor

    assert cursor.ALLOW == json.dumps({"permission": "allow"})


@pytest.mark.parametrize(
    "why",
    [
        "offprompt guard: blocked: this would expose .env, which holds secrets.",
        'a "quoted" name\\with a backslash\tand\ncontrol \x00\x1f characters',
        "ünïcödé 🙂 \u2028 names",
        "",
    ],
)
def test_a_deny_is_what_json_writes(why: str) -> None:
    """Cursor's and Copilot's deny, written without json, is what json.dumps writes."""
    from offprompt.guard.hook import deny_json
    from offprompt.hosts import cursor, vscode

    assert deny_json(cursor.HOST.get("dialect"), why) == json.dumps(
        {"permission": "deny", "user_message": why, "agent_message": why}
    )
    assert deny_json(vscode.HOST.get("dialect"), why) == json.dumps(
        {"permissionDecision": "deny", "permissionDecisionReason": why}
    )
    assert deny_json(None, why) is None
