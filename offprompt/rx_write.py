"""Writes `rx/_table.py`, the code `re` compiles the guard's patterns to, for rx
(`python -m offprompt.rx_write --write`; `--check` exits 1 unless the table is current).

The patterns are those the guard's modules (rx.MODULES) compile as they load, and every
pattern or glob they pass to rx's functions that can be read from the module alone (a
constant, a module's name); a pattern made from a command at run time is left to `re`.
Never loaded by the hook.
"""

from __future__ import annotations

import _sre  # type: ignore[import-not-found]
import ast
import fnmatch
import importlib
import inspect
import sys
from pathlib import Path

from offprompt import rx

__all__ = ["entry", "main", "patterns", "table_text"]

_TABLE = Path(rx.__file__).with_name("_table.py")
# rx's functions and the place of their pattern among the arguments, and of the flags.
_PATTERN_AT = {"compile": (0, 1), "search": (0, 2), "match": (0, 2), "fullmatch": (0, 2)}
_PATTERN_AT |= {"sub": (0, 4), "split": (0, 3)}
_GLOB_AT = {"glob": 0, "fnmatchcase": 1}

Entry = tuple[tuple[int, ...], int, int, dict[str, int], tuple[str | None, ...]]


def entry(pattern: str | bytes, flags: int) -> Entry:
    """What `re._compiler.compile` hands `_sre.compile` for `pattern` (bar the pattern)."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    p = _parser.parse(pattern, flags)
    code = _compiler._code(p, flags)
    groupindex = dict(p.state.groupdict)
    indexgroup: list[str | None] = [None] * p.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    code = tuple(int(c) for c in code)
    return code, flags | p.state.flags, p.state.groups - 1, groupindex, tuple(indexgroup)


def _evaluated(node: ast.expr | None, namespace: dict[str, object]) -> object:
    if node is None:
        return None
    try:
        return eval(compile(ast.Expression(node), "<rx>", "eval"), namespace)  # noqa: S307
    except Exception:
        return None  # made from names the module does not hold: a pattern built at run time


def _argument(call: ast.Call, at: int, name: str) -> ast.expr | None:
    if at < len(call.args):
        return call.args[at]
    return next((k.value for k in call.keywords if k.arg == name), None)


def patterns() -> tuple[set[tuple[str | bytes, int]], set[str]]:
    """The guard's patterns (with their flags) and globs: those compiled as its modules load
    (run with the table unused) and those its calls of rx name by a constant."""
    rx._USABLE = False
    for name in rx.MODULES:
        importlib.import_module(name)
    found = {k for k in rx.MISSED if k[1] >= 0}
    globs = {str(k[0]) for k in rx.MISSED if k[1] < 0}
    for name in rx.MODULES:
        module = sys.modules[name]
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "rx"
            ):
                continue
            space = dict(vars(module))
            if node.func.attr in _PATTERN_AT:
                at, flags_at = _PATTERN_AT[node.func.attr]
                pattern = _evaluated(_argument(node, at, "pattern"), space)
                flags = _evaluated(_argument(node, flags_at, "flags"), space) or 0
                if isinstance(pattern, str | bytes) and isinstance(flags, int):
                    found.add((pattern, int(flags)))
            elif node.func.attr in _GLOB_AT:
                glob = _evaluated(_argument(node, _GLOB_AT[node.func.attr], "pattern"), space)
                if isinstance(glob, str):
                    globs.add(glob)
    found |= {(fnmatch.translate(g), 0) for g in globs}
    return found, globs


def table_text() -> str:
    """The text of `rx/_table.py` for the running Python."""
    found, globs = patterns()
    lines = [
        '"""Made by `python -m offprompt.rx_write --write` (rx.py); do not edit."""',
        "",
        "from __future__ import annotations",
        "",
        f"MAGIC = {_sre.MAGIC!r}",
        f"VERSION = {tuple(sys.version_info[:2])!r}",
        "GLOBS: dict[str, str] = {",
        *(f"    {g!r}: {fnmatch.translate(g)!r}," for g in sorted(globs)),
        "}",
        "PATTERNS: dict[",
        "    tuple[str | bytes, int],",
        "    tuple[tuple[int, ...], int, int, dict[str, int], tuple[str | None, ...]],",
        "] = {",
    ]
    for pattern, flags in sorted(found, key=lambda k: (isinstance(k[0], bytes), repr(k))):
        lines.append(f"    ({pattern!r}, {flags!r}): {entry(pattern, flags)!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = table_text()
    if argv == ["--write"]:
        from offprompt.disk import paths

        paths.replace_file(_TABLE, text.encode("utf-8"), mode=None)
        return 0
    if argv == ["--check"]:
        current = _TABLE.read_text() == text
        if not current:
            sys.stderr.write(
                "offprompt/rx/_table.py is stale: run `python -m offprompt.rx_write --write`\n"
            )
        return 0 if current else 1
    sys.stderr.write("usage: python -m offprompt.rx_write --write | --check\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
