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


def _readme_test_command() -> str:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)\n```", quick, re.DOTALL)
    assert len(blocks) == 2, "the quick start is two commands"
    return blocks[1].strip()


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
    steps = [step.strip() for step in _readme_test_command().split("&&")]
    tools = [i for i, step in enumerate(steps) if step.split()[0] == "scripts/test-tools"]
    assert tools, steps
    assert "--no-hosts" not in steps[tools[0]]
    assert tools[0] < len(steps) - 1
    assert steps[-1] == "python3 -m pytest"
    assert (ROOT / "scripts" / "test-tools").stat().st_mode & 0o111


def test_ci_runs_readme_test_command_in_a_fresh_venv() -> None:
    """README's test command makes a new virtual environment (`--clear`) and activates it
    before installing; .ci/run runs that command as it is."""
    script = (ROOT / ".ci" / "run").read_text()
    command = _readme_test_command()
    assert command in [line.strip() for line in script.splitlines()]
    steps = [step.strip() for step in command.split("&&")]
    assert steps[0] == "python3 -m venv --clear .venv"
    assert steps[1] == ". .venv/bin/activate"
    assert steps[2].startswith("python3 -m pip install ")


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
