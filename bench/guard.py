"""How long `offprompt guard` takes per tool call: the whole process, as a host runs it.

Feeds realistic Claude Code and Codex PreToolUse events (everyday commands and reads, and a few
that are blocked), and Cursor's and Windsurf's shell events, to `offprompt guard` started as the
`offprompt` console script starts it (what `init` tells hosts to run), one process per event,
with the package's bytecode compiled as an install leaves it, run in a project (as hosts run
hooks) with a `.env` and a journal of 200 writes in the user state dir (no OFFPROMPT_STATE_DIR).
Then Gemini CLI's `grep_search` over the whole project, the costliest call: the guard looks
through the project's folders for dotenv files and asks git which it ignores; the project is a
git repository of FOLDERS folders with `.env` files at the top and in one service, both ignored.
Prints the median and p95 wall time per call, for passes, blocks and searches apart, beside the
floor (`python -c pass`, run between the calls), and the bounds (DESIGN §14: 50 ms per call).
Then the same calls let through as a host runs the hook: `bash -c` with the command init writes
(the fail-closed `sh` wrapper of DESIGN §9) beside `bash -c` with the bare command.
Then the worst inputs (DESIGN §14: bounded, <= 1 s, for any input up to the host's limit): one
Bash event per family of the shapes that once cost super-linear time (many `cd`s and words,
long pipelines, deep nesting, here-docs, huge words...), each about WORST_BYTES of JSON (the
guard reads 4 MiB), its time and verdict beside the floor.
Usage: python bench/guard.py [--runs N]   (default 5 rounds over every event)
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from offprompt.agents import hook_wrapper

ROOT = Path(__file__).resolve().parents[1]

# Variables that move the journal; the bench leaves them out, as most people do.
_STATE_VARS = ("OFFPROMPT_STATE_DIR", "XDG_STATE_HOME")

COMMANDS = [
    "cat README.md",
    "grep -rn API src/",
    "ls -la",
    "git status",
    "npm test",
    "cat .env.example",
    "python3 -m pytest -q tests/",
    "git diff -- src/main.py | head -50",
    'python3 -c \'import json; print(json.load(open("package.json"))["name"])\'',
    "cat .env",
    "source .env && echo $KEY",
]


FOLDERS = 1000
# The size of each worst input's event, in JSON bytes: under hook.MAX_EVENT_BYTES (4 MiB).
WORST_BYTES = 4_000_000


def worst_inputs() -> dict[str, str]:
    """A command of each family that once cost the guard super-linear time, or a step a byte."""

    def size(text: str) -> int:
        return len(json.dumps(text)) - 2

    def fill(unit: str, head: str = "", tail: str = "") -> str:
        room = WORST_BYTES - size(head) - size(tail)
        return head + unit * (room // size(unit)) + tail

    return {
        "1,000 cds, 1,000 words": " ; ".join(f"cd d{i}" for i in range(1000))
        + " ; cat "
        + " ".join(f"w{i}" for i in range(1000)),
        "cds and words": fill("cd d1; cd d2; cat a b c; "),
        "distinct words": "cat " + " ".join(f"w{i}" for i in range(400_000)),
        "pipeline": fill("cat f | ", "", "cat f"),
        "semicolons": fill("cat f ; "),
        "redirections": fill("> f ", "cat "),
        "globs": fill("f* ", "cat "),
        "huge word": fill("a", "cat "),
        "glob word": fill("a*", "cat "),
        "quotes": fill("'a'\"b\"", "cat "),
        "double quoted": fill("a", 'cat "', '"'),
        "backslashes": fill("\\a", "cat "),
        "here-doc": fill("line\n", "cat <<EOF\n", "EOF\n"),
        "substitutions": fill("$(echo a) ", "cat "),
        "backticks": fill("`a` ", "cat "),
        "big substitution": fill("a", "cat $(echo ", ")"),
        "nested $( )": "cat " + "$(echo " * 40 + "a" + ")" * 40,
        "eval chain": fill("eval ", "", "cat a"),
        "eval chain under the cap": "eval " * 16 + "cat " + "a " * 45_000,
        "bash -c chain": "bash -c " * 40 + "a",
        "slashes": fill("a/", "cat "),
        "open quote (crude check)": fill("a ", "cat 'x "),
        "recursive greps": fill("grep -r KEY . ; "),
        "5,000 recursive greps": "grep -r KEY . ; " * 5000,
        "a search, 30,000 filters": "grep -r "
        + " ".join(f"--include=a{i}" for i in range(30_000))
        + " KEY .",
        "40,000 distinct words": "cat " + " ".join(f"w{i}" for i in range(40_000)),
        "30,000 globs": "cat " + " ".join(f"x{i}*" for i in range(30_000)),
        "10,000 folder globs": "cat " + " ".join(f"*/x{i}*" for i in range(10_000)),
        "deep globs": "cat " + "*/" * 20 + "x*",
        "names of many parts": "cat " + " ".join(f"{i}" + "/a" * 1500 for i in range(1000)),
        "brace expansion": "cat " + "{a,b}" * 40,
        "many brace words": fill("x{a,b}{c,d} ", "cat "),
        "assigned values": "".join(f"f=v{i}; " for i in range(250)) + "cat " + "$f " * 300,
        "variable uses": fill("$f ", "f=.e; cat "),
        "here-doc substitutions": fill("$(echo a)\n", "cat <<EOF > notes.md\n", "EOF\n"),
        "subscripts": fill("'a[$(x)]' ", "test -v "),
        "cd globs": fill("cd d*; "),
        "here-docs in $( )": fill("cat <<a\nx'\na\n", "cat $(", ")"),
        "case in $( )": fill("case x in x) a;; esac; ", "echo $(", ")"),
        "arithmetic": fill("(( 1 << 2 )); "),
        "defaults": fill("${X:-a} ", "cat "),
    }


def other_hosts(project: Path) -> list[dict[str, object]]:
    """Cursor's and Windsurf's shell events, mapped to the same rules."""
    common = {"hook_event_name": "beforeShellExecution", "cursor_version": "2.4.0"}
    out: list[dict[str, object]] = []
    for command in ("cat README.md", "npm test", "cat .env"):
        out.append({**common, "workspace_roots": [str(project)], "command": command,
                    "cwd": str(project)})  # fmt: skip
        info = {"command_line": command, "cwd": str(project)}
        out.append({"agent_action_name": "pre_run_command", "tool_info": info})
    return out


def searches(project: Path) -> list[dict[str, object]]:
    """Gemini CLI's search over the whole project and over one folder."""
    base = {"hook_event_name": "BeforeTool", "cwd": str(project), "tool_name": "grep_search"}
    return [
        {**base, "tool_input": {"pattern": "API_KEY"}},
        {**base, "tool_input": {"pattern": "API_KEY", "dir_path": "src"}},
    ]


def big_project(project: Path) -> None:
    """FOLDERS folders of sources under a git repository that ignores its `.env` files."""
    for i in range(FOLDERS):
        folder = project / "src" / f"pkg{i // 50}" / f"mod{i}"
        folder.mkdir(parents=True)
        (folder / "a.py").write_text("x = 1\n")
    (project / "services" / "api").mkdir(parents=True)
    (project / "services" / "api" / ".env").write_text("KEY=value\n")
    (project / ".gitignore").write_text(".env\n")
    subprocess.run(["git", "init", "-q", str(project)], check=True)


def events(project: Path) -> list[tuple[str, dict[str, object]]]:
    out: list[tuple[str, dict[str, object]]] = []
    base = {"session_id": "s", "transcript_path": str(project / "t.jsonl"), "cwd": str(project)}
    for command in COMMANDS:
        out.append(("Bash", {"command": command, "description": "bench"}))
    out.append(("Read", {"file_path": str(project / "src" / "main.py")}))
    out.append(("Read", {"file_path": str(project / ".env")}))
    out.append(
        ("Edit", {"file_path": str(project / "README.md"), "old_string": "a", "new_string": "b"})
    )
    return [
        (tool, {**base, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": ti})
        for tool, ti in out
    ]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "app"
        (project / "src").mkdir(parents=True)
        (project / ".env").write_text("KEY=value\n")
        (project / "README.md").write_text("# app\n")
        (project / "src" / "main.py").write_text("print(1)\n")
        # The journal where a person's is: no OFFPROMPT_STATE_DIR, the platform's user state
        # dir under a HOME of our own (that lookup is part of what a call costs).
        env = {k: v for k, v in os.environ.items() if k not in _STATE_VARS}
        env.update(HOME=str(Path(tmp) / "home"), PYTHONPATH=str(ROOT))
        where = [
            sys.executable,
            "-c",
            "from offprompt.statedir import journal_path as d; print(d())",
        ]
        journal = Path(
            subprocess.run(
                where, env=env, capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        journal.parent.mkdir(parents=True)
        with journal.open("w") as f:
            for i in range(200):
                entry = {
                    "at": "2026-01-01T00:00:00Z",
                    "project": str(Path(tmp) / f"p{i}"),
                    "file": ".env" if i % 2 else f"config/s{i}.json",
                    "names": ["KEY"],
                    "kept": [],
                    "fingerprint": None,
                    "client": "bench",
                    "request_id": f"r{i}",
                }
                f.write(json.dumps(entry) + "\n")
        # What the console script pip writes does (no runpy, unlike `python -m offprompt`).
        script = "import re, sys; from offprompt.__main__ import main; sys.exit(main())"
        argv = [sys.executable, "-c", script, "guard"]
        # An install has .pyc files (pip compiles them); PYTHONDONTWRITEBYTECODE would otherwise
        # make every call compile the hook's modules again.
        compileall.compile_dir(ROOT / "offprompt", quiet=1)
        passes: list[float] = []
        blocks: list[float] = []
        found: list[float] = []
        # A bare interpreter start, run the same way between the guard's calls, so a busy
        # machine slows both alike: Python's own cost, told apart from the guard's.
        bare: list[float] = []
        # The hook as a host runs it: through bash, wrapped as init writes it, and bare.
        wrapped: list[float] = []
        unwrapped: list[float] = []
        hook_argv = tuple(argv)
        through_wrapper = ["bash", "-c", hook_wrapper.wrap(hook_argv, "exit")]
        through_bare = ["bash", "-c", shlex.join(hook_argv)]

        def timed(event: dict[str, object], command: list[str] = argv) -> tuple[int, float]:
            data = json.dumps(event).encode()
            start = time.perf_counter()
            done = subprocess.run(
                command, input=data, capture_output=True, env=env, cwd=project, check=False
            )
            return done.returncode, (time.perf_counter() - start) * 1000

        for _ in range(args.runs):
            for event in [e for _tool, e in events(project)] + other_hosts(project):
                code, took = timed(event)
                (blocks if code == 2 else passes).append(took)
                bare.append(timed(event, [sys.executable, "-c", "pass"])[1])
                if code == 0:
                    wrapped.append(timed(event, through_wrapper)[1])
                    unwrapped.append(timed(event, through_bare)[1])
        big_project(project)
        for _ in range(args.runs * 3):
            for event in searches(project):
                code, took = timed(event)
                assert code == 0, "a search of a repository that ignores .env must pass"
                found.append(took)
        worst: list[tuple[str, int, float, float]] = []
        for label, command in worst_inputs().items():
            event = {**events(project)[0][1], "tool_input": {"command": command}}
            times, floors, code = [], [], 0
            for _ in range(max(1, args.runs // 2)):
                code, took = timed(event)
                times.append(took)
                floors.append(timed(event, [sys.executable, "-c", "pass"])[1])
            worst.append((label, code, statistics.median(times), statistics.median(floors)))

    def line(label: str, xs: list[float]) -> str:
        p95 = statistics.quantiles(xs, n=20)[-1] if len(xs) >= 2 else xs[0]
        return (
            f"{label:<26} median {statistics.median(xs):6.1f} ms   p95 {p95:6.1f} ms   n={len(xs)}"
        )

    print(line("guard, call let through", passes))
    print(line("guard, call blocked", blocks))
    print(line(f"guard, search ({FOLDERS} dirs)", found))
    print(line("python -c pass (floor)", bare))
    print(line("hook, bash -c, wrapped", wrapped))
    print(line("hook, bash -c, bare", unwrapped))
    print("contract: <= 50 ms per call (DESIGN §14); target: let through <= 30 ms (issue 19)")
    print(f"worst inputs (one Bash event each, about {WORST_BYTES:,} bytes of JSON):")
    for label, code, took, floor in worst:
        verdict = "blocked" if code == 2 else "let through" if code == 0 else f"exit {code}"
        print(f"  {label:<26} {took:7.1f} ms   floor {floor:5.1f} ms   {verdict}")
    print("contract: <= 1 s for any input up to the host's limit (DESIGN §14)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
