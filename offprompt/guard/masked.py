"""DESIGN §14's masked project: the files a command sees only as stand-ins, because it runs in
Claude Code's sandbox in a project `init --mask` masked (the record beside the journal, §15).

Only Claude Code's Bash tool is told apart: its event names the project, and the project's
settings say the sandbox is on and cannot be left. Codex's event does not say whether its
command runs sandboxed, so there the guard keeps blocking (the empty set).
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
    record = _json(os.path.join(os.path.dirname(disk.journal_path(environ)), MASK_RECORD))
    projects = record.get("projects") if isinstance(record, dict) else None
    if not isinstance(projects, dict):
        return frozenset()
    real = os.path.realpath(cwd)
    key = next((k for k in projects if real == k or real.startswith(k + os.sep)), None)
    if key is None or not _in_sandbox(key, tool_input, environ):
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


def _in_sandbox(project: str, tool_input: Mapping[str, object], environ: Mapping[str, str]) -> bool:
    """The project's settings turn the sandbox on, and either keep every call in it
    (`allowUnsandboxedCommands: false`) or this call does not ask to leave it; no settings
    file lets a command run outside it (`excludedCommands`)."""
    paths = (
        _user(environ),
        os.path.join(project, ".claude", "settings.json"),
        os.path.join(project, ".claude", "settings.local.json"),
    )
    sandbox: dict[str, object] = {}
    for path in paths:
        settings = _json(path)
        given = settings.get("sandbox") if isinstance(settings, dict) else None
        if isinstance(given, dict):
            if given.get("excludedCommands"):
                return False
            sandbox.update(given)  # later files win, as Claude Code reads them
    if sandbox.get("enabled") is not True:
        return False
    return sandbox.get("allowUnsandboxedCommands") is False or not tool_input.get(
        "dangerouslyDisableSandbox"
    )


def _json(path: str) -> object:
    try:
        with open(path, "rb") as f:
            return jsonread.loads(f.read(1 << 20))
    except (OSError, ValueError, RecursionError):
        return None
