"""`offprompt collect` from a terminal: the same page and write, exit codes, no value printed."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dotenv import dotenv_values
from helpers import chromium_or_skip

ROOT = Path(__file__).resolve().parents[2]
PERSON = ROOT / "tests" / "flows" / "person.py"
SYSTEM_PATH = "/usr/sbin:/usr/bin:/sbin:/bin"  # the fixture's PATH holds only fake agents
# A terminal on the person's own machine: without this, Linux with no DISPLAY (CI) is remote.
LOCAL = {"OFFPROMPT_SANDBOX": "0"}
# What makes a Linux terminal remote or local by itself (DESIGN §5), left out for a headless one.
HEADLESS_UNSET = frozenset(
    {"DISPLAY", "WAYLAND_DISPLAY", "SSH_CONNECTION", "CODESPACES", "CLAUDE_CODE_REMOTE"}
)


def collect(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **LOCAL}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", *args],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def collect_raw(
    project: Path, *args: str | bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`collect` with arguments that may be bytes (what a shell passes that is not UTF-8)."""
    full = {**os.environ, **LOCAL}
    full.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", *args],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        errors="backslashreplace",
        timeout=60,
        check=False,
    )


def person_env(tmp_path: Path, values: dict[str, str], mode: str) -> dict[str, str]:
    return {
        "BROWSER": f"{sys.executable} {PERSON} %s",
        "PERSON_VALUES": json.dumps(values),
        "PERSON_MODE": mode,
        "PERSON_OUT": str(tmp_path / "person.jsonl"),
    }


def person_said(tmp_path: Path) -> list[dict[str, str]]:
    """What person.py reported; it reports from a forked child, so give it a moment."""
    out = tmp_path / "person.jsonl"
    deadline = time.monotonic() + 15
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return [json.loads(line) for line in out.read_text().splitlines()]


@pytest.mark.browser
def test_collect_writes_through_chromium_and_prints_the_fingerprint(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """A person in Chromium fills the page; collect writes, prints names and the page's emoji."""
    chromium_or_skip()
    env = person_env(tmp_path, {"API_KEY": canary}, "chromium")
    done = collect(project, "API_KEY", "--reason", "terminal test", env=env)
    assert done.returncode == 0, done.stderr
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    (said,) = person_said(tmp_path)
    lines = done.stdout.splitlines()
    assert "API_KEY" in lines
    assert lines[-1] == f"Fingerprint {said['fingerprint']}"
    journal = (Path(os.environ["OFFPROMPT_STATE_DIR"]) / "journal.jsonl").read_text()
    for text in (done.stdout, done.stderr, journal):
        assert canary not in text


def test_collect_over_plain_http_into_another_file(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """--file names the .env to write; the fingerprint printed is the one the person computed."""
    env = person_env(tmp_path, {"DB_URL": canary}, "http")
    done = collect(project, "DB_URL", "--file", "config/.env.local", env=env)
    assert done.returncode == 0, done.stderr
    assert dotenv_values(project / "config" / ".env.local") == {"DB_URL": canary}
    (said,) = person_said(tmp_path)
    assert done.stdout.splitlines()[-1] == f"Fingerprint {said['fingerprint']}"
    assert canary not in done.stdout + done.stderr


def test_collect_without_a_display_opens_an_explicit_browser(
    project: Path, tmp_path: Path, canary: str
) -> None:
    """Linux with no DISPLAY but BROWSER set: the page opens through BROWSER and is written, with
    no remote mode, tunnel or download (README's Troubleshooting: "set BROWSER")."""
    full = {k: v for k, v in os.environ.items() if k not in HEADLESS_UNSET}
    full.update(person_env(tmp_path, {"API_KEY": canary}, "http"), OFFPROMPT_TUNNEL="off")
    done = subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", "API_KEY", "--timeout", "20"],
        cwd=project,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert dotenv_values(project / ".env") == {"API_KEY": canary}
    assert "remote mode" not in done.stderr
    assert canary not in done.stdout + done.stderr


def test_expired_request_exits_3(project: Path) -> None:
    """Nobody fills the page before --timeout: exit 3 and no file."""
    done = collect(project, "API_KEY", "--timeout", "1", env={"BROWSER": "false"})
    assert done.returncode == 3
    assert "expired" in done.stderr
    assert "http://127.0.0.1:" in done.stderr
    assert not (project / ".env").exists()


USAGE_ERRORS: dict[str, tuple[list[str | bytes], str]] = {
    "no names": ([], "name at least one key"),
    "a repeated name": (["A", "A"], "A is named twice"),
    "13 names": ([f"KEY_{i}" for i in range(13)], "at most 12"),
    "a lowercase name": (["lower"], "'lower' is not a key name"),
    "a dash in a name": (["API-KEY"], "'API-KEY' is not a key name"),
    "a final newline in a name": (["API_KEY\n"], "'API_KEY\\n' is not a key name"),
    "a name that is not UTF-8": ([b"API_\xff"], "'API_\\udcff' is not a key name"),
    "a name over 128 characters": (["K" * 129], "at most 128 characters"),
    "--file outside the project": (["API_KEY", "--file", "../elsewhere.env"], "outside the"),
    "--file absolute elsewhere": (["API_KEY", "--file", "/tmp/elsewhere.env"], "outside the"),
    "--file inside .git": (["API_KEY", "--file", ".git/config"], "inside .git"),
    "--file a folder": (["API_KEY", "--file", "sub"], "is a folder"),
    "--file ending in /": (["API_KEY", "--file", "sub/"], "must name a file"),
    "--file with a line break": (["API_KEY", "--file", ".env\nx"], "control characters"),
    "--file not UTF-8": (["API_KEY", "--file", b".env\xff"], "must be UTF-8 text"),
    "--file part over 255 bytes": (["API_KEY", "--file", "a" * 256], "longer than 255 bytes"),
    "--file over 1024 characters": (["API_KEY", "--file", "d/" * 513], "at most 1024 characters"),
    "--file too long": (["API_KEY", "--file", "/".join(["😀" * 63] * 16)], "too long"),
    "--reason too long": (["API_KEY", "--reason", "r" * 2001], "--reason must be at most 2000"),
    "--reason with an escape": (["API_KEY", "--reason", "a\x1b[2Jb"], "--reason must not"),
    "--reason not UTF-8": (["API_KEY", "--reason", b"a\xffb"], "--reason must be UTF-8 text"),
    "--provider not NAME=REF": (["API_KEY", "--provider", "nope"], "is not NAME=REF"),
    "--provider unknown": (["API_KEY", "--provider", "API_KEY=nope"], "--provider for API_KEY"),
    "--provider for another name": (
        ["API_KEY", "--provider", "OTHER=stripe"],
        "--provider names 'OTHER'",
    ),
    "--timeout 0": (["API_KEY", "--timeout", "0"], "--timeout"),
}


@pytest.mark.parametrize("case", USAGE_ERRORS, ids=list(USAGE_ERRORS))
def test_usage_errors_exit_2(project: Path, case: str) -> None:
    """Every mistake on the command line is a usage error (2) that says what is wrong, before
    any page is served and without touching the project."""
    (project / "sub").mkdir()
    args, says = USAGE_ERRORS[case]
    done = collect_raw(project, *args, env={"BROWSER": "false"})
    assert 2 == done.returncode, done.stderr
    assert says in done.stderr
    assert "Traceback" not in done.stderr
    assert "http://" not in done.stderr  # refused before any page was served
    assert ["sub"] == os.listdir(project)


def test_the_command_line_is_checked_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`offprompt collect` checks its arguments once (the request's schema, its refusals, the
    --file path resolved), then runs the request as checked: here to exit 1, before any page,
    on an existing .env it cannot read."""
    from click.testing import CliRunner

    from offprompt import terminal
    from offprompt.cli import cli

    (project / ".env").write_bytes(b"A=\xff\n")
    checked: list[tuple[str, ...]] = []
    real = terminal.check_usage

    def counted(ask: terminal.CommandLine, cwd: Path) -> object:
        checked.append(ask.names)
        return real(ask, cwd)

    monkeypatch.setattr(terminal, "check_usage", counted)
    monkeypatch.chdir(project)
    done = CliRunner().invoke(cli, ["collect", "API_KEY"], env={**LOCAL, "BROWSER": "false"})

    assert (1, [("API_KEY",)]) == (done.exit_code, checked), done.output
    assert done.stderr.startswith("offprompt: .env is not UTF-8 text"), done.stderr
    assert "http://" not in done.stderr


def test_home_folder_is_refused(isolated_env: Path) -> None:
    """Run in $HOME, collect refuses (exit 1) instead of writing a .env there."""
    done = collect(isolated_env, "API_KEY", env={"BROWSER": "false"})
    assert done.returncode == 1
    assert "project" in done.stderr
    assert not (isolated_env / ".env").exists()


def test_unwritable_destination_is_an_error_not_usage(project: Path) -> None:
    """A destination on a read-only file system is a real error: exit 1 at once, saying why,
    instead of a page that no submit can succeed on."""
    ro = project / "ro"
    ro.mkdir()
    mount, umount = (shutil.which(p, path=SYSTEM_PATH) or p for p in ("mount", "umount"))
    mounted = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", str(ro)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a read-only tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        done = collect(project, "API_KEY", "--file", "ro/.env", "--timeout", "5")
    finally:
        subprocess.run([umount, str(ro)], check=True)
    assert 1 == done.returncode, done.stderr
    assert "ro/.env cannot be written: the file system is read-only" in done.stderr
    assert "http://" not in done.stderr
    assert [] == os.listdir(ro)


def test_page_warnings_are_prefixed_lines(project: Path, canary: str) -> None:
    """What the page server logs while collect runs (a POST with a wrong nonce) is one
    `offprompt: ` line, like every other line on stderr, and never the value it carried."""
    script = ROOT / "tests" / "cli" / "fixtures" / "wrong_nonce.py"
    env = {"BROWSER": f"{sys.executable} {script} %s {canary}"}
    done = collect(project, "API_KEY", "--timeout", "3", env=env)
    assert 3 == done.returncode, done.stderr
    logged = [line for line in done.stderr.splitlines() if "nonce" in line]
    assert ["offprompt: page: request"] == [line[:24] for line in logged]
    assert canary not in done.stdout + done.stderr
    assert not (project / ".env").exists()


@pytest.mark.parametrize(
    ("env", "because"),
    [
        ({"OFFPROMPT_SANDBOX": "1"}, "OFFPROMPT_SANDBOX=1"),
        ({"OFFPROMPT_SANDBOX": "", "SSH_CONNECTION": "10.0.0.2 5 10.0.0.1 22"}, "SSH_CONNECTION"),
        (
            {"OFFPROMPT_SANDBOX": "", "DISPLAY": "", "WAYLAND_DISPLAY": "", "SSH_CONNECTION": ""},
            "Linux without DISPLAY, WAYLAND_DISPLAY or BROWSER",
        ),
    ],
    ids=["forced", "ssh", "no display"],
)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display rule is Linux's")
def test_remote_mode_says_why_and_how_to_say_otherwise(
    project: Path, env: dict[str, str], because: str
) -> None:
    """Remote mode names the variable that decided it and OFFPROMPT_SANDBOX=0 to undo it."""
    quiet = {"OFFPROMPT_TUNNEL": "off", "BROWSER": "", "CLAUDE_CODE_REMOTE": ""}
    quiet.update({"CODESPACES": "", "SSH_CONNECTION": ""})
    done = collect(project, "API_KEY", "--timeout", "1", env={**quiet, **env})

    (said,) = [line for line in done.stderr.splitlines() if "remote mode" in line]
    assert 3 == done.returncode
    assert said.startswith(f"offprompt: remote mode, because {because}")
    assert "OFFPROMPT_SANDBOX=0" in said


def headless(project: Path, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """`collect` on Linux with no display and no BROWSER, no cloudflared anywhere, and a
    download address that refuses at once (nothing listens on port 1)."""
    full = {k: v for k, v in os.environ.items() if k not in HEADLESS_UNSET}
    full.update(
        PATH=SYSTEM_PATH,
        OFFPROMPT_CACHE_DIR=str(tmp_path / "cache"),
        OFFPROMPT_CLOUDFLARED_BASE="http://127.0.0.1:1/",
    )
    return subprocess.run(
        [sys.executable, "-m", "offprompt", "collect", "API_KEY", "--timeout", "1"],
        cwd=project,
        env=full,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display rule is Linux's")
def test_headless_collect_says_it_opens_a_public_tunnel_before_it_does(
    project: Path, tmp_path: Path
) -> None:
    """Before any download or tunnel, one line says so, why (no display or browser), and how to
    keep the page on this machine (BROWSER, OFFPROMPT_SANDBOX=0, OFFPROMPT_TUNNEL=off)."""
    lines = headless(project, tmp_path).stderr.splitlines()

    said = [i for i, line in enumerate(lines) if "public" in line and "cloudflared" in line]
    started = [i for i, line in enumerate(lines) if line.startswith("Starting a tunnel")]
    assert 1 == len(said), lines
    assert said[0] < started[0]
    for words in ("DISPLAY", "downloads cloudflared", "BROWSER", "OFFPROMPT_TUNNEL=off"):
        assert words in lines[said[0]]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the display rule is Linux's")
def test_a_failed_cloudflared_download_is_one_line_in_words(project: Path, tmp_path: Path) -> None:
    """The download that failed is said once, without a Python exception's class name."""
    done = headless(project, tmp_path)

    failed = [line for line in done.stderr.splitlines() if "could not be downloaded" in line]
    assert 1 == len(failed), done.stderr
    assert re.search(r"[A-Za-z]+(Error|Exception)\b", done.stderr) is None, done.stderr
    assert 3 == done.returncode


def test_local_mode_says_nothing_about_it(project: Path) -> None:
    """On the person's own machine there is nothing to explain."""
    done = collect(project, "API_KEY", "--timeout", "1", env={"BROWSER": "false"})

    assert 3 == done.returncode
    assert "remote mode" not in done.stderr


@pytest.mark.parametrize(
    ("args", "heading"),
    [([], '<h2 id="reason-h">Why</h2>'), (["--reason", "For billing"], "as given at the")],
    ids=["no --reason", "--reason"],
)
def test_the_page_of_a_terminal_request_never_says_the_agent_wrote_its_reason(
    project: Path, args: list[str], heading: str
) -> None:
    """The page `offprompt collect` serves, fetched as a browser would: who wrote the reason."""
    import signal
    import urllib.request

    env = {**os.environ, **LOCAL, "BROWSER": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "offprompt", "collect", "API_KEY", "--timeout", "30", *args],
        cwd=project,
        env=env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stderr is not None
        link = next(line.strip() for line in proc.stderr if line.startswith("  http"))
        with urllib.request.urlopen(link, timeout=10) as reply:  # noqa: S310 (loopback)
            page = reply.read().decode()
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=30)

    assert heading in page
    assert "agent&#x27;s words" not in page
    assert "agent's words" not in page
    assert "The agent wrote this" not in page
