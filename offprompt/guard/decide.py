"""What the hook decides (DESIGN §14): does one tool event (a host's event before a tool, in
Claude Code's shape once the hook has read its host's dialect) read, print, copy, overwrite or
send a protected file? Each host names its tools (`offprompt.hosts`), each with the kind of
reader that reads its input (READERS); a tool no host names takes DEFAULT. Adding a way of
reading is one reader here; adding a tool is one row in its host's module.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping

from offprompt import hosts, rx
from offprompt.guard import bash, commands, implied
from offprompt.guard.check import Check
from offprompt.guard.protected import Protected

# `typing` costs the hook's start-up time (tests/guard/test_hook_imports.py): types for mypy only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import TypeAlias

    # Reads one tool's input: the protected file it would expose, or None.
    Reader: TypeAlias = Callable[[Check, Mapping[str, object]], str | None]

__all__ = ["DEFAULT", "NAME_TOOLS", "READERS", "decide", "reader", "tools"]

_PATCH_HEADER = rx.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$")


def _strings(value: object, depth: int = 0) -> Iterator[str]:
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _strings(v, depth + 1)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, depth + 1)


def _command(tool_input: Mapping[str, object]) -> object:
    return tool_input.get("command", tool_input.get("cmd"))  # Codex's exec_command: `cmd`


# --- the readers: one per way a tool's input names files --------------------------------------


def _shell(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A shell tool's command (commands.py): a script, or a list of words (`bash -c SCRIPT`)."""
    command = _command(tool_input)
    if isinstance(command, list):
        if not all(isinstance(c, str) for c in command):
            raise ValueError("command is not a list of strings")
        words = [str(c) for c in command]
        shell = len(words) >= 3 and commands.base(words[0]) in commands.SHELLS
        if shell and words[1] in ("-c", "-lc"):
            return commands.script(check, words[2])
        return commands.script(check, " ".join(_quote(w) for w in words))
    if isinstance(command, str):
        return commands.script(check, command)
    raise ValueError("a shell tool without a command")


def _command_first(read: Reader) -> Reader:
    """`read`, unless the input holds a command (`command` or `cmd`, text or a list of words):
    then it is read as a shell tool's, whatever the tool's name."""

    def first(check: Check, tool_input: Mapping[str, object]) -> str | None:
        if isinstance(_command(tool_input), str | list):
            return _shell(check, tool_input)
        return read(check, tool_input)

    return first


def _patch(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Codex's apply_patch: the files its headers add, update, delete or move to (the files
    holding the guard among them)."""
    command = _command(tool_input)
    text = command if isinstance(command, str) else tool_input.get("input", "")
    for line in str(text).splitlines():
        m = _PATCH_HEADER.match(line.strip())
        if m:
            name = m.group(1) or m.group(2)
            hit = check.path(name) or _holds_guard(check, name)
            if hit is not None:
                return hit
    return None


# The hook's own install: this package, wherever it was installed.
_INSTALL = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _holds_guard(check: Check, name: str) -> str | None:
    """`name`, when it is a file that holds the guard or the mask: a write there could take
    both away (a hook removed, the sandbox turned off, the guard's code patched). The hosts
    name theirs (`guard_files`, in any folder; `config_names` in the user folder their
    `config_dirs` variables name); the guard's own code is this install."""
    if not name:
        return None
    path = os.path.normpath(os.path.join(check.cwd, os.path.expanduser(name)))
    real = os.path.realpath(path)
    ends = tuple(e for h in hosts.HOSTS for e in h.get("guard_files", ()))
    homes = [os.environ.get(v) for h in hosts.HOSTS for v in h.get("config_dirs", ())]
    # Any host's names in any of those folders: one folder may serve two hosts.
    names = frozenset(n for h in hosts.HOSTS for n in h.get("config_names", ()))
    for p in dict.fromkeys((path, real)):
        if p.endswith(ends) or p.startswith(_INSTALL + os.sep):
            return name
        if any(h and os.path.dirname(p) == os.path.normpath(h) for h in homes):
            if os.path.basename(p) in names:
                return name
    return None


def _listing(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A tool that lists names: it never opens a file."""
    return None


@_command_first
def _search(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A search tool given a folder: every file it would open under it (search.py)."""
    from offprompt.guard import search  # a search's module, for the calls that run one

    return search.tool(check, tool_input)


@_command_first
def _many_files(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Gemini CLI's read_many_files: its `include` and `paths` are globs or names."""
    for key in ("include", "paths"):
        for text in _strings(tool_input.get(key)):
            hit = check.path(text, glob=True)
            if hit is not None:
                return hit
    return None


@_command_first
def _grep(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Claude Code's Grep: its `path` (the Copilot runtime's `paths`) and `glob`, and, given a
    folder, every file rg would open under it (search.py: one git does not ignore; hidden files
    count, as Claude Code's Grep reads them)."""
    for key in ("path", "paths", "glob"):
        for value in _strings(tool_input.get(key)):
            hit = check.path(value, glob=key == "glob" or any(c in value for c in "*?["))
            if hit is not None:
                return hit
    from offprompt.guard import search  # a search's module, for the calls that run one

    paths = [p for p in _strings(tool_input.get("path", tool_input.get("paths"))) if p] or [""]
    glob = tool_input.get("glob")
    base = check.cwd
    for path in paths:
        check.cwd = base
        folder = {"path": path, "include": glob} if isinstance(glob, str) else {"path": path}
        if os.path.isdir(os.path.join(base, path)):
            hit = search.tool(check, folder)
            if hit is not None:
                return hit
    return None


@_command_first
def _write(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A tool that writes one file (Write, Edit, MultiEdit, NotebookEdit): its path, a
    protected file or one that holds the guard. The text it writes is not read: it goes to
    that file, not to the model (`.env` added to `.gitignore`)."""
    for key in ("file_path", "notebook_path", "path"):
        for text in _strings(tool_input.get(key)):
            hit = check.path(text) or _holds_guard(check, text)
            if hit is not None:
                return hit
    return None


@_command_first
def _file_tool(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """A file tool: every string of its input is a file's name (`pattern`, `glob`: a glob)."""
    for key, value in tool_input.items():
        for text in _strings(value):
            hit = check.path(text, glob=key in ("pattern", "glob"))
            if hit is not None:
                return hit
    return None


@_command_first
def _any_name(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Any other tool (an MCP file server's `read_file`, WebFetch's `file://`): any string of
    its input that is itself a protected file's name, and the input that is code or a command
    (another MCP server's `code`, `script`, `sql`, `commandLine`…) read as code."""
    for key, value in tool_input.items():
        code = key.replace("_", "").replace("-", "").lower() in _CODE_KEYS
        for text in _strings(value):
            hit = check.path(text)
            if hit is None and code:
                hit = _code(check, text)
            if hit is not None:
                return hit
    return None


@_command_first
def _names(check: Check, tool_input: Mapping[str, object]) -> str | None:
    """Another MCP server's search or listing of file names (NAME_TOOLS): it returns names and
    metadata, never a file's bytes, so the names it is given are not reads; an input that is
    code or a command is still read as code."""
    for key, value in tool_input.items():
        if key.replace("_", "").replace("-", "").lower() in _CODE_KEYS:
            for text in _strings(value):
                hit = _code(check, text)
                if hit is not None:
                    return hit
    return None


# Other MCP servers' tools that find or list files by name (the filesystem server's, and the
# same names elsewhere), as the tool's own name after the server's prefix.
NAME_TOOLS = frozenset(
    {"search_files", "find_files", "list_directory", "list_directory_with_sizes",
     "directory_tree", "list_allowed_directories", "get_file_info"}
)  # fmt: skip
# What separates a server's name from its tool's: `mcp__fs__x`, `fs__x`, `fs.x`, `fs/x`, `mcp:x`.
_SERVER_SEPARATOR = rx.compile(r"__|[.:/]")

# The inputs another MCP server runs as code or a command (lower case, no `_` or `-`).
_CODE_KEYS = frozenset(
    {"code", "script", "source", "sql", "expression", "commandline", "program", "js",
     "python", "shell", "statement", "snippet"}
)  # fmt: skip


def _code(check: Check, text: str) -> str | None:
    """A protected file code of any language names or opens: read as a shell command, and as
    code whose strings and calls name it (`readFileSync('.env')`, `load_dotenv()`)."""
    try:
        hit = commands.script(check, text)
    except bash.ShellSyntax:
        hit = None
    return hit or check.fragments(text) or implied.code("python", text)


# --- the table ---------------------------------------------------------------------------------

# The row of every tool no host names: another MCP server's (`mcp__fs__read_file`, Cursor's and
# Windsurf's `mcp:NAME`), a host's tool not named here.
DEFAULT: Reader = _any_name

# offprompt's own MCP tools (DESIGN §14: never blocked): they take a file's name and return key
# names and states, never a value. As the hosts name them: `mcp__offprompt__secret_status`
# (Claude Code, Codex), `offprompt__secret_status`, `offprompt.secret_status`, `offprompt/…`,
# `offprompt:…`. Their row is None: nothing of the event is read.
_OWN_TOOLS = {
    f"{prefix}offprompt{sep}{name}": None
    for prefix in ("", "mcp__")
    for sep in ("__", ".", "/", ":")
    for name in ("collect_secret", "await_secret", "cancel_secret", "secret_status")
}

# The kinds of reader a host's tool names (`offprompt.hosts`: a host's `tools`).
READERS: dict[str, Reader] = {
    "shell": _shell,  # a command
    "file": _file_tool,  # every string of its input a file's name
    "write": _write,  # the one file it writes
    "grep": _grep,  # Claude Code's Grep: a path, a glob, a folder searched
    "search": _search,  # a folder searched
    "listing": _listing,  # names listed, no file opened
    "patch": _patch,  # Codex's apply_patch
    "many": _many_files,  # Gemini CLI's read_many_files
    "any": _any_name,  # any string of its input that names a protected file
}

# The table built from the hosts registered when it was built: (HOSTS, table).
_BUILT: list[tuple[object, dict[str, Reader | None]]] = []


def tools() -> dict[str, Reader | None]:
    """Tool name → the reader of its input (None: let through unread): every host's tools
    (the first host in `hosts.HOSTS` that names a tool says how it is read) and offprompt's
    own. A kind no reader has is read by DEFAULT."""
    if _BUILT and _BUILT[0][0] is hosts.HOSTS:
        return _BUILT[0][1]
    table: dict[str, Reader | None] = {}
    for host in hosts.HOSTS:
        for tool, kind in host.get("tools", {}).items():
            if tool not in table:
                table[tool] = None if kind is None else READERS.get(kind, DEFAULT)
    table.update(_OWN_TOOLS)
    _BUILT[:] = [(hosts.HOSTS, table)]
    return table


def reader(tool: str) -> Reader | None:
    """The reader of `tool`'s input: its row in `tools()`, else a name search's (NAME_TOOLS),
    else DEFAULT."""
    table = tools()
    if tool in table:
        return table[tool]
    if _SERVER_SEPARATOR.split(tool)[-1] in NAME_TOOLS:
        return _names
    return DEFAULT


def decide(
    event: Mapping[str, object],
    protected: Protected,
    home: str,
    masked: frozenset[str] = frozenset(),
) -> str | None:
    """The protected file this tool call would expose, or None to let it through.

    `event` is the hook's JSON (`tool_name`, `tool_input`, `cwd`); ValueError/TypeError or
    ShellSyntax when it is not a tool event the rules understand. `masked`: the files a
    command run in a masked project's sandbox sees as stand-ins (masked.py): a name that
    leads only to them is left to the mask (DESIGN §14), any other still blocks.
    """
    before = event.get("hook_event_name", "PreToolUse")
    if not any(before in h.get("before_tool", ()) for h in hosts.HOSTS):
        return None
    tool = event.get("tool_name")
    tool_input = event.get("tool_input")
    if not isinstance(tool, str) or not isinstance(tool_input, Mapping):
        raise ValueError("not a tool event")
    read = reader(tool)
    if read is None:
        return None
    cwd = event.get("cwd")
    # Codex's `workdir`, Gemini CLI's `dir_path` (the shell's folder, or the one searched).
    workdir = tool_input.get("workdir") or tool_input.get("cwd") or tool_input.get("dir_path")
    base = cwd if isinstance(cwd, str) and os.path.isabs(cwd) else os.getcwd()
    if isinstance(workdir, str) and workdir:
        base = os.path.join(base, workdir)
    check = Check(base, home, protected, [base])
    check.left = masked
    return read(check, tool_input)


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"
