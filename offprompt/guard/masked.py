"""DESIGN §14's masked project: the files a command sees only as stand-ins, because it runs in
Claude Code's sandbox in a session started in a project `init --mask` masked (the record beside
the journal, §15).

Only Claude Code's Bash tool is told apart, and only from what the agent cannot steer: the
folder the session started in (`CLAUDE_PROJECT_DIR`, which Claude Code sets in the hook's
environment and a `cd` does not change; the event's `cwd` follows the agent), and the settings
the session runs with, every layer Claude Code reads (the user's, the project's, its local ones,
the command line's `--settings` read from the running Claude Code's own arguments, and the
machine's managed settings). Whatever cannot be read is taken as unmasked (the guard blocks).
Codex's event does not say whether its command runs sandboxed, so there the guard keeps
blocking (the empty set).
"""

from __future__ import annotations

import os
from _collections_abc import Mapping

from offprompt import rx
from offprompt.guard import disk, jsonread

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

__all__ = ["MASK_RECORD", "covered", "sandboxed_reads"]

MASK_RECORD = "mask.json"  # offprompt.statedir.MASK_RECORD, beside the journal


def sandboxed_reads(event: Mapping[str, object], environ: Mapping[str, str]) -> frozenset[str]:
    """The files (absolute, real paths) the mask covers for this event's command, when it is
    Claude Code's Bash run in the sandbox of a masked project; else the empty set."""
    tool_input = event.get("tool_input")
    cwd = event.get("cwd")
    # Claude Code's event, not Codex's (which carries `turn_id` and `model`) nor another host's
    # in Claude Code's shape (camelCase `sessionId`, their own tool names).
    claude = "turn_id" not in event and "model" not in event and "session_id" in event
    if event.get("tool_name") != "Bash" or not claude:
        return frozenset()
    # A skill's shell command (PreSkillShellCommand) is not shown to run in the sandbox.
    if event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        return frozenset()
    if not isinstance(tool_input, Mapping) or not isinstance(cwd, str):
        return frozenset()
    command = tool_input.get("command")
    if not isinstance(command, str) or _DAEMON.search(command):
        # A client that hands a path to a daemon outside the sandbox (`docker run -v
        # ./.env:/e`): the daemon opens the real file, whatever the sandbox shows the client.
        return frozenset()
    record = _json(os.path.join(os.path.dirname(disk.journal_path(environ)), MASK_RECORD))
    projects = record.get("projects") if isinstance(record, dict) else None
    if not isinstance(projects, dict):
        return frozenset()
    # The session's own start folder, not where the agent's `cd` took it: a session started
    # above a masked project reads only the settings there, which may leave the sandbox off.
    started = environ.get("CLAUDE_PROJECT_DIR")
    if not started or not os.path.isabs(started):
        return frozenset()
    key = os.path.realpath(started)
    if key not in projects:
        return frozenset()
    flags = _command_line(environ)
    if flags is None or not _in_sandbox(key, tool_input, environ, flags):
        return frozenset()
    return covered(projects[key], environ)


def covered(project: object, environ: Mapping[str, str]) -> frozenset[str]:
    """The files (absolute, real paths) of one masked project (its value in the record's
    `projects`) whose every value the sandbox shows as a stand-in."""
    files = project.get("files") if isinstance(project, dict) else None
    if not isinstance(files, dict):
        return frozenset()
    # Only what the user settings still mask (Claude Code honours credentials only there): a
    # file whose entry a failed write never added, or the person took out, is read in clear.
    # And only a file every value of which the mask hides: a key offprompt did not write there
    # is outside the entry's `extract`, so the sandbox shows it as it is.
    masked = _masked_in(_user(environ))
    return frozenset(
        real
        for path, names in files.items()
        if (real := os.path.realpath(path)) in masked and _all_masked(real, names)
    )


# A dotenv line that assigns a name (as python-dotenv, bash and Node read one), a comment or a
# blank line; any other line could be a value offprompt did not write, so the file is not left
# to the mask. Compiled on first use: every call of Claude Code loads this module, and few are in
# a masked project (tests/guard/test_hook_start.py).
@rx.cache
def _assigns() -> re.Pattern[bytes]:
    return rx.compile(rb"[ \t]*(?:export[ \t]+)?([A-Za-z_][A-Za-z0-9_.]*)[ \t]*=")


@rx.cache
def _quiet() -> re.Pattern[bytes]:
    return rx.compile(rb"[ \t]*(?:#.*)?")


_MOST = 1 << 20


def _all_masked(path: str, names: object) -> bool:
    """Whether every value in `path` is one offprompt wrote there (`names`; None: a file sink,
    masked whole). A file that cannot be read, is large, or holds another line: False."""
    if names is None:
        return True
    if not isinstance(names, list):
        return False
    try:
        with open(path, "rb") as f:
            data = f.read(_MOST + 1)
    except OSError:
        return False
    if len(data) > _MOST:
        return False
    mine = {n.encode() for n in names if isinstance(n, str)}
    assigns, quiet = _assigns(), _quiet()
    for line in data.splitlines():
        found = assigns.match(line)
        if found is not None:
            if found.group(1) not in mine:
                return False
        elif not quiet.fullmatch(line):
            return False
    return True


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
