"""One host run's world: an isolated HOME (and CODEX_HOME), a project folder, offprompt as the
host's MCP server behind a tee of its stdio, the `$BROWSER` stub with its person, and the scripted
model; plus what happened afterwards (tabs by opener, pages loaded, writes, where a value went).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotenv import dotenv_values

from .model import SERVER, ScriptedModel

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PY = sys.executable
TEE = ROOT / "tests" / "flows" / "tee_server.py"
BROWSER_STUB = HERE / "browser.py"
KEY = "OPENAI_API_KEY"
PROMPT = "Set up the OpenAI key for this project."
ARGUMENTS = {
    "secrets": [{"name": KEY}],
    "reason": "The summariser calls the OpenAI API.",
}
# Names of the variables the server must get through Codex's `env_vars` (it drops the rest).
SERVER_VARS = (
    "BROWSER",
    "PYTHONPATH",
    "TEE_DIR",
    "OFFPROMPT_STATE_DIR",
    "OFFPROMPT_SANDBOX",
    "OFFPROMPT_TUNNEL",
    "OFFPROMPT_DIALOG_WAIT_MS",
    "OFFPROMPT_ELICIT_WAIT_MS",
    "OFFPROMPT_TTL",
)
# A fake key for the fake provider: the same text is what ~/.claude.json approves.
DUMMY_KEY = "sk-ant-hosts-test-0000000000000000000000"


@dataclass
class World:
    """Folders and settings of one host run; `env` is the host's environment."""

    root: Path
    canary: str
    model: ScriptedModel
    dialog_wait_ms: int = 3000
    cold_start: float = 1.5
    env: dict[str, str] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def codex_home(self) -> Path:
        return self.root / "codex-home"

    @property
    def project(self) -> Path:
        return self.root / "project"

    @property
    def tee(self) -> Path:
        return self.root / "tee"

    @property
    def state(self) -> Path:
        return self.root / "state"

    @property
    def person_log(self) -> Path:
        return self.root / "person.jsonl"

    def prepare(self) -> None:
        for folder in (self.home, self.codex_home, self.project, self.tee, self.state):
            folder.mkdir(parents=True, exist_ok=True)
        person = self.root / "person.json"
        person.write_text(
            json.dumps(
                {
                    "log": str(self.person_log),
                    "values": {KEY: self.canary},
                    "cold_start": self.cold_start,
                    "claim": str(self.root / "person.claim"),
                }
            )
        )
        # One executable, no arguments: Claude Code runs $BROWSER as a program name (no shell
        # words, no %s), offprompt appends the URL; both then run the same stub.
        browser = self.root / "bin" / "browser"
        browser.parent.mkdir(exist_ok=True)
        stub = f"{shlex.quote(PY)} {shlex.quote(str(BROWSER_STUB))} {shlex.quote(str(person))}"
        browser.write_text(f'#!/bin/sh\nexec {stub} "$@"\n')
        browser.chmod(0o755)
        self.env = {
            "PATH": os.environ["PATH"],
            "HOME": str(self.home),
            "USER": "root",
            "LOGNAME": "root",
            "SHELL": "/bin/bash",
            "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8",
            "TERM": "xterm-256color",
            "TMPDIR": str(self.root / "tmp"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "BROWSER": str(browser),
            "PYTHONPATH": str(ROOT),
            "TEE_DIR": str(self.tee),
            "OFFPROMPT_STATE_DIR": str(self.state),
            "OFFPROMPT_SANDBOX": "0",
            "OFFPROMPT_DIALOG_WAIT_MS": str(self.dialog_wait_ms),
            "OFFPROMPT_TTL": "120",
        }
        (self.root / "tmp").mkdir(exist_ok=True)

    # -- Claude Code ----------------------------------------------------------------------------

    def claude(self) -> tuple[dict[str, str], Path]:
        """Claude Code's environment and --mcp-config file; ~/.claude.json seeded."""
        seed = {
            "hasCompletedOnboarding": True,
            "lastOnboardingVersion": "2.1.328",
            "customApiKeyResponses": {"approved": [DUMMY_KEY[-20:]], "rejected": []},
            "autoUpdates": False,
            "projects": {
                str(self.project): {
                    "hasTrustDialogAccepted": True,
                    "hasCompletedProjectOnboarding": True,
                    "allowedTools": [],
                }
            },
        }
        (self.home / ".claude.json").write_text(json.dumps(seed))
        config = self.root / "mcp.json"
        server = {"type": "stdio", "command": PY, "args": [str(TEE)], "env": {}}
        config.write_text(json.dumps({"mcpServers": {SERVER: server}}))
        env = {
            **self.env,
            "ANTHROPIC_BASE_URL": self.model.base_url,
            "ANTHROPIC_API_KEY": DUMMY_KEY,
            "ENABLE_TOOL_SEARCH": "false",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        }
        return env, config

    # -- Codex ----------------------------------------------------------------------------------

    def codex(self) -> dict[str, str]:
        """Codex's environment; CODEX_HOME/config.toml names the fake provider and offprompt.

        The project's own mount points, made here and kept: Codex's sandbox guards a writable
        root's `.git`, `.codex`, `.agents` and `.aws` by mounting over them, and where one is
        missing bubblewrap makes it for as long as a command runs and takes it away after,
        while Codex's next sandbox may be listing the project for a profile's deny globs (seen
        in CI: "failed to enumerate unreadable glob paths … .git: No such file or directory").
        Empty, as the sandbox's are, so git and offprompt see no repository in them."""
        for name in (".git", ".codex", ".agents", ".aws"):
            folder = self.project / name
            if not os.path.lexists(folder):
                folder.mkdir(parents=True)
        names = ", ".join(json.dumps(n) for n in SERVER_VARS)
        config = f"""
model = "gpt-5"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = "{self.model.base_url}/v1"
env_key = "FAKE_OPENAI_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.{SERVER}]
command = {json.dumps(PY)}
args = [{json.dumps(str(TEE))}]
env_vars = [{names}]

[projects.{json.dumps(str(self.project))}]
trust_level = "trusted"

# Codex's Linux sandbox makes each writable root's `.git` read-only by mounting over it, and
# bubblewrap makes the mount point: an empty /tmp/.git for as long as a command runs, which
# turns every folder under /tmp into a broken repository for the tests running beside it
# (seen in CI: init's git checks failed). The run has its own TMPDIR; /tmp stays out.
[sandbox_workspace_write]
exclude_slash_tmp = true
"""
        (self.codex_home / "config.toml").write_text(config)
        return {**self.env, "CODEX_HOME": str(self.codex_home), "FAKE_OPENAI_KEY": "dummy"}

    # -- Gemini CLI -----------------------------------------------------------------------------

    def gemini(self, server: bool = False) -> dict[str, str]:
        """Gemini CLI's environment: the fake provider, API-key auth chosen, and the project in
        ~/.gemini/trustedFolders.json as the person's answer to Gemini's trust question (a
        folder not trusted gets none of its project settings, hooks included); with `server`,
        offprompt (behind the tee) in the user settings as `offprompt init --global` puts it."""
        folder = self.home / ".gemini"
        folder.mkdir(parents=True, exist_ok=True)
        settings: dict[str, Any] = {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
        }
        if server:
            entry = {"command": PY, "args": [str(TEE)], "timeout": 600_000}
            settings["mcpServers"] = {SERVER: entry}
        (folder / "settings.json").write_text(json.dumps(settings))
        (folder / "trustedFolders.json").write_text(json.dumps({str(self.project): "TRUST_FOLDER"}))
        return {
            **self.env,
            "GEMINI_API_KEY": "dummy",
            "GOOGLE_GEMINI_BASE_URL": self.model.base_url,
        }

    # -- Copilot CLI ----------------------------------------------------------------------------

    def copilot(self) -> dict[str, str]:
        """Copilot CLI's environment: the scripted model as its own provider (BYOK, offline, so
        no GitHub sign-in), and COPILOT_ALLOW_ALL=true, which trusts the folder as the person
        would (Copilot loads a folder's hooks only once it is trusted) and runs tools unasked."""
        return {
            **self.env,
            "COPILOT_HOME": str(self.home / ".copilot"),
            "COPILOT_PROVIDER_BASE_URL": self.model.base_url,
            "COPILOT_PROVIDER_TYPE": "anthropic",
            "COPILOT_PROVIDER_API_KEY": "dummy",
            "COPILOT_MODEL": "claude-sonnet-4.5",
            "COPILOT_OFFLINE": "true",
            "COPILOT_AUTO_UPDATE": "false",
            "COPILOT_ALLOW_ALL": "true",
        }

    # -- what happened --------------------------------------------------------------------------

    def person(self) -> list[dict[str, Any]]:
        if not self.person_log.exists():
            return []
        return [json.loads(x) for x in self.person_log.read_text().splitlines() if x.strip()]

    def tabs(self) -> dict[str, int]:
        """How many tabs each opener opened: {"host": n, "offprompt": m}, plus "person" when
        the person opened a link by hand."""
        out = {"host": 0, "offprompt": 0}
        for note in self.person():
            if note["event"] == "opened":
                out[note["opener"]] = out.get(note["opener"], 0) + 1
        return out

    def open_by_hand(self, url: str) -> None:
        """The person pastes a link the agent showed into their browser."""
        browser = self.env["BROWSER"]
        env = {**self.env, "HOSTS_OPENER": "person"}
        subprocess.run([browser, url], env=env, check=True, timeout=10)

    def loads(self) -> list[dict[str, Any]]:
        return [n for n in self.person() if n["event"] == "loaded"]

    def writes(self) -> list[dict[str, Any]]:
        return [n for n in self.person() if n["event"] == "written"]

    def wait_for(self, event: str, count: int = 1, timeout: float = 30) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while True:
            found = [n for n in self.person() if n["event"] == event]
            if len(found) >= count or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def written_value(self) -> str | None:
        path = self.project / ".env"
        return dotenv_values(path).get(KEY) if path.exists() else None

    def mcp_messages(self, suffix: str) -> list[dict[str, Any]]:
        out = []
        for path in sorted(self.tee.glob(f"*{suffix}")):
            out += [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
        return out

    def places_holding(self, value: str, *extra: tuple[str, bytes]) -> list[str]:
        """Every file under the run's folders (HOME, CODEX_HOME, state, tee, tmp), every model
        request and every extra (name, bytes) that holds `value`, except the project's `.env`."""
        needle = value.encode()
        found = []
        for path in sorted(self.root.rglob("*")):
            if not path.is_file() or path == self.project / ".env":
                continue
            if path == self.root / "person.json":
                continue  # the person's own notebook of what to type
            if self.codex_home / "packages" in path.parents:
                continue  # the Codex TUI's copy of its own app-server release (~400 MB)
            try:
                if needle in path.read_bytes():
                    found.append(str(path.relative_to(self.root)))
            except OSError:
                continue
        if needle in self.model.raw():
            found.append("model requests")
        found += [name for name, data in extra if needle in data]
        return found


def processes_using(folder: Path) -> set[int]:
    """Live processes whose environment names a path inside `folder` (one run's root): the
    run's own processes, daemons that left the host's session included."""
    needle = (str(folder) + "/").encode()
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                if needle in f.read():
                    found.add(int(entry))
        except OSError:
            continue
    return found


def end_processes(pids: set[int]) -> None:
    """SIGTERM, then after a moment SIGKILL, each of `pids` still alive."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = False
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive = True
            except ProcessLookupError:
                continue
        if not alive:
            return
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and any(_alive(p) for p in pids):
            time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


# Codex 0.171 can fail to start its session when two of its own sandbox helpers race over a
# mount point bubblewrap makes for a path that is missing and removes after (a denied dotenv
# name, `.git`): "Failed to create session: … fs sandbox helper failed … bwrap: Can't bind
# mount … No such file or directory", once in each of two full CI runs here. No session was
# made, so no model turn and no command ran: such a run is started again, once.
_CODEX_SESSION_RACE = ("Failed to create session", "fs sandbox helper failed")


def run(
    argv: list[str], env: dict[str, str], cwd: Path, timeout: float
) -> subprocess.CompletedProcess[str]:
    for _ in range(2):
        done = subprocess.run(
            argv,
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        said = done.stdout + done.stderr
        if done.returncode == 0 or not all(s in said for s in _CODEX_SESSION_RACE):
            break
    return done
