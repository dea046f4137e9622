"""How long `offprompt guard` takes per tool call: the whole process, as a host runs it.

Feeds realistic Claude Code and Codex PreToolUse events (everyday commands and reads, and a few
that are blocked), and Cursor's and Windsurf's shell events, to `offprompt guard` started as
`init` tells hosts to start it for an installed offprompt (`python -I -S`, from a venv the bench
installs this tree into as pip installs a wheel: agents/guard_start.py) and as the `offprompt`
console script starts it (what init wrote before, and still writes elsewhere), one process per
event, with the package's bytecode compiled as an install leaves it, run in a project (as hosts
run hooks) with a `.env` and a journal of 200 writes in the user state dir (no
OFFPROMPT_STATE_DIR).
Then Gemini CLI's `grep_search` over the whole project, the costliest call: the guard looks
through the project's folders for dotenv files and asks git which it ignores; the project is a
git repository of FOLDERS folders with `.env` files at the top and in one service, both ignored.
Prints the median and p95 wall time and the median CPU time (user + system, the process and its
children, as the kernel counts them: steadier than wall time on a busy machine) per call, for
passes, blocks and searches apart, beside the floor (`python -c pass`, run right after each call,
so a machine that slows down slows both alike), the ratio of a call let through to the floor
(the median over those pairs), and the bounds (DESIGN §14: 50 ms per call; issue 45: a call let
through within 1.5x the floor). Beside them, the least any guard in Python can cost: an
interpreter with no site (`-I -S`) importing only `os` and the C halves of `re` and `json`
(`_sre`, `_json`), which the guard needs (offprompt/rx.py, offprompt/jsonread.py).
Then the same calls let through as a host runs the hook: `bash -c` with the command init writes
(the fail-closed `sh` wrapper of DESIGN §9) beside `bash -c` with the bare command.
Then the worst inputs (DESIGN §14: bounded, <= 1 s, for any input up to the host's limit): one
Bash event per family of the shapes that once cost super-linear time (many `cd`s and words,
long pipelines, deep nesting, here-docs, huge words...), each about WORST_BYTES of JSON (the
guard reads 4 MiB), its time and verdict beside the floor.
Usage: python bench/guard.py [--runs N] [--calls-only] [--check [--target X]]
  --runs N       rounds over every event (default 5)
  --calls-only   skip the search and the worst inputs (the per-call figures alone)
  --check        exit 1 unless a call let through takes at most --target (default 1.5) times
                 the floor, by the median of the pairs' wall-time ratios, in this run
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from offprompt.agents import guard_start, hook_wrapper
from offprompt.agents.interface import ServerCommand

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


# The let-through call's bound against the floor, in one run (issue 45).
TARGET = 1.5


def journal_at(tmp: str, env: dict[str, str]) -> None:
    """A journal of 200 writes where a person's is: the platform's user state dir."""
    where = [sys.executable, "-c", "from offprompt.statedir import journal_path as d; print(d())"]
    found = subprocess.run(where, env=env, capture_output=True, text=True, check=True)
    journal = Path(found.stdout.strip())
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


def install(where: Path) -> list[str]:
    """This tree installed in a venv at `where` as pip installs a wheel (the package in its
    site-packages, compiled; a console script beside its python); the guard's argv as init
    writes it for that install."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    base = {"base": str(where), "platbase": str(where)}
    purelib = Path(sysconfig.get_path("purelib", vars=base))
    shutil.copytree(
        ROOT / "offprompt", purelib / "offprompt", ignore=shutil.ignore_patterns("__pycache__")
    )
    compileall.compile_dir(purelib / "offprompt", quiet=1)
    script = where / "bin" / "offprompt"
    script.write_text(
        f"#!{where}/bin/python\nimport re, sys\nfrom offprompt.__main__ import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)
    argv = guard_start.argv(ServerCommand(str(script), ("serve",)), str(where / "bin" / "python"))
    assert argv[1:3] == ("-I", "-S"), argv
    return list(argv)


class Timer:
    """Runs one command per event in `project` and gives its exit code, wall and CPU ms."""

    def __init__(self, env: dict[str, str], project: Path) -> None:
        self.env = env
        self.project = project

    def __call__(self, event: dict[str, object], command: list[str]) -> tuple[int, float, float]:
        data = json.dumps(event).encode()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            command, input=data, capture_output=True, env=self.env, cwd=self.project, check=False
        )
        wall = (time.perf_counter() - start) * 1000
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
        return done.returncode, wall, cpu


class Figures:
    """Wall and CPU times of one kind of call, in ms."""

    def __init__(self) -> None:
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def add(self, wall: float, cpu: float) -> None:
        self.wall.append(wall)
        self.cpu.append(cpu)

    def line(self, label: str) -> str:
        xs = self.wall
        p95 = statistics.quantiles(xs, n=20)[-1] if len(xs) >= 2 else xs[0]
        return (
            f"{label:<28} median {statistics.median(xs):6.1f} ms   p95 {p95:6.1f} ms   "
            f"cpu {statistics.median(self.cpu):5.1f} ms   n={len(xs)}"
        )


def ratio(a: Figures, b: Figures) -> tuple[float, float]:
    """The median over the pairs (a call, then the floor right after it) of a/b: wall, CPU."""

    def each(xs: list[float], ys: list[float]) -> float:
        return statistics.median(x / y for x, y in zip(xs, ys, strict=True) if y > 0)

    return each(a.wall, b.wall), each(a.cpu, b.cpu)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls-only", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--target", type=float, default=TARGET)
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
        journal_at(tmp, env)
        # What the console script pip writes does (no runpy, unlike `python -m offprompt`).
        script = "import re, sys; from offprompt.__main__ import main; sys.exit(main())"
        console = [sys.executable, "-c", script, "guard"]
        # What init writes for an installed offprompt (agents/guard_start.py).
        argv = install(Path(tmp) / "venv")
        # An install has .pyc files (pip compiles them); PYTHONDONTWRITEBYTECODE would otherwise
        # make every call compile the hook's modules again.
        compileall.compile_dir(ROOT / "offprompt", quiet=1)
        floor_argv = [sys.executable, "-c", "pass"]
        # The least a guard written in Python can cost: no site, and only the modules that
        # reading an event (_json) and a bash command (_sre) and paths (os) cannot do without.
        least_argv = [sys.executable, "-I", "-S", "-c", "import _json, _sre, os"]
        timed = Timer(env, project)
        passes, blocks, found = Figures(), Figures(), Figures()
        # The console script's start, for the same calls.
        consoled = Figures()
        # A bare interpreter start, run right after each call: Python's own cost, told apart
        # from the guard's; `floor_passes` are those paired with a call let through.
        bare, floor_passes, least = Figures(), Figures(), Figures()
        # The hook as a host runs it: through bash, wrapped as init writes it, and bare.
        wrapped, unwrapped = Figures(), Figures()
        hook_argv = tuple(argv)
        through_wrapper = ["bash", "-c", hook_wrapper.wrap(hook_argv, "exit")]
        through_bare = ["bash", "-c", shlex.join(hook_argv)]
        for _ in range(args.runs):
            for event in [e for _tool, e in events(project)] + other_hosts(project):
                code, wall, cpu = timed(event, argv)
                floor = timed(event, floor_argv)[1:]
                bare.add(*floor)
                if code != 0:
                    blocks.add(wall, cpu)
                    continue
                passes.add(wall, cpu)
                floor_passes.add(*floor)
                consoled.add(*timed(event, console)[1:])
                least.add(*timed(event, least_argv)[1:])
                wrapped.add(*timed(event, through_wrapper)[1:])
                unwrapped.add(*timed(event, through_bare)[1:])
        worst: list[tuple[str, int, float, float, float]] = []
        if not args.calls_only:
            big_project(project)
            for _ in range(args.runs * 3):
                for event in searches(project):
                    code, wall, cpu = timed(event, argv)
                    assert code == 0, "a search of a repository that ignores .env must pass"
                    found.add(wall, cpu)
            for label, command in worst_inputs().items():
                event = {**events(project)[0][1], "tool_input": {"command": command}}
                times, floors = Figures(), Figures()
                code = 0
                for _ in range(max(1, args.runs // 2)):
                    code, wall, cpu = timed(event, argv)
                    times.add(wall, cpu)
                    floors.add(*timed(event, floor_argv)[1:])
                medians = (statistics.median(times.wall), statistics.median(times.cpu))
                worst.append((label, code, *medians, statistics.median(floors.wall)))

    print(passes.line("guard, call let through"))
    print(consoled.line("  the same, console script"))
    print(blocks.line("guard, call blocked"))
    if found.wall:
        print(found.line(f"guard, search ({FOLDERS} dirs)"))
    print(bare.line("python -c pass (floor)"))
    print(least.line("least (-I -S, os _sre _json)"))
    print(wrapped.line("hook, bash -c, wrapped"))
    print(unwrapped.line("hook, bash -c, bare"))
    through, through_cpu = ratio(passes, floor_passes)
    old, old_cpu = ratio(consoled, floor_passes)
    bound, bound_cpu = ratio(least, floor_passes)
    print(f"let through / floor: {through:.2f}x wall, {through_cpu:.2f}x cpu")
    print(f"  the same, console script: {old:.2f}x wall, {old_cpu:.2f}x cpu")
    print(f"  least any Python guard costs: {bound:.2f}x wall, {bound_cpu:.2f}x cpu")
    print(
        f"contract: <= 50 ms per call (DESIGN §14); target: let through <= {args.target:g}x"
        " the floor (issue 45)"
    )
    if worst:
        print(f"worst inputs (one Bash event each, about {WORST_BYTES:,} bytes of JSON):")
        for label, code, took, cpu, floor in worst:
            verdict = "blocked" if code == 2 else "let through" if code == 0 else f"exit {code}"
            print(
                f"  {label:<26} {took:7.1f} ms   cpu {cpu:7.1f} ms   floor {floor:5.1f} ms"
                f"   {verdict}"
            )
        print("contract: <= 1 s for any input up to the host's limit (DESIGN §14)")
    if args.check and through > args.target:
        print(f"FAILED: a call let through took {through:.2f}x the floor (target {args.target:g}x)")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
