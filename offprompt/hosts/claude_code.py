"""Claude Code's facts (offprompt.agents.claude_code sets it up): its client name and the
button its URL dialog waits on, its tools and hook events, the files that hold its guard and its
mask, and its sandbox as the guard reads it for a masked project (DESIGN §14, §15).

The sandbox is told apart only for Claude Code's Bash tool, and only from what the agent cannot
steer: the folder the session started in (`CLAUDE_PROJECT_DIR`, which Claude Code sets in the
hook's environment and a `cd` does not change; the event's `cwd` follows the agent), and the
settings the session runs with, every layer Claude Code reads (the user's, the project's, its
local ones, the command line's `--settings` read from the running Claude Code's own arguments,
and the machine's managed settings). Whatever cannot be read is taken as outside the sandbox
(the guard blocks).
"""

from __future__ import annotations

import os
from _collections_abc import Mapping

from offprompt import jsonread, rx

TYPE_CHECKING = False
if TYPE_CHECKING:
    from offprompt.hosts.host import Host

__all__ = ["HOST"]


def _started(event: Mapping[str, object], environ: Mapping[str, str]) -> str | None:
    """The real path of the folder the session started in, when the event is Claude Code's Bash
    that may run in its sandbox; else None."""
    tool_input = event.get("tool_input")
    cwd = event.get("cwd")
    # Claude Code's event, not Codex's (which carries `turn_id` and `model`) nor another host's
    # in Claude Code's shape (camelCase `sessionId`, their own tool names).
    claude = "turn_id" not in event and "model" not in event and "session_id" in event
    if event.get("tool_name") != "Bash" or not claude:
        return None
    # A skill's shell command (PreSkillShellCommand) is not shown to run in the sandbox.
    if event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return None
    if not isinstance(tool_input, Mapping) or not isinstance(cwd, str):
        return None
    command = tool_input.get("command")
    if not isinstance(command, str) or _DAEMON.search(command):
        # A client that hands a path to a daemon outside the sandbox (`docker run -v
        # ./.env:/e`): the daemon opens the real file, whatever the sandbox shows the client.
        return None
    # The session's own start folder, not where the agent's `cd` took it: a session started
    # above a masked project reads only the settings there, which may leave the sandbox off.
    started = environ.get("CLAUDE_PROJECT_DIR")
    if not started or not os.path.isabs(started):
        return None
    return os.path.realpath(started)


def _inside(project: str, event: Mapping[str, object], environ: Mapping[str, str]) -> bool:
    """Claude Code's command line and every settings layer keep this call in the sandbox."""
    flags = _command_line(environ)
    tool_input = event.get("tool_input")
    if flags is None or not isinstance(tool_input, Mapping):
        return False
    return _in_sandbox(project, tool_input, environ, flags)


def _masked_files(environ: Mapping[str, str]) -> frozenset[str]:
    """Only what the user settings mask (Claude Code honours credentials only there)."""
    return _masked_in(_user(environ))


def _user(environ: Mapping[str, str]) -> str:
    """Claude Code's user settings file: in $CLAUDE_CONFIG_DIR when set, else ~/.claude."""
    home = environ.get("CLAUDE_CONFIG_DIR") or os.path.join(environ.get("HOME", "~"), ".claude")
    return os.path.join(os.path.expanduser(home), "settings.json")


def _masked_in(settings_path: str) -> frozenset[str]:
    """The files `sandbox.credentials.files` in `settings_path` masks (`mode: "mask"`)."""
    settings = _json(settings_path)
    sandbox = settings.get("sandbox") if isinstance(settings, dict) else None
    credentials = sandbox.get("credentials") if isinstance(sandbox, dict) else None
    entries = credentials.get("files") if isinstance(credentials, dict) else None
    return frozenset(
        os.path.realpath(e["path"])
        for e in (entries if isinstance(entries, list) else ())
        if isinstance(e, dict) and e.get("mode") == "mask" and isinstance(e.get("path"), str)
    )


def _in_sandbox(
    project: str,
    tool_input: Mapping[str, object],
    environ: Mapping[str, str],
    flags: list[object],
) -> bool:
    """Every settings layer of the session together turns the sandbox on, and either keeps
    every call in it (`allowUnsandboxedCommands: false`) or this call does not ask to leave it;
    no layer lets a command run outside it (`excludedCommands`) or reach a Unix socket
    (`allowAllUnixSockets`, `allowUnixSockets`: a daemon behind one, docker's, opens files
    outside the sandbox). `flags`: the command line's `--settings`, read as Claude Code reads
    them, above the local settings and below the managed ones."""
    layers: list[object] = [
        _json(_user(environ)),
        _json(os.path.join(project, ".claude", "settings.json")),
        _json(os.path.join(project, ".claude", "settings.local.json")),
        *flags,
        *_managed(),
    ]
    sandbox: dict[str, object] = {}
    for settings in layers:
        given = settings.get("sandbox") if isinstance(settings, dict) else None
        if given is None:
            continue
        if not isinstance(given, dict):
            return False  # a sandbox Claude Code may read otherwise than we do
        if given.get("excludedCommands"):
            return False
        network = given.get("network")
        if network is not None and not isinstance(network, dict):
            return False
        if isinstance(network, dict) and (
            network.get("allowAllUnixSockets") or network.get("allowUnixSockets")
        ):
            return False
        sandbox.update(given)  # later layers win, as Claude Code reads them
    if sandbox.get("enabled") is not True:
        return False
    return sandbox.get("allowUnsandboxedCommands") is False or not tool_input.get(
        "dangerouslyDisableSandbox"
    )


# The machine's managed settings, which outrank every other layer (Linux's place).
_MANAGED = "/etc/claude-code/managed-settings.json"
_MANAGED_DIR = "/etc/claude-code/managed-settings.d"


def _managed() -> list[object]:
    """The managed settings files' contents (the main one, then its drop-in folder's `.json`
    files in name order); one that exists but cannot be read stands as a layer that turns
    the sandbox off, so the guard blocks."""
    out: list[object] = []
    paths = [_MANAGED]
    try:
        paths += sorted(
            os.path.join(_MANAGED_DIR, n) for n in os.listdir(_MANAGED_DIR) if n.endswith(".json")
        )
    except FileNotFoundError:
        pass
    except OSError:
        out.append(_OFF)
    for path in paths:
        if os.path.lexists(path):
            settings = _json(path)
            out.append(settings if isinstance(settings, dict) else _OFF)
    return out


_OFF: dict[str, object] = {"sandbox": {"enabled": False}}

# Clients that hand a path or a command to a daemon running outside Claude Code's sandbox
# (containers, machines, services), as a word of the command, with or without a folder.
_DAEMON = rx.compile(
    r"(?<![\w.-])(?:docker|docker-compose|podman|podman-compose|nerdctl|lima|limactl|colima|"
    r"kubectl|ctr|crictl|buildah|buildctl|finch|systemctl|systemd-run|machinectl|"
    r"flatpak-spawn|busctl|dbus-send|gdbus)(?![\w.-])"
)
# How far up from the hook the running Claude Code may be (the hook's /bin/sh wrapper, the
# guard's Python, a launcher between them).
_ANCESTORS = 8


def _command_line(environ: Mapping[str, str]) -> list[object] | None:
    """The settings layers the running Claude Code's own command line adds (`--settings`, a
    JSON text or a file, in order), from `CLAUDE_PID`, which Claude Code sets in its hooks'
    environment, checked to be this hook's own ancestor. None when it cannot be read, or when
    the command line picks which layers load (`--setting-sources`): the session is then taken
    as unmasked."""
    try:
        pid = int(environ.get("CLAUDE_PID", ""))
        if not _ancestor(pid):
            return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            argv = [a.decode("utf-8", "surrogateescape") for a in f.read().split(b"\0")]
        where = os.readlink(f"/proc/{pid}/cwd")
    except (OSError, ValueError):
        return None
    layers: list[object] = []
    for i, arg in enumerate(argv):
        if arg == "--setting-sources" or arg.startswith("--setting-sources="):
            return None
        if arg == "--settings":
            layers.append(_flag_settings(argv[i + 1] if i + 1 < len(argv) else "", where))
        elif arg.startswith("--settings="):
            layers.append(_flag_settings(arg.partition("=")[2], where))
    return layers


def _flag_settings(value: str, where: str) -> object:
    """`--settings VALUE` as Claude Code reads it: JSON text, or a file's path (relative to
    its folder); what cannot be read turns the sandbox off (the guard blocks)."""
    text = value.strip()
    if text.startswith("{"):
        try:
            settings = jsonread.loads(text)
        except (ValueError, RecursionError):
            return _OFF
    else:
        settings = _json(os.path.join(where, os.path.expanduser(text)))
    return settings if isinstance(settings, dict) else _OFF


def _ancestor(pid: int) -> bool:
    """`pid` is this process or one above it, within _ANCESTORS steps."""
    here = os.getpid()
    for _ in range(_ANCESTORS):
        if here == pid:
            return True
        if here <= 1:
            return False
        with open(f"/proc/{here}/stat", "rb") as f:
            here = int(f.read().rsplit(b")", 1)[1].split()[1])
    return False


def _json(path: str) -> object:
    try:
        with open(path, "rb") as f:
            return jsonread.loads(f.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return None


HOST: Host = {
    "name": "claude-code",
    "title": "Claude Code",
    "clients": {"claude-code": "Claude Code"},
    # A 2026-07-28 dialog cannot be closed from the server: the page names the button.
    "confirm": "I'm done, continue",
    "tools": {
        "Bash": "shell",
        "Read": "file",
        "Edit": "write",
        "Write": "write",
        "MultiEdit": "write",
        "NotebookEdit": "write",
        "Grep": "grep",
        "Glob": "listing",
        "LS": "listing",
        "WebFetch": "any",
        "Task": "any",
        # Tools that read no file: their text goes to the person or the web, not a program.
        "TodoWrite": None,
        "WebSearch": None,
        "AskUserQuestion": None,
        "ExitPlanMode": None,
    },
    # Before a tool, and (2.1.332) before a skill's shell command, which carries Bash's name and
    # input and never passes through PreToolUse (measured: without it a skill's `!` command read
    # .env to the model).
    "before_tool": ("PreToolUse", "PreSkillShellCommand"),
    # Its settings (the hooks, the sandbox), in any folder, and in $CLAUDE_CONFIG_DIR.
    "guard_files": ("/.claude/settings.json", "/.claude/settings.local.json"),
    "config_dirs": ("CLAUDE_CONFIG_DIR",),
    "config_names": ("settings.json",),
    "sandbox": {"started": _started, "inside": _inside, "masked_files": _masked_files},
}
