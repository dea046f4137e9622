"""What `offprompt guard`'s process does before and beside deciding an everyday call (DESIGN §14:
fast on every tool call; issue 45): the work counted here, not timed, so the check is not noisy.
Each item is work the process once did on every call let through and needs on none."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Run as the `offprompt` console script runs it; prints, after the call, which of MODULES were
# loaded and which of PATTERNS compiled (a module's pattern, or the function that compiles it
# on first use, named alike: `_TOKEN` or `_token()`).
SCRIPT = """\
import json, re, sys
from offprompt.__main__ import main
sys.argv = ["offprompt", "guard"]
try:
    main()
except SystemExit as e:
    code = e.code
compiled = []
for name, patterns in PATTERNS.items():
    module = sys.modules[name]
    for p in patterns:
        eager = getattr(module, p.upper(), None)
        if isinstance(eager, re.Pattern) or getattr(module, p).cache_info().currsize:
            compiled.append(p)
sys.__stdout__.write(json.dumps({
    "code": code,
    "modules": sorted(m for m in MODULES if m in sys.modules),
    "patterns": compiled,
}) + "\\n")
"""

# `signal` turns every signal number into an enum member as it loads (a millisecond a call);
# the alarm needs three names, which `_signal` holds. `offprompt.errors` builds the whole
# error tree; the hook raises none of it. The mask's reading of a project's dotenv files
# (`offprompt.guard.masked`) serves only a command in a masked project.
MODULES = ("signal", "offprompt.errors", "offprompt.guard.masked")
# The crude check's patterns serve only an event the guard cannot read.
PATTERNS = {
    "offprompt.guard.hook": ["_crude_dotenv", "_token"],
}


def run_guard(event: dict[str, object], cwd: Path, home: Path) -> dict[str, object]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("OFFPROMPT_STATE_DIR", "XDG_STATE_HOME")
    }
    env["HOME"] = str(home)
    script = f"MODULES = {MODULES!r}\nPATTERNS = {PATTERNS!r}\n" + SCRIPT
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(event).encode(),
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=30,
        check=True,
    )
    answer: dict[str, object] = json.loads(done.stdout.decode().splitlines()[-1])
    return answer


@pytest.mark.parametrize(
    "tool_input", [{"command": "cat README.md"}, {"command": "git status && npm test"}]
)
def test_a_call_let_through_loads_neither_signal_nor_the_error_tree_nor_the_mask(
    tmp_path: Path, tool_input: dict[str, object]
) -> None:
    """A shell call let through, with a journal in the user state dir: the guard arms its alarm
    without the `signal` module and never loads offprompt's error classes, nor the mask's reading
    of a project's dotenv files (it is in no masked project)."""
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

    answer = run_guard(event, project, home)

    assert 0 == answer["code"]
    assert [] == answer["modules"]


def test_a_call_let_through_compiles_only_the_patterns_it_uses(tmp_path: Path) -> None:
    """A call let through compiles none of the crude check's patterns (for an event the guard
    cannot read)."""
    (tmp_path / "README.md").write_text("# app\n")
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "cat README.md"},
        "cwd": str(tmp_path),
    }

    answer = run_guard(event, tmp_path, tmp_path / "home")

    assert 0 == answer["code"]
    assert [] == answer["patterns"]
