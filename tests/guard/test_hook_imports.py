"""What `offprompt guard`'s process loads for an everyday call (DESIGN §14: fast on every tool
call): exactly the hook's own modules, and nothing from outside the standard library."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_guard import claude_event, written_project

# The hook, its rules and its bash reader: nothing of the agents, the sinks, the journal's
# reader, the protocol, click, or the error tree (the hook raises none of it).
HOOK_MODULES = [
    "offprompt",
    "offprompt.__main__",
    "offprompt.bashlex",
    "offprompt.guard",
    "offprompt.guard.bash",
    "offprompt.guard.check",
    "offprompt.guard.commands",
    "offprompt.guard.decide",
    "offprompt.guard.disk",
    "offprompt.guard.expand",
    "offprompt.guard.hook",
    "offprompt.guard.implied",
    "offprompt.guard.programs",
    "offprompt.guard.protected",
    "offprompt.guard.words",
    "offprompt.hosts",
    "offprompt.hosts.claude_code",
    "offprompt.hosts.codex",
    "offprompt.hosts.cursor",
    "offprompt.hosts.gemini",
    "offprompt.hosts.vscode",
    "offprompt.hosts.windsurf",
    "offprompt.hosts.zed",
    "offprompt.jsonread",
    "offprompt.rx",
    "offprompt.rx._table",
]

# Run as the `offprompt` console script runs it; prints what was loaded after start-up.
SCRIPT = """\
import sys
before = set(sys.modules)
import json
from offprompt.__main__ import main
sys.argv = ["offprompt", "guard"]
try:
    main()
except SystemExit as e:
    code = e.code
new = sorted(set(sys.modules) - before)
sys.__stdout__.write(json.dumps({"code": code, "new": new}) + "\\n")
"""


def loaded(event: dict[str, object], cwd: Path, home: Path) -> tuple[int, list[str]]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OFFPROMPT_STATE_DIR", "XDG_STATE_HOME")
    }
    env["HOME"] = str(home)
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        input=json.dumps(event).encode(),
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=30,
        check=True,
    )
    answer = json.loads(done.stdout.decode().splitlines()[-1])
    return answer["code"], answer["new"]


# A search's reading (grep's words, the folders it would open), loaded for a search alone.
SEARCH_MODULES = ["offprompt.guard.grep", "offprompt.guard.search"]


@pytest.mark.parametrize(
    ("tool_input", "searched"),
    [
        ({"command": "cat README.md"}, []),
        ({"command": "git status && npm test"}, []),
        ({"command": "grep -n KEY src/main.py | head -5"}, SEARCH_MODULES),
    ],
)
def test_an_everyday_call_loads_only_the_hook(
    tmp_path: Path, tool_input: dict[str, object], searched: list[str]
) -> None:
    """A shell call let through, with a journal in the user state dir: the offprompt modules
    loaded are exactly the hook's (and a search's for a search), and every other new module is
    the standard library's."""
    project = tmp_path / "app"
    project.mkdir()
    (project / "README.md").write_text("# app\n")
    home = tmp_path / "home"
    journal = home / ".local" / "state" / "offprompt" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    entry = {"project": str(project), "file": "config/service.json", "names": ["KEY"]}
    journal.write_text(json.dumps(entry) + "\n")
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": tool_input,
        "cwd": str(project),
    }

    code, new = loaded(event, project, home)

    assert 0 == code
    assert sorted(HOOK_MODULES + searched) == [m for m in new if m.split(".")[0] == "offprompt"]
    outside = {m.split(".")[0] for m in new} - {"offprompt"} - set(sys.stdlib_module_names)
    assert set() == outside


def test_a_read_tool_call_loads_no_more(tmp_path: Path) -> None:
    """Claude Code's Read of an ordinary file loads the same modules as a shell call."""
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Read",
        "tool_input": {"file_path": str(tmp_path / "README.md")},
        "cwd": str(tmp_path),
    }

    code, new = loaded(event, tmp_path, tmp_path / "home")

    assert 0 == code
    assert HOOK_MODULES == [m for m in new if m.split(".")[0] == "offprompt"]


# Each costs the hook milliseconds on every tool call; none is needed to decide one.
SLOW_IMPORTS = ("click", "typing", "dataclasses", "inspect", "datetime", "pathlib", "platformdirs")


def test_the_hook_loads_no_slow_module(tmp_path: Path, canary: str) -> None:
    """`python -m offprompt guard` deciding a call, with the journal in the user state dir (no
    OFFPROMPT_STATE_DIR): none of the slow modules is imported."""
    project = written_project(tmp_path, canary)
    env = {
        k: v for k, v in os.environ.items() if k not in ("OFFPROMPT_STATE_DIR", "XDG_STATE_HOME")
    }
    env["HOME"] = str(tmp_path / "home")
    script = (
        "import runpy, sys; sys.argv = ['offprompt', 'guard']\n"
        "try:\n    runpy.run_module('offprompt', run_name='__main__')\n"
        "except SystemExit as e:\n    code = e.code\n"
        f"print(code, sorted(m for m in {SLOW_IMPORTS!r} if m in sys.modules))\n"
    )
    for command in ("cat README.md", "cat .env"):
        event = json.dumps(claude_event(project)("Bash", {"command": command}))
        done = subprocess.run(
            [sys.executable, "-c", script],
            input=event.encode(),
            capture_output=True,
            env=env,
            cwd=project,
            timeout=30,
            check=True,
        )
        code = 2 if command == "cat .env" else 0
        assert done.stdout.decode().split("\n")[-2] == f"{code} []"
