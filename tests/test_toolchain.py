"""The test toolchain installs the same way on any machine, and a plugin's next release cannot
stop the run before a test: pinned versions, README's command in CI, warnings that do not crash."""

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def _name(requirement: str) -> str:
    """A requirement's normalized project name (PEP 503)."""
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    assert match, requirement
    return re.sub(r"[-_.]+", "-", match.group(0)).lower()


def _pins() -> dict[str, str]:
    pins: dict[str, str] = {}
    for line in (ROOT / "test-constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, sep, version = line.partition("==")
            assert sep, f"not an exact pin: {line}"
            pins[_name(name)] = version
    return pins


# The system packages the Quick start's one apt-get line names (issue 20): the tests need each.
PREREQUISITES = ["python3-venv", "git", "nodejs", "npm", "chromium", "gh", "bubblewrap", "socat"]


def _quick_start() -> str:
    readme = (ROOT / "README.md").read_text()
    assert 1 == readme.count("\n## Quick start\n")
    return readme.split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]


def _readme_commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)\n```", _quick_start(), re.DOTALL)
    assert len(blocks) == 2, "the quick start is two commands"
    assert all("\n" not in block.strip() for block in blocks), "each command is one line"
    return [block.strip() for block in blocks]


def _readme_test_command() -> str:
    return _readme_commands()[1]


def _steps(command: str) -> list[str]:
    return [step.strip() for step in command.split("&&")]


def _venv(command: str) -> str:
    """The folder a command's first step makes its virtual environment in."""
    words = _steps(command)[0].split()
    assert words[:3] == ["python3", "-m", "venv"], words
    return words[-1]


def test_every_dependency_of_the_test_extra_is_pinned() -> None:
    """test-constraints.txt pins each runtime and test dependency to one exact version."""
    wanted = (
        PYPROJECT["project"]["dependencies"] + PYPROJECT["project"]["optional-dependencies"]["test"]
    )
    pins = _pins()
    assert [] == [r for r in wanted if _name(r) not in pins]


def test_readme_test_command_uses_the_pins() -> None:
    """README's test command installs through the constraints file, so it is what CI last ran."""
    command = _readme_test_command()
    assert "-c test-constraints.txt" in command
    assert command.endswith("python3 -m pytest")


def test_readme_test_command_installs_the_pinned_test_tools_itself() -> None:
    """The Node lines, deploy CLIs and real hosts come from scripts/test-tools, run by the test
    command before pytest: on a fresh machine with CI=true nothing is left to fail for want of
    a tool."""
    steps = _steps(_readme_test_command())
    tools = [i for i, step in enumerate(steps) if step.split()[0] == "scripts/test-tools"]
    assert tools, steps
    assert "--no-hosts" not in steps[tools[0]]
    assert tools[0] < len(steps) - 1
    assert steps[-1] == "python3 -m pytest"
    assert (ROOT / "scripts" / "test-tools").stat().st_mode & 0o111


def test_ci_runs_readme_test_command_in_a_fresh_venv() -> None:
    """README's test command makes a new virtual environment of its own (`--clear`) and
    activates it before installing; .ci/run runs that command as it is."""
    script = (ROOT / ".ci" / "run").read_text()
    command = _readme_test_command()
    assert command in [line.strip() for line in script.splitlines()]
    steps = _steps(command)
    assert steps[0] == "python3 -m venv --clear .venv-test"
    assert steps[1] == ". .venv-test/bin/activate"
    assert steps[2].startswith("python3 -m pip install ")


def test_the_test_command_leaves_the_first_commands_venv_alone() -> None:
    """The first command installs offprompt into `.venv`, which the test command, clearing its
    own folder, must not wipe: two folders, and only the test command clears."""
    install, test = _readme_commands()
    assert _venv(install) != _venv(test)
    assert "--clear" not in _steps(install)[0]
    assert _steps(install)[1] == f". {_venv(install)}/bin/activate"
    assert _steps(install)[-1] == "offprompt serve"


def test_the_test_venv_is_ignored_by_git() -> None:
    """`.venv-test` is never offered to `git add` (real git reads .gitignore)."""
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", ".venv-test/bin/python3"],
        cwd=ROOT,
        check=False,
    )
    assert 0 == done.returncode


def _apt_lines() -> list[str]:
    return [line for line in _quick_start().splitlines() if "apt-get install" in line]


def test_one_apt_line_names_every_prerequisite_before_the_commands() -> None:
    """The system packages come first, in one `apt-get install` line, before either command."""
    quick = _quick_start()
    [line] = _apt_lines()
    packages = line.split("apt-get install", 1)[1].split()
    assert PREREQUISITES == [word for word in packages if not word.startswith("-")]
    assert quick.index(line) < quick.index(_readme_commands()[0])


def test_ci_installs_each_prerequisite_the_machine_lacks() -> None:
    """.ci/run's install-what-is-missing list holds every package of README's apt line, each
    behind a check for its program, and installs them with apt-get before the test command."""
    script = (ROOT / ".ci" / "run").read_text()
    needed = re.findall(r"\|\| need\+=\(([a-z0-9.+-]+)\)", script)
    assert [] == [p for p in PREREQUISITES if p not in needed]
    assert script.index('apt-get install -y -qq "${need[@]}"') < script.index(
        _readme_test_command()
    )


def test_the_quick_start_says_offprompt_init_before_the_test_command() -> None:
    """What a person runs first, `offprompt init` in the project, is in the Quick start, after
    the install command and before the contributor's test command."""
    quick = _quick_start()
    install, test = _readme_commands()
    assert quick.index(install) < quick.index("`offprompt init`") < quick.index(test)


def test_a_plugins_deprecation_notice_at_start_up_does_not_stop_the_run(tmp_path: Path) -> None:
    """A plugin warning at configure time (as pytest-asyncio 1.5 did) leaves the tests running."""
    ini = PYPROJECT["tool"]["pytest"]["ini_options"]
    warnings = "\n".join(f"    {w}" for w in ini["filterwarnings"])
    (tmp_path / "pytest.ini").write_text(f"[pytest]\nfilterwarnings =\n{warnings}\n")
    (tmp_path / "noisy_plugin.py").write_text(
        "import warnings, pytest\n"
        "def pytest_configure(config):\n"
        "    warnings.warn(pytest.PytestDeprecationWarning('an option will change'))\n"
    )
    (tmp_path / "test_one.py").write_text("def test_one():\n    assert True\n")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "noisy_plugin", "-p", "no:cacheprovider", "-q"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_only_tested_platforms_are_claimed() -> None:
    """The classifiers claim POSIX systems only: the sinks need O_NOFOLLOW and flock."""
    systems = [c for c in PYPROJECT["project"]["classifiers"] if c.startswith("Operating System")]
    assert [] == [c for c in systems if "Windows" in c]
    assert systems
