"""What Claude Code and Codex still wait for from the person before offprompt works in a
project (DESIGN §9), read from the files where those versions record it: Claude Code 2.1.328's
approval of a project server and its folder trust; Codex 0.169's folder trust and hook trust;
Gemini CLI 0.61's folder trust.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from offprompt.agents import files
from offprompt.agents.interface import SERVER_NAME, Agent, Machine, Scope
from offprompt.configedit import jsonc
from offprompt.errors import ConfigError

__all__ = ["Hook", "HostWaits", "Wait", "WaitKind", "codex_hook_hash", "project_keys"]

WaitKind = Literal["approval", "folder-trust", "hook-trust"]


@dataclass(frozen=True)
class Wait:
    """Something the agent still waits for from the person before offprompt works there."""

    kind: WaitKind
    detail: str


@dataclass(frozen=True)
class Hook:
    """One of our hooks in a guard file: its command and where it sits (for Codex's trust)."""

    path: Path
    event: str
    group: int
    handler: int
    entry: Mapping[str, Any]
    command: str


class HostWaits:
    """What one agent still waits for, read once per agent from its own files."""

    def __init__(self, agent: Agent, machine: Machine, folder: Path) -> None:
        self.agent, self.machine, self.folder = agent, machine, folder
        self._claude: _ClaudeState | None = None
        self._codex: dict[str, Any] | None = None
        self._gemini_trust: tuple[bool | None, str] | None = None

    def about(
        self, kind: str, scope: Scope, hook: Hook | None = None
    ) -> tuple[tuple[Wait, ...], str | None]:
        """The waits for one declaration (`kind` server or guard, the guard's `hook`) and,
        when the agent will not run it, why not. ConfigError when the agent's file is unreadable."""
        if self.agent.name == "claude-code":
            return self._claude_code(kind, scope)
        if self.agent.name == "codex":
            return self._codex_about(scope, hook)
        if self.agent.name == "gemini":
            return self._gemini()
        return (), None

    # Gemini CLI 0.61 -------------------------------------------------------------------------

    def _gemini(self) -> tuple[tuple[Wait, ...], str | None]:
        if self._gemini_trust is None:
            self._gemini_trust = _gemini_trust(self.agent, self.machine, self.folder)
        trusted, why = self._gemini_trust
        if trusted is True:
            return (), None
        if trusted is False:
            return (
                (),
                f"Gemini CLI does not trust this folder ({why}), so it runs no MCP server"
                " and no hook here; trust it with `/permissions trust` in Gemini CLI",
            )
        return (
            Wait(
                "folder-trust",
                "Gemini CLI runs no MCP server and no hook here, yours included, until you trust"
                " this folder: trust it when Gemini CLI asks",
            ),
        ), None

    # Claude Code 2.1.328 ---------------------------------------------------------------------

    def _claude_code(self, kind: str, scope: Scope) -> tuple[tuple[Wait, ...], str | None]:
        if kind != "server" or scope == "user":
            # Its trust dialog comes before anything runs in the folder, so it is said once,
            # on the server; user servers are Claude Code's own, the same in every folder.
            return (), None
        state = self._claude or _claude_state(self.agent, self.machine, self.folder)
        self._claude = state
        waits: list[Wait] = []
        if not state.trusted:
            waits.append(
                Wait(
                    "folder-trust",
                    "Claude Code asks whether you trust this folder when it starts here:"
                    " answer yes",
                )
            )
        if scope == "project":
            if state.rejected is not None:
                return tuple(waits), (
                    f"you declined offprompt in Claude Code (disabledMcpjsonServers in"
                    f" {state.rejected}); run `claude mcp reset-project-choices` here, then"
                    " approve it"
                )
            if not state.approved:
                waits.append(
                    Wait(
                        "approval",
                        "Claude Code asks you to approve offprompt, a server from .mcp.json,"
                        " when it starts here: approve it",
                    )
                )
        return tuple(waits), None

    # Codex 0.169 -----------------------------------------------------------------------------

    def _codex_about(self, scope: Scope, hook: Hook | None) -> tuple[tuple[Wait, ...], str | None]:
        config = self._codex if self._codex is not None else self._codex_config()
        self._codex = config
        waits: list[Wait] = []
        if scope == "project":
            trust = _codex_trust(config, self.folder)
            if trust == "untrusted":
                return (), (
                    "you told Codex not to trust this folder, so it ignores .codex/ here; set"
                    f' trust_level = "trusted" under [projects."{self.folder}"] in'
                    f" {self._codex_shown()} or trust it when Codex asks"
                )
            if trust != "trusted":
                waits.append(
                    Wait(
                        "folder-trust",
                        "Codex ignores .codex/ until you trust this folder: choose Trust when"
                        " Codex asks",
                    )
                )
        if hook is not None:
            state = _codex_hook_state(config, hook)
            if state == "disabled":
                return tuple(waits), "you turned this hook off in Codex's /hooks; turn it on there"
            if state == "untrusted":
                waits.append(
                    Wait("hook-trust", "Codex runs it only once you trust it: open /hooks in Codex")
                )
            elif state == "modified":
                waits.append(
                    Wait(
                        "hook-trust",
                        "it changed since you trusted it, so Codex skips it: trust it again in"
                        " /hooks",
                    )
                )
        return tuple(waits), None

    def _codex_path(self) -> Path | None:
        return self.agent.location("user", self.machine, self.folder).path

    def _codex_shown(self) -> str:
        path = self._codex_path()
        return self.machine.shown(path) if path is not None else "Codex's config.toml"

    def _codex_config(self) -> dict[str, Any]:
        path = self._codex_path()
        if path is None:
            return {}
        shown = self.machine.shown(path)
        text = files.read_text(path, shown)
        if text is None:
            return {}
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(
                f"{shown} is not valid TOML ({e}); fix it, then run this again. Nothing was"
                " changed."
            ) from None


@dataclass(frozen=True)
class _ClaudeState:
    trusted: bool
    approved: bool
    rejected: str | None  # the file that declines offprompt


def _claude_state(agent: Agent, machine: Machine, folder: Path) -> _ClaudeState:
    """Folder trust and the approval of the project's .mcp.json `offprompt`, as Claude Code
    2.1.328 decides them (checked against `claude mcp list`; tests/real_hosts/test_doctor.py).

    Trust is `projects[<folder>].hasTrustDialogAccepted` in ~/.claude.json (the folder or the
    git work tree holding it; a parent folder's trust does not count). Approval: a
    `disabledMcpjsonServers` naming it in any settings file or the legacy project entry
    declines it; `enabledMcpjsonServers` or `enableAllProjectMcpServers` approves it from the
    user settings always, and from the project's settings, its settings.local.json or the legacy
    project entry only in a trusted folder.
    """
    user_json = agent.location("user", machine, folder).path
    config = _json_file(user_json, machine) if user_json is not None else {}
    projects = config.get("projects")
    projects = projects if isinstance(projects, dict) else {}
    entries = [projects.get(key) for key in project_keys(folder)]
    legacy = [e for e in entries if isinstance(e, dict)]
    trusted = any(e.get("hasTrustDialogAccepted") is True for e in legacy)
    user_settings = agent.guard_file("user", machine, folder)
    sources: list[tuple[str, dict[str, Any], bool]] = []
    if user_settings is not None:
        sources.append(
            (user_settings.shown, _json_file(user_settings.path, machine), True),
        )
    for name in ("settings.json", "settings.local.json"):
        path = folder / ".claude" / name
        sources.append((machine.shown(path), _json_file(path, machine), False))
    shown_json = machine.shown(user_json) if user_json is not None else "~/.claude.json"
    sources.extend((shown_json, entry, False) for entry in legacy)
    rejected = next(
        (where for where, s, _ in sources if _names(s.get("disabledMcpjsonServers"))), None
    )
    approved = any(
        (always or trusted)
        and (s.get("enableAllProjectMcpServers") is True or _names(s.get("enabledMcpjsonServers")))
        for _, s, always in sources
    )
    return _ClaudeState(trusted, approved, rejected)


def _names(value: object) -> bool:
    return isinstance(value, list) and SERVER_NAME in value


def _json_file(path: Path, machine: Machine) -> dict[str, Any]:
    shown = machine.shown(path)
    text = files.read_text(path, shown)
    if text is None or not text.strip():
        return {}
    try:
        value = jsonc.parse(text).root.value
    except jsonc.JsoncError as e:
        raise ConfigError(
            f"{shown} is not valid JSON ({e}); fix it, then run this again. Nothing was changed."
        ) from None
    return value if isinstance(value, dict) else {}


def project_keys(folder: Path) -> list[str]:
    """The folder, and the git work tree holding it: where agents record a project's trust."""
    keys = [str(folder)]
    for parent in (folder, *folder.parents):
        if (parent / ".git").exists():
            keys.append(str(parent))
            break
    return _unique(keys)


def _codex_trust(config: Mapping[str, Any], folder: Path) -> str | None:
    """`trust_level` of the project in Codex's config.toml, or None when it has none."""
    projects = config.get("projects")
    if not isinstance(projects, dict):
        return None
    levels = [projects.get(key) for key in project_keys(folder)]
    found = [p.get("trust_level") for p in levels if isinstance(p, dict)]
    if "trusted" in found:
        return "trusted"
    return "untrusted" if "untrusted" in found else None


def _codex_hook_state(config: Mapping[str, Any], hook: Hook) -> str:
    """trusted, untrusted, modified (trusted once, changed since) or disabled, as Codex 0.169
    records it: `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]` in the user config,
    with `trusted_hash` the hash of the hook's definition and `enabled = false` for a hook
    turned off."""
    hooks = config.get("hooks")
    states = hooks.get("state") if isinstance(hooks, dict) else None
    key = f"{hook.path}:{_snake(hook.event)}:{hook.group}:{hook.handler}"
    state = states.get(key) if isinstance(states, dict) else None
    state = state if isinstance(state, dict) else {}
    if state.get("enabled") is False:
        return "disabled"
    trusted = state.get("trusted_hash")
    if not isinstance(trusted, str):
        return "untrusted"
    return "trusted" if trusted == codex_hook_hash(hook) else "modified"


def codex_hook_hash(hook: Hook) -> str:
    """Codex's hash of one hook's definition (codex-rs/hooks discovery `command_hook_hash`):
    sha256 of the compact, key-sorted JSON of the event's snake-case name, the group's matcher
    and the one handler with its timeout (600 when unset, at least 1) and `async`; absent
    optional fields are left out."""
    handler = hook.entry if "hooks" not in hook.entry else hook.entry["hooks"][hook.handler]
    timeout = handler.get("timeout", handler.get("timeoutSec"))
    timeout = timeout if isinstance(timeout, int) and not isinstance(timeout, bool) else 600
    normalized: dict[str, Any] = {
        "type": "command",
        "command": hook.command,
        "timeout": max(timeout, 1),
        "async": handler.get("async") is True,
    }
    status = handler.get("statusMessage")
    if isinstance(status, str):
        normalized["statusMessage"] = status
    identity: dict[str, Any] = {"event_name": _snake(hook.event), "hooks": [normalized]}
    matcher = hook.entry.get("matcher")
    if isinstance(matcher, str):
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def _snake(event: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _gemini_trust(agent: Agent, machine: Machine, folder: Path) -> tuple[bool | None, str]:
    """Whether Gemini CLI 0.61 trusts `folder` (None: it will ask), and what decides it:
    GEMINI_CLI_TRUST_WORKSPACE, `security.folderTrust.enabled: false` in the user settings, or
    the longest rule of trustedFolders.json (beside the user settings, or
    GEMINI_CLI_TRUSTED_FOLDERS_PATH) whose folder holds this one (TRUST_PARENT: the rule's
    parent folder)."""
    env = machine.environ
    if env.get("GEMINI_RESTRICTED_MODE") == "true":
        return False, "GEMINI_RESTRICTED_MODE=true"
    if env.get("GEMINI_CLI_TRUST_WORKSPACE") in ("true", "false"):
        said = env["GEMINI_CLI_TRUST_WORKSPACE"]
        return said == "true", f"GEMINI_CLI_TRUST_WORKSPACE={said}"
    user = agent.location("user", machine, folder).path
    if user is None:
        return None, ""
    security = _json_file(user, machine).get("security")
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    if isinstance(trust, dict) and trust.get("enabled") is False:
        return True, "folder trust is off in its settings"
    rules_path = machine.env_path("GEMINI_CLI_TRUSTED_FOLDERS_PATH") or (
        user.parent / "trustedFolders.json"
    )
    rules = _json_file(rules_path, machine)
    here = Path(os.path.realpath(folder))
    best: tuple[int, object] = (-1, None)
    for rule, level in rules.items():
        where = os.path.dirname(rule) if level == "TRUST_PARENT" else rule
        effective = Path(os.path.realpath(where))
        if (here == effective or effective in here.parents) and len(rule) > best[0]:
            best = (len(rule), level)
    shown = machine.shown(rules_path)
    if best[1] == "DO_NOT_TRUST":
        return False, f"DO_NOT_TRUST in {shown}"
    if best[1] in ("TRUST_FOLDER", "TRUST_PARENT"):
        return True, f"{best[1]} in {shown}"
    return None, ""
