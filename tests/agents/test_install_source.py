"""Where a teammate gets offprompt (DESIGN §9 "A team's shared hook"): `init --shared` run by an
offprompt installed from a source (the PEP 610 record pipx and uv leave) writes that source into
the shared hook, and a teammate without offprompt is told `pipx install SOURCE`; an install from
a path of this machine names no path, only the README. Real venv, real init, the hook run
through `/bin/sh -c` as the hosts run it."""

import json
import os
import subprocess
import sysconfig
from pathlib import Path

import pytest
from helpers import offprompt_venv
from test_shared_hook import ABSENT, BARE_PATH, FILES, SHAPES, hook_commands

GIT_SOURCE = "https://github.com/example-team/offprompt.git"


def installed_from(where: Path, record: dict[str, object]) -> Path:
    """An offprompt venv (this tree) whose dist-info holds `record` as its direct_url.json."""
    script = offprompt_venv(where, packages=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(where), "platbase": str(where)})
    info = Path(purelib) / "offprompt-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: offprompt\nVersion: 0.1.0\n")
    (info / "direct_url.json").write_text(json.dumps(record))
    return script


def shared_init(script: Path, project: Path, home: Path, agent: str) -> tuple[str, str]:
    """`offprompt init --shared` as that install runs it (its bin first on PATH): the hook it
    wrote, and what it said."""
    env = {
        "PATH": f"{script.parent}:/usr/bin:/bin",
        "HOME": str(home),
        "OFFPROMPT_STATE_DIR": str(home / "state"),
        "LANG": "C.UTF-8",
    }
    argv = [str(script), "init", "--agent", agent, "--shared", "--project", str(project)]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert 0 == done.returncode, done.stdout + done.stderr
    commands = set(hook_commands(json.loads((project / FILES[agent]).read_text())["hooks"]))
    assert 1 == len(commands)
    return commands.pop(), done.stdout


def cat_env(command: str, project: Path, agent: str) -> subprocess.CompletedProcess[bytes]:
    event = SHAPES[agent][0](project, "cat .env")
    return subprocess.run(
        ["/bin/sh", "-c", command],
        input=json.dumps(event).encode(),
        capture_output=True,
        env={"PATH": BARE_PATH, "HOME": os.environ["HOME"]},
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_a_git_install_is_named_to_a_teammate(tmp_path: Path, agent: str) -> None:
    """Installed with `pipx install git+…@v1`: init says the install line once, the teammate's
    block line says `pipx install git+…@v1`, and the hook names no path of this machine."""
    script = installed_from(
        tmp_path / "pipx-venv",
        {
            "url": GIT_SOURCE,
            "vcs_info": {"vcs": "git", "requested_revision": "v1", "commit_id": "a" * 40},
        },
    )
    project = tmp_path / "project"
    project.mkdir()
    (project / ".env").write_text("KEY=x\n")

    hook, said = shared_init(script, project, tmp_path / "home", agent)
    done = cat_env(hook, project, agent)

    line = (
        "offprompt guard: blocked: this call names a .env file, which this project guards with"
        f" offprompt, and offprompt is not installed here: install it: pipx install"
        f" git+{GIT_SOURCE}@v1\n"
    )
    assert (2, line.encode()) == (done.returncode, done.stderr)
    assert str(tmp_path) not in hook
    assert f"saying to install offprompt (`pipx install git+{GIT_SOURCE}@v1`)" in said


def test_an_install_from_a_local_folder_names_no_path(tmp_path: Path) -> None:
    """Installed with `pipx install .` (a folder of this machine): nothing of it in the hook,
    and the teammate is pointed to the README."""
    checkout = tmp_path / "checkout"
    script = installed_from(
        tmp_path / "pipx-venv", {"url": checkout.as_uri(), "dir_info": {"editable": False}}
    )
    project = tmp_path / "project"
    project.mkdir()

    hook, said = shared_init(script, project, tmp_path / "home", "codex")
    done = cat_env(hook, project, "codex")

    assert (2, ABSENT.encode() + b"\n") == (done.returncode, done.stderr)
    assert str(checkout) not in hook + said
