"""How the command init writes starts the guard for an installed offprompt (issue 45: the hook
runs before every tool call): the install's own interpreter, isolated and without `site`, takes
offprompt from the install's site-packages; the decisions are the guard's, the figure that
must not regress is counted (the modules loaded), not timed."""

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers import ROOT
from test_guard import claude_event, written_project

from offprompt.agents import guard_install, guard_start, hook_wrapper
from offprompt.agents.interface import ServerCommand


def installed(where: Path) -> tuple[Path, Path]:
    """A venv with offprompt installed as pip installs a wheel (the package copied into its
    site-packages, a console script beside its python), lent the test venv's packages (click
    and the rest) through a .pth as `--system-site-packages` would. Returns (python, script)."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(where)], check=True, timeout=60
    )
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)}))
    shutil.copytree(
        ROOT / "offprompt", purelib / "offprompt", ignore=shutil.ignore_patterns("__pycache__")
    )
    (purelib / "lent.pth").write_text(f"{sysconfig.get_path('purelib')}\n")
    script = where / "bin" / "offprompt"
    script.write_text(
        f"#!{where}/bin/python\nimport re, sys\nfrom offprompt.__main__ import main\n"
        "sys.exit(main())\n"
    )
    script.chmod(0o755)
    return where / "bin" / "python", script


@pytest.fixture(scope="module")
def install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return installed(tmp_path_factory.mktemp("install") / "venv")


def command_for(install: tuple[Path, Path], answer: hook_wrapper.Answer = "exit") -> str:
    python, script = install
    server = ServerCommand(str(script), ("serve",))
    return guard_install.hook_command(server, answer, executable=str(python))


def run(command: str, event: object, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """`command` as a host runs it: through bash, the event on stdin."""
    return subprocess.run(
        ["/bin/bash", "-c", command],
        input=json.dumps(event).encode(),
        capture_output=True,
        cwd=cwd,
        env={k: v for k, v in os.environ.items() if k != "OFFPROMPT_STATE_DIR"},
        timeout=60,
        check=False,
    )


def test_the_hook_starts_the_installs_python_isolated_without_site(
    install: tuple[Path, Path],
) -> None:
    """For an installed offprompt, the hook runs its python with -I -S, and the console script
    stays in the command (the program it falls back to, and what `offprompt agents` names)."""
    python, script = install

    words = guard_install.guard_argv(command_for(install))

    assert words is not None
    assert (str(python), "-I", "-S", "-c") == words[:4]
    assert (str(script), "guard") == words[-2:]


def test_the_hook_loads_no_site_and_decides_as_the_guard(
    install: tuple[Path, Path], tmp_path: Path, canary: str
) -> None:
    """The command's python, traced (-X importtime): `site` never loads and offprompt comes from
    the install, and a read of .env is blocked while `cat README.md` goes through."""
    project = written_project(tmp_path, canary)
    words = guard_install.guard_argv(command_for(install))
    assert words is not None
    traced = [words[0], "-X", "importtime", *words[1:]]
    event = claude_event(project)("Bash", {"command": "cat README.md"})

    done = subprocess.run(
        traced, input=json.dumps(event).encode(), capture_output=True, cwd=project, timeout=60
    )

    modules = [line.split("|")[-1].strip() for line in done.stderr.decode().splitlines()]
    assert (0, b"") == (done.returncode, done.stdout)
    assert "site" not in modules
    assert "offprompt.guard.hook" in modules
    blocked = run(
        command_for(install), claude_event(project)("Bash", {"command": "cat .env"}), project
    )
    assert 2 == blocked.returncode
    assert b"offprompt guard: blocked" in blocked.stderr
    assert canary.encode() not in blocked.stdout + blocked.stderr


@pytest.mark.parametrize("answer", ["cursor", "copilot"])
def test_hosts_answering_on_stdout_get_their_answer(
    install: tuple[Path, Path], tmp_path: Path, canary: str, answer: hook_wrapper.Answer
) -> None:
    """Cursor's and the Copilot runtime's hooks, started this way, answer a read of .env with
    their deny JSON."""
    project = written_project(tmp_path, canary)
    events = {
        "cursor": {"hook_event_name": "beforeShellExecution", "command": "cat .env",
                   "cwd": str(project), "workspace_roots": [str(project)]},
        "copilot": {"toolName": "bash", "toolArgs": json.dumps({"command": "cat .env"}),
                    "cwd": str(project)},
    }  # fmt: skip

    done = run(command_for(install, answer), events[answer], project)

    assert 2 == done.returncode
    assert b"deny" in done.stdout
    assert canary.encode() not in done.stdout + done.stderr


def test_the_doctor_check_runs_the_cli(install: tuple[Path, Path]) -> None:
    """`offprompt agents` checks the hook's program with `… --version` in place of `guard`:
    started without site, the rest of the CLI still loads (click from site-packages)."""
    words = guard_install.guard_argv(command_for(install))
    assert words is not None

    done = subprocess.run([*words[:-1], "--version"], capture_output=True, timeout=60)

    assert 0 == done.returncode, done.stderr
    assert b"0.1.0" in done.stdout


def test_an_install_rebuilt_another_way_runs_its_console_script(
    install: tuple[Path, Path], tmp_path: Path, canary: str
) -> None:
    """The site-packages the command looks in no longer holds offprompt (the venv rebuilt as an
    editable install, say): the console script runs the guard instead, and it still blocks."""
    where = tmp_path / "venv"
    python, script = installed(where)
    command = command_for((python, script))
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    shutil.rmtree(Path(purelib) / "offprompt")
    (Path(purelib) / "tree.pth").write_text(f"{ROOT}\n")
    project = written_project(tmp_path, canary)

    blocked = run(command, claude_event(project)("Bash", {"command": "cat .env"}), project)
    passed = run(command, claude_event(project)("Bash", {"command": "cat README.md"}), project)

    assert (2, 0) == (blocked.returncode, passed.returncode)
    assert b"offprompt guard: blocked" in blocked.stderr


def test_an_editable_install_keeps_the_console_script(tmp_path: Path) -> None:
    """Where offprompt is not in the install's site-packages (an editable install), init
    writes the console script as before: the -S start would only add a step."""
    python, script = installed(tmp_path / "venv")
    purelib = sysconfig.get_path(
        "purelib", vars={"base": str(tmp_path / "venv"), "platbase": str(tmp_path / "venv")}
    )
    shutil.rmtree(Path(purelib) / "offprompt")

    words = guard_install.guard_argv(command_for((python, script)))

    assert (str(script), "guard") == words


def test_offprompt_agents_names_the_console_script(install: tuple[Path, Path]) -> None:
    """`offprompt agents` shows the fast start as the console script it stands for, saying it
    is started by its python with -I -S, not as the code it runs."""
    script = install[1]
    words = guard_install.guard_argv(command_for(install))
    assert words is not None

    assert ((str(script), "guard"), True) == guard_start.shown(words)
    assert ((str(script), "guard"), False) == guard_start.shown((str(script), "guard"))
