"""The house's plan holds in the code (DESIGN §2): no import circle, no arrow the table forbids,
and no module past ~500 lines. Read from the source, so a new import that breaks the plan fails."""

from __future__ import annotations

import ast
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "offprompt"
MAX_LINES = 500


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_only: bool = False
    """Under `if TYPE_CHECKING:`: never imported at run time, but a dependency all the same
    (a circle of annotations is a circle of the design)."""
    implicit: bool = False
    """Not named by the import but run by it: the `__init__` of a package a dotted import passes
    through (`import a.b.c` runs `a.b` first)."""


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _owner(name: str, known: Collection[str]) -> str | None:
    """The module an import of `name` loads (a package's submodule, else the package)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _targets(
    module: str, node: ast.Import | ast.ImportFrom, is_package: bool, known: Collection[str]
) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    if node.level:
        base = module.split(".")
        if not is_package:
            base.pop()
        base = base[: len(base) - (node.level - 1)]
        prefix = ".".join([*base, *([node.module] if node.module else [])])
    else:
        prefix = node.module or ""
    for alias in node.names:
        candidate = f"{prefix}.{alias.name}"
        yield candidate if candidate in known else prefix


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _passed_through(source: str, target: str, packages: Collection[str]) -> list[str]:
    """The packages whose `__init__` an import of `target` from `source` runs before it: each
    package above `target`, less those above `source` (loaded before `source` itself ran)."""
    above = target.split(".")[:-1]
    mine = source.split(".")
    return [
        name
        for i in range(1, len(above) + 1)
        if (name := ".".join(above[:i])) in packages and above[:i] != mine[:i]
    ]


def read_edges(sources: Mapping[str, str], packages: Collection[str]) -> list[Edge]:
    """The import arrows of the modules in `sources` (module name: its code; `packages` are the
    names whose code is a package's `__init__`): at the top, inside functions and under
    TYPE_CHECKING, and to each package `__init__` a dotted import runs on its way."""
    edges: list[Edge] = []
    for module, source in sources.items():
        tree = ast.parse(source)
        is_package = module in packages
        root = module.split(".")[0]

        def walk(
            node: ast.AST,
            module: str = module,
            is_package: bool = is_package,
            root: str = root,
            type_only: bool = False,
        ) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child):
                    walk(child, type_only=True)  # annotations only: never imported at run time
                    continue
                if isinstance(child, ast.Import | ast.ImportFrom):
                    for name in _targets(module, child, is_package, sources):
                        ours = name == root or name.startswith(root + ".")
                        target = _owner(name, sources) if ours else name
                        if not target or target == module:
                            continue
                        edges.append(Edge(module, target, child.lineno, type_only))
                        edges.extend(
                            Edge(module, package, child.lineno, type_only, implicit=True)
                            for package in _passed_through(module, target, packages)
                            if package != module
                        )
                    continue
                walk(child, type_only=type_only)  # an import inside a function all the same

        walk(tree)
    return edges


ALL_EDGES = read_edges(
    {m: p.read_text(encoding="utf-8") for m, p in MODULES.items()},
    {m for m, p in MODULES.items() if p.name == "__init__.py"},
)
EDGES = [e for e in ALL_EDGES if not e.type_only]
"""What runs: the rules of the table below hold for these; circles are looked for in all."""


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for edge in ALL_EDGES:
        if edge.target in MODULES:
            graph[edge.source].add(edge.target)
    return graph


def room_of(module: str) -> str:
    """The room a module stands in: a package under offprompt/ (`offprompt.write`), or a loose
    top-level module (`offprompt.status`); the package's own face is `offprompt`."""
    return ".".join(module.split(".")[:2])


def _rooms() -> dict[str, set[str]]:
    rooms: dict[str, set[str]] = {room_of(m): set() for m in MODULES}
    for edge in ALL_EDGES:
        if edge.target in MODULES and room_of(edge.source) != room_of(edge.target):
            rooms[room_of(edge.source)].add(room_of(edge.target))
    return rooms


def floors(graph: dict[str, set[str]]) -> dict[str, int]:
    """Each room's floor: 1 for a room that imports no other, else one above the highest it
    imports (the graph must have no circle)."""
    found: dict[str, int] = {}

    def floor(room: str) -> int:
        if room not in found:
            found[room] = 1 + max((floor(r) for r in graph[room]), default=0)
        return found[room]

    for room in graph:
        floor(room)
    return found


MAX_FLOORS = 12


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return found


def _inside(name: str, room: str) -> bool:
    return name == room or name.startswith(room + ".")


def test_the_circle_finder_finds_a_ring_and_leaves_a_line_alone() -> None:
    """The finder below is itself right: a ring of three is one circle, a chain is none."""
    ring = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert [["a", "b", "c"]] == cycles(ring)
    assert [] == cycles({"a": {"b"}, "b": {"c"}, "c": set()})


def test_the_floor_counter_counts_the_longest_way_down() -> None:
    """A room stands one floor above the highest room it imports."""
    assert {"a": 3, "b": 2, "c": 1, "d": 1} == floors(
        {"a": {"b", "d"}, "b": {"c"}, "c": set(), "d": set()}
    )


def test_no_circle_between_rooms_and_at_most_twelve_floors() -> None:
    """Rooms import one another one way only (type-only imports included), so the house has
    floors, and no more than twelve of them: the flow from a door down to the disk stays short
    enough to read (DESIGN §2)."""
    rooms = _rooms()
    assert [] == cycles(rooms)
    tallest = max(floors(rooms).items(), key=lambda item: item[1])
    assert tallest[1] <= MAX_FLOORS, f"{tallest[0]} stands on floor {tallest[1]}"


def test_type_only_imports_are_read() -> None:
    """An import under `if TYPE_CHECKING:` is among the arrows circles are looked for in."""
    assert any(e.type_only for e in ALL_EDGES)
    assert all(not e.type_only for e in EDGES)


# A made-up package: `p` registers `p.host`, whose declaration takes a name from `p.kit`'s
# module `p.kit.part`; importing that runs `p.kit`'s `__init__` first, and it imports `p` back
# inside a function. No import names `p.kit` alone, yet the circle is there at run time.
MADE_UP = {
    "p": "from p.host import HOST\n",
    "p.host": "from p.kit.part import PART\nfrom p.other import X\nHOST = PART\n",
    "p.kit": "def hosts():\n    from p import HOST\n    return HOST\n",
    "p.kit.part": "PART = 1\n",
    "p.other": "X = 1\n",
}


def test_a_dotted_import_runs_the_packages_it_passes_through() -> None:
    """`from p.kit.part import …` is an arrow to `p.kit` too (its `__init__` runs first), so a
    circle closed through a package's `__init__` is found; the importer's own packages (`p`
    for `p.host`) are loaded before it and add no arrow."""
    edges = read_edges(MADE_UP, {"p", "p.kit"})
    pairs = {(e.source, e.target, e.implicit) for e in edges}
    assert ("p.host", "p.kit", True) in pairs
    assert ("p.host", "p.kit.part", False) in pairs
    assert not any(e.source == "p.host" and e.target == "p" for e in edges)
    graph: dict[str, set[str]] = {m: set() for m in MADE_UP}
    for e in edges:
        graph[e.source].add(e.target)
    assert [["p", "p.host", "p.kit"]] == cycles(graph)
    named = {m: set() for m in MADE_UP} | {
        s: {e.target for e in edges if e.source == s and not e.implicit} for s in MADE_UP
    }
    assert [] == cycles(named)  # what the reader saw before it read the packages passed through
    # And in the code: Codex's declaration takes its mask from agents/mask/, running its __init__.
    real = {(e.source, e.target) for e in ALL_EDGES if e.implicit}
    assert ("offprompt.agents.codex", "offprompt.agents.mask") in real


def test_no_import_circle() -> None:
    """No two modules import each other, directly or round a ring, even through a late import
    or an annotation (a circle broken by importing inside a function, or by hiding one side
    under TYPE_CHECKING, is still a circle)."""
    assert [] == cycles(_graph())


def test_the_graph_is_read_from_the_code() -> None:
    """The edges are real: a few imports every reader can check by eye are among them."""
    pairs = {(e.source, e.target) for e in EDGES}
    assert {
        ("offprompt.collect.core", "offprompt.collect.steps"),
        ("offprompt.page.server", "offprompt.store"),
        ("offprompt.guard.hook", "offprompt.guard.decide"),
    } <= pairs


# DESIGN §2's table, as arrows that must not exist: (room, rooms and packages it never imports,
# why). A room is a module or package under offprompt/, or a third-party/standard package.
BASE = ("offprompt.errors", "offprompt.log", "offprompt.schema", "offprompt.utf8")
CORE_AND_DOORS = (
    "offprompt.collect",
    "offprompt.tools",
    "offprompt.mcp",
    "offprompt.terminal",
    "offprompt.cli",
)
# The sinks' modules that write: the disk, the folder lock, and each kind's write.
SINK_WRITERS = (
    "offprompt.sinks.atomic",
    "offprompt.sinks.lock",
    "offprompt.sinks.local",
    "offprompt.sinks.dotenv_sink",
    "offprompt.sinks.file_sink",
    "offprompt.sinks.none_sink",
)
# What the guard's let-through path may not load (tests/guard/test_hook_imports.py).
GUARD_SLOW = ("re", "json", "enum", "functools", "collections", "fnmatch", "typing", "dataclasses")
FORBIDDEN: list[tuple[str, tuple[str, ...], str]] = [
    (
        "offprompt.tools",
        ("offprompt.page", "offprompt.store", "offprompt.tunnel", "offprompt.browser", "aiohttp"),
        "tools never parse HTTP nor hold the ladder's state",
    ),
    (
        "offprompt.collect",
        ("offprompt.mcp", "offprompt.tools", "offprompt.terminal", "offprompt.cli", "click"),
        "the collect core never speaks JSON-RPC or click",
    ),
    (
        "offprompt.terminal",
        ("offprompt.mcp", "offprompt.tools", "offprompt.tools.app"),
        "the terminal door does not borrow the MCP door",
    ),
    (
        "offprompt.store",
        (*CORE_AND_DOORS, "offprompt.page", "offprompt.write", "offprompt.sinks", "subprocess"),
        "the request store is bookkeeping: nothing above it, no I/O of its own",
    ),
    (
        "offprompt.write",
        (*CORE_AND_DOORS, "offprompt.agents", "offprompt.page"),
        "the one path from a submission to the sinks knows nothing of the doors, the protocol,"
        " the tools or the page, and its steps come in through write.steps: it imports no"
        " installer, not even lazily to keep the mask",
    ),
    (
        "offprompt.write.provider",
        (
            *CORE_AND_DOORS,
            "offprompt.page",
            "offprompt.store",
            "offprompt.write.submit",
            "offprompt.sinks",
            "subprocess",
        ),
        "a provider check sends one request and says what came back: it writes nothing",
    ),
    (
        "offprompt.page",
        (*CORE_AND_DOORS, "subprocess", *SINK_WRITERS, "offprompt.sinks.destinations"),
        "the page never writes files or runs programs itself (a submit writes through submit)",
    ),
    (
        "offprompt.sinks",
        (*CORE_AND_DOORS, "offprompt.page", "offprompt.store", "offprompt.write", "aiohttp"),
        "sinks never know about MCP or the page",
    ),
    (
        "offprompt.crypto",
        ("offprompt", "subprocess", "socket", "pathlib", "io", "shutil"),
        "crypto is pure functions over bytes",
    ),
    (
        "offprompt.agents",
        (*CORE_AND_DOORS, "offprompt.page", "offprompt.store", "offprompt.write", "aiohttp"),
        "the agents' config code never imports protocol, page or write code (the mask's record"
        " is found through offprompt.statedir; the Submitter is handed the mask keeper)",
    ),
    (
        "offprompt.guard",
        (
            *CORE_AND_DOORS,
            "offprompt.agents",
            "offprompt.configedit",
            "offprompt.page",
            "offprompt.sinks",
            "offprompt.registry",
            "offprompt.write",
            "click",
            "aiohttp",
        ),
        "the hook runs before every tool call: it loads its own room and the base only",
    ),
    (
        "offprompt.mcp",
        ("offprompt",),
        "the protocol layer never touches files, values or the page (the base modules aside)",
    ),
    (
        "offprompt.hosts",
        ("offprompt", *GUARD_SLOW),
        "the hosts' facts are read by the guard on every tool call: they import the guard's"
        " regular expressions and JSON reader alone, and nothing slow",
    ),
    (
        "offprompt.disk",
        ("offprompt",),
        "the one way to touch a disk imports nothing of offprompt: every room may stand on it",
    ),
    (
        "offprompt.configedit",
        ("offprompt",),
        "byte-exact JSONC and TOML edits import nothing else of offprompt",
    ),
    (
        "offprompt.status",
        (
            *CORE_AND_DOORS,
            "offprompt.page",
            "offprompt.write.submit",
            *(w for w in SINK_WRITERS if w != "offprompt.sinks.atomic"),  # its reads are theirs
        ),
        "status and keys read: they never reach a write",
    ),
    (
        "offprompt.agents",
        ("offprompt.mcp", "offprompt.tools", "offprompt.collect", "offprompt.status"),
        "each agent's declaration, hook and mask never import the protocol or a door",
    ),
]
ALLOWED: dict[str, tuple[str, ...]] = {
    # Inside a room, and the base modules every room may use.
    "offprompt.configedit": ("offprompt.configedit",),
    "offprompt.disk": ("offprompt.disk",),
    "offprompt.crypto": ("offprompt.crypto",),
    "offprompt.mcp": ("offprompt.mcp", *BASE),
    "offprompt.registry": ("offprompt.registry",),
    "offprompt.hosts": ("offprompt.hosts", "offprompt.rx", "offprompt.jsonread"),
}


def _breaks(edge: Edge, room: str, never: tuple[str, ...]) -> bool:
    if not _inside(edge.source, room):
        return False
    if any(_inside(edge.target, ok) for ok in ALLOWED.get(room, ())):
        return False
    return any(_inside(edge.target, banned) for banned in never)


@pytest.mark.parametrize(("room", "never", "why"), FORBIDDEN, ids=[f[0] for f in FORBIDDEN])
def test_no_arrow_the_plan_forbids(room: str, never: tuple[str, ...], why: str) -> None:
    """Each room of DESIGN §2 imports none of what its "Never does" column rules out."""
    wrong = [f"{e.source}:{e.line} imports {e.target}" for e in EDGES if _breaks(e, room, never)]
    assert [] == wrong, why


def test_the_registry_imports_nothing_else_of_offprompt() -> None:
    """The registry is data and its rules engine (mirrored in the page's script): it stands
    alone, so both doors, the page and status can read it."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in EDGES
        if _inside(e.source, "offprompt.registry")
        and _inside(e.target, "offprompt")
        and not _inside(e.target, "offprompt.registry")
    ]
    assert [] == wrong


def test_a_forbidden_arrow_is_caught() -> None:
    """The rule check fires on an arrow it forbids (here a made-up page → collect import)."""
    fake = Edge("offprompt.page.render", "offprompt.collect.core", 1)
    assert _breaks(fake, "offprompt.page", CORE_AND_DOORS)
    ok = Edge("offprompt.page.render", "offprompt.store", 1)
    assert not _breaks(ok, "offprompt.page", CORE_AND_DOORS)


# What the page may take from the sinks package itself: looking at a destination and checking
# values, never `write`, `sink_for` or `KINDS` (a Sink object writes). Its writes go through
# offprompt.write.submit, the one path from a submit to the sinks.
PAGE_MAY_USE_OF_SINKS = frozenset({"Target", "inspect_target", "check_values", "display_of"})


def sinks_names_used(source: str) -> list[tuple[str, int]]:
    """Each name a module's source takes from the `offprompt.sinks` package, with its line: by
    `from offprompt.sinks import NAME`, or as `ALIAS.NAME` where ALIAS is bound to the package
    (`from offprompt import sinks`, `import offprompt.sinks as ALIAS`, `offprompt.sinks.NAME`)."""
    tree = ast.parse(source)
    aliases: set[str] = set()
    used: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "offprompt.sinks" and not node.level:
            used += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module == "offprompt" and not node.level:
            aliases |= {a.asname or a.name for a in node.names if a.name == "sinks"}
        elif isinstance(node, ast.Import):
            aliases |= {a.asname for a in node.names if a.name == "offprompt.sinks" and a.asname}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in aliases:
            used.append((node.attr, node.lineno))
        elif (
            isinstance(base, ast.Attribute)
            and base.attr == "sinks"
            and isinstance(base.value, ast.Name)
            and base.value.id == "offprompt"
        ):
            used.append((node.attr, node.lineno))
    return used


def test_the_page_never_reaches_the_sinks_write() -> None:
    """The page looks at a destination through the sinks package and writes only through
    offprompt.write.submit: no module of it takes `write` (or a Sink, which writes) from the
    package."""
    wrong = [
        f"{module}:{line} uses offprompt.sinks.{name}"
        for module, path in MODULES.items()
        if _inside(module, "offprompt.page")
        for name, line in sinks_names_used(path.read_text(encoding="utf-8"))
        if name not in PAGE_MAY_USE_OF_SINKS
    ]
    assert [] == wrong


@pytest.mark.parametrize(
    "source",
    [
        "from offprompt import sinks\nsinks.write(p, s, v)\n",
        "from offprompt import sinks as s\ns.sink_for(spec).write(p, spec, v)\n",
        "from offprompt.sinks import write\n",
        "import offprompt.sinks\noffprompt.sinks.KINDS['dotenv']\n",
        "import offprompt.sinks as out\nout.write(p, s, v)\n",
    ],
    ids=["attribute", "alias", "from-import", "dotted", "import-as"],
)
def test_a_page_write_through_the_sinks_is_caught(source: str) -> None:
    """The check above fires on each way a module can reach the write; the looking is let be."""
    assert {n for n, _ in sinks_names_used(source)} - PAGE_MAY_USE_OF_SINKS
    looking = "from offprompt import sinks\nsinks.inspect_target(p, s, n)\n"
    assert [("inspect_target", 2)] == sinks_names_used(looking)


THIRD_PARTY = {
    "aiohttp": ("offprompt.page", "offprompt.tunnel", "offprompt.write.provider"),
    "cryptography": ("offprompt.crypto",),
    "click": ("offprompt.cli",),
    "dotenv": ("offprompt.sinks",),
    "platformdirs": ("offprompt.statedir", "offprompt.tunnel"),
    # The optional `keyring` extra and what it brings on Linux: the OS's keyring only.
    "keyring": ("offprompt.oskeyring",),
    "secretstorage": ("offprompt.oskeyring",),
    "jeepney": ("offprompt.oskeyring",),
}


def test_each_runtime_dependency_is_used_by_its_own_rooms_only() -> None:
    """aiohttp by the page server (and the tunnel's probe and the provider checks' one request per
    key), cryptography by crypto, click by the
    command line, python-dotenv by the sinks, platformdirs where state and caches live: so what
    an import costs stays with the room that needs it."""
    wrong = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in EDGES
        for package, rooms in THIRD_PARTY.items()
        if _inside(e.target, package) and not any(_inside(e.source, r) for r in rooms)
    ]
    assert [] == wrong


def test_no_module_passes_the_size_a_reader_can_hold() -> None:
    """STYLE: past ~500 lines a module is split by responsibility."""
    long = {
        str(path.relative_to(ROOT)): n
        for path in MODULES.values()
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert {} == long
