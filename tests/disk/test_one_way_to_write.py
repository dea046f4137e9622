"""One way to touch a disk (DESIGN §2): the calls that create, fill, fsync, move, remove or
re-mode a file or folder are made in `offprompt/disk/` and nowhere else, save the writes to pipes
named here. Read from the source, so a new write loop, an `os.replace`, a `shutil` call or a
`Path.unlink` by name in any module outside disk/ fails."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "offprompt"

# The calls that put bytes on a disk, move, make, remove or re-mode a file or folder there.
WRITING_CALLS = frozenset(
    {
        *(
            f"os.{name}"
            for name in (
                "fsync",
                "replace",
                "rename",
                "renames",
                "ftruncate",
                "truncate",
                "write",
                "pwrite",
                "fchmod",
                "fchown",
                "chmod",
                "chown",
                "lchown",
                "unlink",
                "remove",
                "rmdir",
                "removedirs",
                "mkdir",
                "makedirs",
                "symlink",
                "link",
                "utime",
                "mkfifo",
            )
        ),
        # tempfile's forms that leave a file or folder on disk (gettempdir does not).
        "tempfile.mkstemp",
        "tempfile.mkdtemp",
        "tempfile.NamedTemporaryFile",
        "tempfile.TemporaryDirectory",
    }
)
# Every shutil call copies, moves or removes something; `shutil.which` only reads, so it stays.
SHUTIL_READS = frozenset({"shutil.which", "shutil.get_terminal_size", "shutil.disk_usage"})
# Path's methods that change the disk. `replace`, `rename`, `touch` and `chmod` are also names of
# str's or other types' methods: the reader flags them on any object, and a false alarm is fixed
# by going through disk/. `replace` is told apart by its arguments (see `_is_other_replace`).
WRITING_METHODS = frozenset(
    {
        "write_bytes",
        "write_text",
        "unlink",
        "rmdir",
        "mkdir",
        "touch",
        "chmod",
        "rename",
        "replace",
        "symlink_to",
        "hardlink_to",
    }
)
WRITING_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"})

# (module, call) pairs outside disk/ that stay: writes that are not files, each for a reason a
# reader can check. Everything offprompt puts on a disk (values, journal, config, mask entries,
# undo records, its state and cache, the developers' generated files) goes through disk/.
ELSEWHERE = {
    # The protocol's own stdout and the hook's answer: pipes, not files.
    ("offprompt/mcp/stdio.py", "os.write"),
    ("offprompt/guard/hook.py", "os.write"),
}


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _is_other_replace(node: ast.Call) -> bool:
    """`text.replace(old, new)`, `when.replace(tzinfo=…)`, `dataclasses.replace(x, a=…)`: not
    `path.replace(target)`, which takes one argument and no keyword."""
    return (
        isinstance(node.func, ast.Attribute)
        and node.func.attr == "replace"
        and (len(node.args) != 1 or bool(node.keywords))
    )


def _writes_open(node: ast.Call, name: str) -> bool:
    """`open(path, mode)`, `path.open(mode)`, `os.fdopen(fd, mode)` with a mode that writes."""
    if not name.endswith("open") or name == "os.open":
        return False
    at = 0 if isinstance(node.func, ast.Attribute) and name not in ("os.fdopen", "io.open") else 1
    modes = [*node.args[at:][:1], *(k.value for k in node.keywords if k.arg == "mode")]
    return any(
        isinstance(arg, ast.Constant)
        and isinstance(arg.value, str)
        and bool(set(arg.value) & set("wax+"))
        for arg in modes
    )


def writing_calls(source: str) -> list[tuple[str, int]]:
    """Each call in `source` that changes a disk, with its line, in order: the os, shutil and
    tempfile calls above, Path's writing methods, an `open(…, "w…")`, and an `os.open` with a
    writing flag (a writing `os.O_…` flag named anywhere counts, so flags kept in a variable
    are seen too)."""
    found: set[tuple[str, int]] = set()
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Attribute)
            and node.attr in WRITING_FLAGS
            and _dotted(node.value) == "os"
        ):
            found.add(("os.open for writing", node.lineno))
        if not isinstance(node, ast.Call):
            continue
        name = _dotted(node.func)
        if name in WRITING_CALLS:
            found.add((name, node.lineno))
        elif name.startswith("shutil.") and name not in SHUTIL_READS:
            found.add((name, node.lineno))
        elif (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in WRITING_METHODS
            and not _is_other_replace(node)
        ):
            found.add((node.func.attr, node.lineno))
        elif _writes_open(node, name):
            found.add(("open for writing", node.lineno))
    return sorted(found, key=lambda item: (item[1], item[0]))


def test_the_reader_finds_each_way_of_writing() -> None:
    """The check below sees every form it rules out (and not a read)."""
    writes = [
        ("os.fsync(fd)", "os.fsync"),
        ("os.replace(a, b)", "os.replace"),
        ("fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o600)", "os.open for writing"),
        ("flags = os.O_RDONLY | os.O_APPEND", "os.open for writing"),
        ("Path(p).write_text('x')", "write_text"),
        ("p.write_bytes(b'x')", "write_bytes"),
        ("open(p, 'wb')", "open for writing"),
        ("open(p, 'r+')", "open for writing"),
        ("p.open(mode='a')", "open for writing"),
        ("q.open('xb')", "open for writing"),
        ("os.fdopen(fd, 'w')", "open for writing"),
        *(
            (f"os.{call}(p)", f"os.{call}")
            for call in (
                "unlink",
                "remove",
                "rmdir",
                "removedirs",
                "mkdir",
                "makedirs",
                "chmod",
                "chown",
                "lchown",
                "symlink",
                "link",
                "truncate",
                "utime",
                "mkfifo",
                "rename",
                "renames",
                "ftruncate",
                "fchmod",
                "fchown",
                "write",
                "pwrite",
            )
        ),
        ("shutil.copyfile(a, b)", "shutil.copyfile"),
        ("shutil.rmtree(d)", "shutil.rmtree"),
        ("shutil.move(a, b)", "shutil.move"),
        ("shutil.copy2(a, b)", "shutil.copy2"),
        ("tempfile.mkstemp()", "tempfile.mkstemp"),
        ("tempfile.mkdtemp()", "tempfile.mkdtemp"),
        ("tempfile.NamedTemporaryFile()", "tempfile.NamedTemporaryFile"),
        ("tempfile.TemporaryDirectory()", "tempfile.TemporaryDirectory"),
        *(
            (f"p.{method}(x)", method)
            for method in (
                "unlink",
                "rmdir",
                "mkdir",
                "touch",
                "chmod",
                "rename",
                "replace",
                "symlink_to",
                "hardlink_to",
            )
        ),
    ]
    reads = [
        "os.open(p, os.O_RDONLY)",
        "open(p, 'rb')",
        "p.open()",
        "os.fdopen(fd, 'rb')",
        "shutil.which('git')",
        "tempfile.gettempdir()",
        "name.replace('-', '_')",
        "when.replace(tzinfo=UTC)",
        "dataclasses.replace(x, deny=False)",
        "os.stat(p)",
        "os.listdir(p)",
        "p.read_text()",
    ]
    source = "\n".join(line for line, _ in writes) + "\n" + "\n".join(reads) + "\n"
    assert [name for _, name in writes] == [n for n, _ in writing_calls(source)]


def test_files_are_written_only_through_disk() -> None:
    """No module outside offprompt/disk writes, fsyncs, moves, removes or makes a file or folder
    itself, save the pipes named in ELSEWHERE: a write into a project goes through the
    descriptor walk, every other file through disk.paths."""
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
