"""The guard as `offprompt init` installs it, run by the real hosts (DESIGN §14): Claude Code
2.1.337 (`claude -p`), Codex 0.171.0 (`codex exec`), Gemini CLI 0.61.0 (`gemini -p`) and Copilot
CLI 1.0.102 (`copilot -p`, reading the hook file init writes for VS Code) with a scripted model
that asks the host's own tools for `.env`; the value never reaches the model, the guard's reason
does, and everyday work still passes."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import offprompt_venv, tool_or_skip

from .conftest import MakeWorld
from .drive import server_ready, type_prompt
from .harness import PY, ROOT, World, run
from .model import ToolScript
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts

KEY = "STRIPE_SECRET_KEY"
README = "guard-readme-marker-7f3a"
BLOCKED = "offprompt guard: blocked: this would expose .env,"
# What Claude Code answers a Read its `permissions.deny` rules (from `offprompt init`) refuse.
DENIED = "denied by your permission settings"
# Codex runs a hook only once the person trusted its exact definition (the /hooks screen, kept
# as `[hooks.state]` in CODEX_HOME/config.toml); without it, measured here, `cat .env` ran and
# the value reached the model. The run stands in for that person with Codex's own flag.
TRUST = ["--dangerously-bypass-hook-trust"]
Call = tuple[str, dict[str, Any]]
Calls = list[Call]


def guarded_project(world: World, agent: str, shared: bool = False) -> dict[str, str]:
    """The project with a `.env` offprompt wrote earlier and a README; `offprompt` on PATH
    running the tree under test; `offprompt init --agent AGENT` run there for real. Returns
    the environment with that PATH."""
    (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    bin_dir = world.root / "bin"
    offprompt = bin_dir / "offprompt"
    offprompt.write_text(f'#!/bin/sh\nexec {shlex.quote(PY)} -m offprompt "$@"\n')
    offprompt.chmod(0o755)
    env = {**world.env, "PATH": f"{bin_dir}:{world.env['PATH']}", "PYTHONPATH": str(ROOT)}
    # init's default is each agent's personal scope; Codex has none, so its user config: the
    # CODEX_HOME the run uses.
    env["CODEX_HOME"] = str(world.codex_home)
    # --command: the hook then runs this tree's offprompt, not whichever one is installed.
    argv = ["offprompt", "init", "--agent", agent, "--command", f"{offprompt} serve"]
    if shared:
        # The project's own files, with the portable command (the `offprompt` above on PATH):
        # for a host whose run rewrites its user settings (Gemini CLI's, by the harness).
        argv = ["offprompt", "init", "--agent", agent, "--shared", "--command", "offprompt serve"]
    done = run(argv, env, world.project, timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    return env


def make(make_world: MakeWorld, kind: str) -> tuple[World, ToolScript]:
    """A run whose model calls `model.calls` (set once the project's path is known)."""
    model = ToolScript(kind, [])
    return make_world(kind, model=model), model


def assert_kept_out(world: World, host_out: str) -> None:
    assert world.canary.encode() not in world.model.raw()
    assert world.canary not in host_out
    assert (world.project / ".env").read_text() == f"{KEY}={world.canary}\n"


# The shell routes to the value, each one a call of the host's own shell tool.
SHELL_ATTACKS = [
    "cat .env",
    "head -1 ./.env",
    f"grep {KEY} .env",
    'cat "$PWD/.env"',
    "cat .e*",
    "sed -n 1p .env",
    f"source .env && echo ${KEY}",
    "cp .env /tmp/x",
    "python3 -c \"print(open('.env').read())\"",
    # Beyond the list: a search of the whole project, which grep makes in .env too.
    f"grep -rn {KEY} .",
]
# Ordinary work in a project with a .env, through the same tools: none may be blocked. Only
# commands that finish at once here (no network, no daemons).
EVERYDAY = [
    "cat README.md",
    "grep -rn API src/",
    "ls -la",
    "ls -la .env",
    "git status",
    "git diff",
    "git log --oneline -5",
    "git add src/main.py",
    "git check-ignore .env",
    "cat .env.example",
    "cp .env.example .env.sample",
    "diff .env.example .env.sample",
    "python3 src/main.py",
    "echo .env >> .gitignore",
    "grep -n '^.env' .gitignore",
    "test -f .env && echo yes",
    "[ -f .env ] || echo missing",
    "offprompt keys .env",
    "offprompt status",
    "find src -name '*.py'",
    "sed -i 's/foo/bar/' src/main.py",
    "head -20 src/main.py",
    "mkdir -p build && ls build",
    "cat src/*.py",
    "ls *",
    "wc -l src/main.py",
    "echo $HOME",
    'python3 -c \'import json; print(json.load(open("package.json"))["name"])\'',
    "touch .env",
    "printf '%s\\n' 'STRIPE_KEY=' >> .env.example",
    "cat .env.example",
    "for f in src/*.py; do echo $f; done",
    "export NODE_ENV=production && echo $NODE_ENV",
    "cat package.json",
    "grep -c . README.md",
    "uname -s",
    "pwd",
    "date +%Y",
    "git branch --show-current",
    "tail -3 README.md",
    "sort .gitignore",
    "echo done",
]


def everyday_project(world: World) -> None:
    """A small git project beside the `.env`: sources, a package.json, an example file."""
    (world.project / "src").mkdir()
    (world.project / "src" / "main.py").write_text("print('foo: uses API keys')\n")
    (world.project / "package.json").write_text('{"name": "shop"}\n')
    (world.project / ".env.example").write_text(f"{KEY}=\n")
    (world.project / ".gitignore").write_text(".env\n")
    git = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    for argv in (["git", "init", "-q"], ["git", "add", "-A"]):
        assert run(argv, {**world.env, **git}, world.project, timeout=30).returncode == 0


def assert_none_blocked(world: World, model: ToolScript, count: int) -> None:
    """Every call got a result, none the guard's or a deny rule's, and they ran: README's text
    reached the model (`cat README.md`), and the commands that change the project did."""
    results = model.outputs()
    assert count == len(results)
    assert [] == [r for r in results if "offprompt guard" in r or DENIED in r]
    assert any(README in r for r in results)
    assert (world.project / ".env.sample").read_text() == f"{KEY}=\n"
    assert (world.project / "build").is_dir()
    assert (world.project / ".gitignore").read_text().endswith(".env\n.env\n")


# -- Claude Code -----------------------------------------------------------------------------

CLAUDE_ATTEMPTS: Calls = [
    ("Read", {"file_path": ".env"}),
    ("Grep", {"pattern": KEY, "path": ".env", "output_mode": "content"}),
    ("Bash", {"command": "cat .env", "description": "Show the env file"}),
    # Over the whole folder: the hook passes these (no file named), the deny rules keep `.env`
    # out of their results (without them, measured, the Grep printed `.env:1:KEY=value`).
    ("Grep", {"pattern": KEY, "path": ".", "output_mode": "content"}),
    ("Glob", {"pattern": "**/.env*"}),
]


def claude_run(world: World, env: dict[str, str]) -> str:
    claude = tool_or_skip("claude")
    host_env, config = world.claude()
    argv = [
        claude,
        "-p",
        "Check the project's keys.",
        "--mcp-config",
        str(config),
        "--strict-mcp-config",
        "--allowedTools",
        "Read,Grep,Glob,Bash",
    ]
    return host_ran(world, argv, host_env, env)


def host_ran(world: World, argv: list[str], host_env: dict[str, str], env: dict[str, str]) -> str:
    """Run the host in the project with the guarded project's PATH; all it printed."""
    done = run(argv, {**host_env, "PATH": env["PATH"]}, world.project, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def test_claude_code_runs_the_installed_guard(make_world: MakeWorld, canary: str) -> None:
    """`claude -p` with the guard `offprompt init` installed: the Read of `.env` is refused by
    the deny rules, Grep and `cat .env` by the hook with the guard's reason, a Grep of the whole
    folder too (DESIGN §14: the folder holds a `.env` git does not ignore, which a Grep over it
    may read wherever the deny rules are gone, as `--mask` takes them out), and a Glob of it
    leaves `.env` out; the value is in no request to the model."""
    world, model = make(make_world, "anthropic")
    # Claude Code's file tools take absolute paths.
    model.calls = [
        (name, {k: str(world.project / v) if v in (".env", ".") else v for k, v in args.items()})
        for name, args in CLAUDE_ATTEMPTS
    ]
    env = guarded_project(world, "claude-code")
    out = claude_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    read, grep, cat, folder_grep, glob = results
    assert DENIED in read
    # The wrapper's JSON block makes Claude Code show the guard's reason alone, first (without
    # it, measured: `[/bin/sh -c '<the whole wrapper script>' … guard]: <reason>`).
    assert grep.startswith(f"PreToolUse:Grep hook error: {BLOCKED}")
    assert cat.startswith(f"PreToolUse:Bash hook error: {BLOCKED}")
    assert folder_grep.startswith(f"PreToolUse:Grep hook error: {BLOCKED}")
    assert [] == [r for r in (grep, cat, folder_grep) if "/bin/sh" in r]
    assert glob == "No files found"
    assert_kept_out(world, out)


def skill(world: World, name: str, command: str) -> None:
    """A project skill whose text runs `command` when it loads (`!` and the command in
    backquotes): its output goes into the skill's text, which the model reads."""
    folder = world.project / ".claude" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: Show the project's files ({name})\n---\n"
        f"Here: !`{command}`\nDone.\n"
    )


def test_claude_code_runs_the_guard_before_a_skills_shell_commands(
    make_world: MakeWorld, canary: str
) -> None:
    """Claude Code 2.1.332 runs a skill's shell commands through PreSkillShellCommand, which
    `offprompt init` registers when the `claude` on PATH knows it: a skill whose text runs a
    read of `.env` that no deny rule recognises is refused with the guard's reason, one that
    runs `ls -a` loads; the value is in no request to the model (measured before the guard read
    this event: the skill's text carried the value to the model)."""
    world, model = make(make_world, "anthropic")
    bin_dir = world.root / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "claude").symlink_to(tool_or_skip("claude"))
    skill(world, "peek", "python3 -c 'print(open(\".env\").read())'")
    skill(world, "list", "ls -a")
    model.calls = [("Skill", {"skill": "peek"}), ("Skill", {"skill": "list"})]
    env = guarded_project(world, "claude-code")
    hooks = json.loads((world.project / ".claude" / "settings.local.json").read_text())["hooks"]
    assert "PreSkillShellCommand" in hooks
    host_env, config = world.claude()
    argv = [tool_or_skip("claude"), "-p", "Check the project's keys.", "--mcp-config"]
    argv += [str(config), "--strict-mcp-config", "--allowedTools", "Skill,Bash"]
    out = host_ran(world, argv, host_env, env)
    # The skill's text (its commands' output in place) follows its tool result as text.
    last = model.conversation()[-1].body["messages"]
    texts = [
        b["text"]
        for m in last
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "text" and b["text"].startswith("Base directory for this skill")
    ]
    print("SKILLS", json.dumps(texts, indent=1).replace(canary, "<canary>"))
    peek, listed = texts
    assert f"Here: [not run: blocked by hook: {BLOCKED}" in peek
    assert "offprompt guard" not in listed
    assert "\nREADME.md\n" in listed
    assert_kept_out(world, out)


def test_claude_code_lets_ordinary_work_through(make_world: MakeWorld, canary: str) -> None:
    """Forty-odd everyday commands and file reads in a project with a `.env` all run."""
    world, model = make(make_world, "anthropic")
    everyday_project(world)
    model.calls = [
        ("Read", {"file_path": str(world.project / "README.md")}),
        ("Read", {"file_path": str(world.project / ".env.example")}),
        ("Grep", {"pattern": "API", "path": str(world.project / "src")}),
        ("Glob", {"pattern": "**/*.py"}),
        *[("Bash", {"command": c, "description": "Work"}) for c in EVERYDAY],
    ]
    env = guarded_project(world, "claude-code")
    out = claude_run(world, env)
    assert_none_blocked(world, model, len(model.calls))
    assert_kept_out(world, out)


# The line a team's shared hook gives where offprompt is not installed (DESIGN §9).
INSTALL = (
    "offprompt guard: blocked: this call names a .env file, which this project guards with"
    " offprompt, and offprompt is not installed here: install it (see the offprompt README)."
)


def test_claude_code_without_offprompt_runs_a_shared_hooks_name_check(
    make_world: MakeWorld, canary: str
) -> None:
    """A teammate without offprompt, in a project whose `init --shared` hook they pulled:
    `ls` runs, `cat .env` is blocked with the line saying to install offprompt, and the value
    reaches no request to the model."""
    world, model = make(make_world, "anthropic")
    model.calls = [
        ("Bash", {"command": "ls", "description": "List"}),
        ("Bash", {"command": "cat .env", "description": "Show the env file"}),
    ]
    env = guarded_project(world, "claude-code", shared=True)
    path = ":".join(d for d in env["PATH"].split(":") if not shutil.which("offprompt", path=d))
    assert shutil.which("offprompt", path=path) is None

    out = claude_run(world, {**env, "PATH": path})

    listing, cat = model.outputs()
    assert "README.md" in listing
    assert f"PreToolUse:Bash hook error: {INSTALL}" == cat.rstrip()
    assert_kept_out(world, out)


# -- Codex -----------------------------------------------------------------------------------


def codex_run(world: World, env: dict[str, str]) -> str:
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", *TRUST, "Check."]
    return host_ran(world, argv, world.codex(), env)


def test_codex_runs_the_installed_guard(make_world: MakeWorld, canary: str) -> None:
    """`codex exec` with the hook `offprompt init` put in .codex/hooks.json: the shell tool's
    `cat .env` is blocked with the guard's reason; the value is in no request to the model."""
    world, model = make(make_world, "openai")
    model.calls = [("exec_command", {"cmd": "cat .env"})]
    env = guarded_project(world, "codex")
    out = codex_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    (result,) = results
    assert BLOCKED in result
    assert "offprompt keys .env" in result
    assert_kept_out(world, out)


def test_codex_lets_ordinary_work_through(make_world: MakeWorld, canary: str) -> None:
    """The same forty-odd everyday commands run through Codex's shell tool, none blocked."""
    world, model = make(make_world, "openai")
    everyday_project(world)
    model.calls = [("exec_command", {"cmd": c}) for c in EVERYDAY]
    env = guarded_project(world, "codex")
    out = codex_run(world, env)
    assert_none_blocked(world, model, len(EVERYDAY))
    assert_kept_out(world, out)


def test_codex_without_offprompt_runs_a_shared_hooks_name_check(
    make_world: MakeWorld, canary: str
) -> None:
    """A teammate without offprompt under Codex, the project's `.codex/hooks.json` from
    `init --shared`: its shell runs `ls`, and `cat .env` is blocked with the line saying to
    install offprompt."""
    world, model = make(make_world, "openai")
    model.calls = [("exec_command", {"cmd": "ls"}), ("exec_command", {"cmd": "cat .env"})]
    env = guarded_project(world, "codex", shared=True)
    path = ":".join(d for d in env["PATH"].split(":") if not shutil.which("offprompt", path=d))
    assert shutil.which("offprompt", path=path) is None

    out = codex_run(world, {**env, "PATH": path})

    listing, cat = model.outputs()
    print("RESULTS", json.dumps([listing, cat], indent=1))
    assert "README.md" in listing
    assert INSTALL in cat
    assert "offprompt could not run" not in listing + cat
    assert_kept_out(world, out)


# -- Gemini CLI ------------------------------------------------------------------------------

# Gemini CLI's own tools on the dotenv files: its file reader (which itself refuses a path with
# a `.env` segment, but not `.env.local`), its project-wide search (which opens every file git
# does not ignore: the project below has no .gitignore), and its shell.
GEMINI_ATTEMPTS: Calls = [
    ("read_file", {"file_path": ".env.local"}),
    ("grep_search", {"pattern": KEY}),
    ("grep_search", {"pattern": KEY, "dir_path": "."}),
    ("run_shell_command", {"command": "cat .env", "description": "Show the env file"}),
]


def gemini_run(world: World, env: dict[str, str]) -> str:
    # --yolo: every tool call runs without asking, so only the guard stands in the way.
    argv = [tool_or_skip("gemini"), "-p", "Check the project's keys.", "--yolo"]
    return host_ran(world, argv, world.gemini(), env)


def test_gemini_runs_the_installed_guard(make_world: MakeWorld, canary: str) -> None:
    """`gemini -p` with the BeforeTool hook `offprompt init` put in .gemini/settings.json: its
    file reader, its search over the project and its shell are each blocked with the guard's
    reason; the value is in no request to the model."""
    world, model = make(make_world, "google")
    model.calls = GEMINI_ATTEMPTS
    env = guarded_project(world, "gemini", shared=True)
    (world.project / ".env.local").write_text(f"LOCAL_KEY={world.canary}\n")
    out = gemini_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    assert len(GEMINI_ATTEMPTS) == len(results)
    assert "blocked: this would expose .env.local," in results[0]
    assert [] == [r for r in results[1:] if BLOCKED not in r]
    assert_kept_out(world, out)


def test_gemini_lets_ordinary_work_through(make_world: MakeWorld, canary: str) -> None:
    """The everyday commands, reads and a project-wide search (git ignores `.env` there) all
    run through Gemini CLI's tools, none blocked; README's text reaches the model."""
    world, model = make(make_world, "google")
    everyday_project(world)
    model.calls = [
        ("read_file", {"file_path": "README.md"}),
        ("read_file", {"file_path": ".env.example"}),
        ("grep_search", {"pattern": "API"}),
        ("grep_search", {"pattern": "API", "dir_path": "src"}),
        ("glob", {"pattern": "**/*.py"}),
        ("list_directory", {"dir_path": "."}),
        *[("run_shell_command", {"command": c}) for c in EVERYDAY],
    ]
    env = guarded_project(world, "gemini", shared=True)
    out = gemini_run(world, env)
    assert_none_blocked(world, model, len(model.calls))
    assert_kept_out(world, out)


def test_gemini_without_offprompt_runs_a_shared_hooks_name_check(
    make_world: MakeWorld, canary: str
) -> None:
    """A teammate without offprompt under Gemini CLI: its shell runs `ls`, and `cat .env` is
    blocked with the line saying to install offprompt."""
    world, model = make(make_world, "google")
    model.calls = [
        ("run_shell_command", {"command": "ls", "description": "List"}),
        ("run_shell_command", {"command": "cat .env", "description": "Show the env file"}),
    ]
    env = guarded_project(world, "gemini", shared=True)
    path = ":".join(d for d in env["PATH"].split(":") if not shutil.which("offprompt", path=d))
    assert shutil.which("offprompt", path=path) is None

    out = gemini_run(world, {**env, "PATH": path})

    listing, cat = model.outputs()
    print("RESULTS", json.dumps([listing, cat], indent=1))
    assert "README.md" in listing
    assert INSTALL in cat
    assert "offprompt could not run" not in listing + cat
    assert_kept_out(world, out)


# -- VS Code's Copilot harness, through Copilot CLI ----------------------------------------------

# `offprompt init --agent vscode` writes .github/hooks/offprompt.json in the Copilot hook format;
# Copilot CLI is the runtime of VS Code's Copilot harness and reads the same file.
COPILOT_ATTEMPTS: Calls = [
    ("view", {"path": ".env"}),
    ("grep", {"pattern": KEY, "paths": [".env"]}),
    ("edit", {"path": ".env", "old_str": KEY, "new_str": "X"}),
    ("bash", {"command": "cat .env", "description": "Show the env file"}),
]


def copilot_run(world: World, env: dict[str, str]) -> str:
    argv = [tool_or_skip("copilot"), "-p", "Check the project's keys.", "--allow-all-tools"]
    return host_ran(world, argv, world.copilot(), env)


def test_copilot_runs_the_hook_init_wrote_for_vscode(make_world: MakeWorld, canary: str) -> None:
    """`copilot -p` in the project after `offprompt init --agent vscode`: its view, grep, edit
    and shell on `.env` are each refused with the guard's reason; the value is in no request to
    the model and `.env` is unchanged."""
    world, model = make(make_world, "anthropic")
    model.calls = COPILOT_ATTEMPTS
    env = guarded_project(world, "vscode")
    out = copilot_run(world, env)
    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    assert len(COPILOT_ATTEMPTS) == len(results)
    assert [] == [r for r in results if BLOCKED not in r]
    assert_kept_out(world, out)


def test_copilot_lets_ordinary_work_through(make_world: MakeWorld, canary: str) -> None:
    """The everyday commands and reads run through Copilot's tools, none refused."""
    world, model = make(make_world, "anthropic")
    everyday_project(world)
    model.calls = [
        ("view", {"path": "README.md"}),
        ("view", {"path": ".env.example"}),
        ("grep", {"pattern": "API", "paths": ["src"]}),
        ("glob", {"pattern": "**/*.py"}),
        *[("bash", {"command": c, "description": "Work"}) for c in EVERYDAY],
    ]
    env = guarded_project(world, "vscode")
    out = copilot_run(world, env)
    assert_none_blocked(world, model, len(model.calls))
    assert_kept_out(world, out)


# -- the shell routes, in every host that runs here -------------------------------------

# Each host: its scripted model's kind, how it is run, and a call of its own shell tool.
SHELLS: dict[str, tuple[str, Callable[[World, dict[str, str]], str], Callable[[str], Call]]] = {
    "claude-code": ("anthropic", claude_run, lambda c: ("Bash", {"command": c})),
    "codex": ("openai", codex_run, lambda c: ("exec_command", {"cmd": c})),
    "gemini": ("google", gemini_run, lambda c: ("run_shell_command", {"command": c})),
    # The file init writes for VS Code, as Copilot CLI (its Copilot harness) runs it.
    "vscode": ("anthropic", copilot_run, lambda c: ("bash", {"command": c, "description": "x"})),
}  # fmt: skip


@pytest.mark.parametrize("agent", SHELLS)
def test_every_shell_route_to_the_value_is_blocked(
    make_world: MakeWorld, canary: str, agent: str
) -> None:
    """Each of the issue's shell routes, through the host's own shell tool, is blocked by the
    hook `offprompt init --agent AGENT` installed, with the guard's reason."""
    kind, run_host, shell = SHELLS[agent]
    world, model = make(make_world, kind)
    model.calls = [shell(c) for c in SHELL_ATTACKS]
    env = guarded_project(world, agent, shared=agent == "gemini")
    out = run_host(world, env)
    results = model.outputs()
    assert len(SHELL_ATTACKS) == len(results)
    assert [] == [c for c, r in zip(SHELL_ATTACKS, results, strict=True) if BLOCKED not in r]
    assert_kept_out(world, out)
    # `cp .env /tmp/x` prints nothing either way: it must not have run.
    copy = Path("/tmp/x")
    assert not copy.exists() or world.canary not in copy.read_text(errors="replace")


# -- a broken install: the hook's offprompt deleted --------------------------------------------

# What the hook's wrapper says when the guard cannot run (offprompt/agents/hook_wrapper.py).
MEND = "offprompt guard: blocked: offprompt could not run (exit 127): reinstall it, or take"


def broken_project(world: World, agent: str) -> dict[str, str]:
    """`offprompt init --agent AGENT` run by the offprompt of a throwaway venv, which the hook
    then names; the guard checked to work; then the venv deleted, as a person deletes a
    project's .venv or uninstalls the tool. Returns the host's PATH (no other offprompt).

    Gemini CLI's hook is the team's shared one, which on a machine without offprompt checks
    names only (DESIGN §9; test_gemini_without_offprompt_… above): there only the venv's
    Python goes, so `offprompt` is still on PATH but cannot start, and blocks every call."""
    (world.project / ".env").write_text(f"{KEY}={world.canary}\n")
    (world.project / "README.md").write_text(f"# app\n{README}\n")
    venv = world.root / "venv"
    offprompt = offprompt_venv(venv, packages=True)
    # init's default is each agent's personal scope; Codex has none, so its user config: the
    # CODEX_HOME the run uses.
    env = {**world.env, "PYTHONPATH": "", "CODEX_HOME": str(world.codex_home)}
    argv = [str(offprompt), "init", "--agent", agent]
    if agent == "gemini":
        # The harness rewrites Gemini CLI's user settings, so the project's own files, whose
        # portable `offprompt guard` the PATH finds in the venv until it is deleted.
        # No other offprompt on it (the venv running the tests has one).
        others = [d for d in env["PATH"].split(os.pathsep) if not (Path(d) / "offprompt").exists()]
        env["PATH"] = os.pathsep.join([str(venv / "bin"), *others])
        argv.append("--shared")
    done = run(argv, env, world.project, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    # The hook names the venv's offprompt: by its path, or (shared) by the name PATH finds there.
    assert (" offprompt guard" if agent == "gemini" else str(offprompt)) in json.dumps(
        hook_files(world)
    )
    if agent == "gemini":
        for python in (venv / "bin").glob("python*"):
            python.unlink()
    else:
        shutil.rmtree(venv)
    return env


def hook_files(world: World) -> list[object]:
    """Every JSON file init left in the project and the run's HOME (where the hook went)."""
    found = []
    for base in (world.project, world.root):
        for path in base.rglob("*.json"):
            if "venv" not in path.parts:
                try:
                    found.append(json.loads(path.read_text()))
                except (ValueError, OSError):
                    continue
    return found


@pytest.mark.parametrize("agent", SHELLS)
def test_a_deleted_offprompt_blocks_reads_instead_of_opening_them(
    make_world: MakeWorld, canary: str, agent: str
) -> None:
    """The venv the hook points at deleted: the host's own shell tool runs `cat .env` and
    `cat README.md`, and both are blocked (the guard cannot tell them apart) with the one
    line saying how to mend; the value is in no request to the model."""
    kind, run_host, shell = SHELLS[agent]
    world, model = make(make_world, kind)
    model.calls = [shell("cat .env"), shell("cat README.md")]
    env = broken_project(world, agent)

    out = run_host(world, env)

    results = model.outputs()
    print("RESULTS", json.dumps(results, indent=1))
    assert 2 == len(results)
    assert [] == [r for r in results if MEND not in r]
    assert [] == [r for r in results if README in r]
    assert_kept_out(world, out)
    if agent == "codex":
        # `codex exec` shows the person each blocked call with its reason (on stderr).
        assert MEND in out


# A guard that never decides (its rules loop), with a deadline of 1 s, and one that crashes.
FAULTS = {
    "hangs": (
        "import sys\nsys.path.insert(0, {root!r})\nfrom offprompt.guard import hook\n"
        "def forever(*args):\n    while True:\n        pass\n"
        "hook.decide = forever\nsys.exit(hook.main(deadline=1.0))\n",
        "offprompt guard: blocked: the guard did not decide within 1 s,",
    ),
    "crashes": (
        "raise RuntimeError('a bug in offprompt')\n",
        "offprompt guard: blocked: offprompt could not run (exit 1): reinstall it, or take",
    ),
}


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_guard_that_hangs_or_crashes_blocks_the_call(
    make_world: MakeWorld, canary: str, agent: str, fault: str
) -> None:
    """The hook init wrote runs an offprompt whose guard never decides (blocked at its own
    deadline, before the host's time limit) or crashes (the wrapper blocks): `cat .env` is
    blocked with that line; the value is in no request to the model."""
    kind, run_host, shell = SHELLS[agent]
    world, model = make(make_world, kind)
    model.calls = [shell("cat .env")]
    env = guarded_project(world, agent)
    code, line = FAULTS[fault]
    faulty = world.root / "bin" / "faulty-offprompt"
    faulty.write_text(f"#!{PY}\n" + code.format(root=str(ROOT)))
    faulty.chmod(0o755)
    argv = ["offprompt", "init", "--agent", agent, "--command", f"{faulty} serve"]
    assert 0 == run(argv, env, world.project, timeout=30).returncode

    out = run_host(world, env)

    (result,) = model.outputs()
    print("RESULT", result)
    assert line in result
    assert_kept_out(world, out)


def test_the_person_sees_the_mend_line_in_claude_codes_terminal(
    make_world: MakeWorld, canary: str
) -> None:
    """Claude Code's TUI, the venv the hook names deleted, the model running `cat .env`: the
    screen shows the person the line saying how to mend it, and the value stays out."""
    world, model = make(make_world, "anthropic")
    model.calls = [("Bash", {"command": "cat .env", "description": "Show the env file"})]
    env = broken_project(world, "claude-code")
    host_env, config = world.claude()
    argv = [tool_or_skip("claude"), "--mcp-config", str(config), "--strict-mcp-config"]
    term = Terminal(argv, {**host_env, "PATH": env["PATH"]}, world.project)
    try:
        server_ready(world)
        type_prompt(term, world)
        screen = term.wait(lambda s: "Finished." in s, 60)
    finally:
        term.close()

    print("SCREEN", screen)
    assert "offprompt could not run (exit 127)" in " ".join(screen.split())
    (result,) = model.outputs()
    assert "offprompt could not run (exit 127)" in result
    assert_kept_out(world, screen)
