"""One way to touch a disk (DESIGN §2): the calls that create, fill, fsync or move a file are
made in `offprompt/disk/` and nowhere else, save the few places named here with why. Read from
the source, so a sixth write loop or an `os.replace` by name in a new module fails."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "offprompt"

# The calls that put bytes on a disk or move a file there.
WRITING_CALLS = frozenset(
    {"os.fsync", "os.replace", "os.rename", "os.ftruncate", "os.write", "os.fchmod", "os.fchown"}
)
WRITING_METHODS = frozenset({"write_bytes", "write_text"})
WRITING_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"})

# (module, call) pairs outside disk/ that stay, each for a reason a reader can check.
ELSEWHERE = {
    # A user-level agent config replaced after its temp file was written by disk.walk.write_new.
    ("offprompt/agents/files.py", "os.replace"),
    # The cloudflared download, into its own cache folder outside every project.
    ("offprompt/tunnel/binary.py", "os.replace"),
    ("offprompt/tunnel/binary.py", "open for writing"),
    # The protocol's own stdout and the hook's answer: pipes, not files.
    ("offprompt/mcp/stdio.py", "os.write"),
    ("offprompt/guard/hook.py", "os.write"),
    # A deploy program's pinned config, names and ids only, in a private temp folder.
    ("offprompt/sinks/destinations/__init__.py", "write_bytes"),
    # The developers' generator of tools/listing.json (`python -m offprompt.tools.listing`).
    ("offprompt/tools/listing.py", "write_text"),
    # The developers' generator of the guard's pattern table (`python -m offprompt.rx_write`).
    ("offprompt/rx_write.py", "write_text"),
    # The keyring's list of saved names in offprompt's state dir, replaced after its temp file
    # was written by disk.walk.write_new.
    ("offprompt/oskeyring.py", "os.replace"),
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def writing_calls(source: str) -> list[tuple[str, int]]:
    """Each call in `source` that writes to a disk, with its line: the os calls above, a
    `write_bytes`/`write_text`, an `open(…, "w…")`, and an `os.open` with a writing flag."""
    found: list[tuple[str, int]] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name in WRITING_CALLS:
            found.append((name, node.lineno))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in WRITING_METHODS:
            found.append((node.func.attr, node.lineno))
        elif name == "os.open" and any(
            isinstance(n, ast.Attribute) and n.attr in WRITING_FLAGS
            for arg in node.args[1:2]
            for n in ast.walk(arg)
        ):
            found.append(("os.open for writing", node.lineno))
        elif name.endswith("open") and any(
            isinstance(arg, ast.Constant)
            and isinstance(arg.value, str)
            and bool(set(arg.value) & set("wax+"))
            # open(path, mode), but path.open(mode)
            for arg in [
                *node.args[(0 if isinstance(node.func, ast.Attribute) else 1) :][:1],
                *(k.value for k in node.keywords if k.arg == "mode"),
            ]
        ):
            found.append(("open for writing", node.lineno))
    return found


def test_the_reader_finds_each_way_of_writing() -> None:
    """The check below sees every form it rules out (and not a read)."""
    source = (
        "import os\n"
        "os.fsync(fd)\n"
        "os.replace(a, b)\n"
        "fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)\n"
        "Path(p).write_text('x')\n"
        "open(p, 'wb')\n"
        "p.open(mode='a')\n"
        "q.open('wb')\n"
        "os.open(p, os.O_RDONLY)\n"
        "open(p, 'rb')\n"
    )
    assert [n for n, _ in writing_calls(source)] == [
        "os.fsync",
        "os.replace",
        "os.open for writing",
        "write_text",
        "open for writing",
        "open for writing",
        "open for writing",
    ]


def test_files_are_written_only_through_disk() -> None:
    """No module outside offprompt/disk writes, fsyncs or moves a file itself, save those named
    in ELSEWHERE: a write into a project goes through the descriptor walk."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("offprompt/disk/"):
            continue
        for name, line in writing_calls(path.read_text(encoding="utf-8")):
            if (rel, name) not in ELSEWHERE:
                wrong.append(f"{rel}:{line} {name}")
    assert [] == wrong


def test_every_exception_is_still_there() -> None:
    """ELSEWHERE names only calls that exist: a place that moved to disk/ leaves the list."""
    present = {
        (path.relative_to(ROOT).as_posix(), name)
        for path in PACKAGE.rglob("*.py")
        for name, _ in writing_calls(path.read_text(encoding="utf-8"))
    }
    assert set() == ELSEWHERE - present
