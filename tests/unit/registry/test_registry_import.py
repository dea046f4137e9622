"""Importing the registry for the tool schema's enums stays cheap: data only, no engine."""

import json
import os
import subprocess
import sys
from pathlib import Path

import offprompt.registry as registry

# Times the import in a fresh interpreter, and lists which registry modules it loaded.
PROBE = """
import json, sys, time
before = sorted(sys.modules)
start = time.perf_counter()
import offprompt.registry as r
r.provider_refs(); r.format_ids()
ms = (time.perf_counter() - start) * 1000
print(json.dumps([ms, sorted(set(sys.modules) - set(before))]))
"""


def probe(cache: Path) -> tuple[float, list[str]]:
    """One fresh interpreter: the milliseconds it took, and the modules the import loaded."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(cache)  # bytecode as an installed package has it
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, check=True
    )
    ms, modules = json.loads(proc.stdout)
    return float(ms), list(modules)


def test_import_and_enums_are_fast(tmp_path: Path) -> None:
    """Import + provider_refs() + format_ids() takes well under 20 ms (asserted < 60 ms)."""
    probe(tmp_path)  # writes the bytecode
    best = min(probe(tmp_path)[0] for _ in range(5))
    print(f"import offprompt.registry + enums: {best:.1f} ms")
    assert best < 60


def test_import_loads_no_engine(tmp_path: Path) -> None:
    """The engine modules (and dataclasses, and so any regex) load only on first use."""
    _, modules = probe(tmp_path)  # only what the import itself added
    engine = {"checks", "export", "resolution", "results", "rules"}
    assert set() == engine & {m.rsplit(".", 1)[-1] for m in modules if "registry." in m}
    assert "dataclasses" not in modules


def test_lazy_names_are_the_functions() -> None:
    """`resolve`, `check` and the rest are the functions, even after their modules loaded."""
    import offprompt.registry.resolution  # noqa: F401 - loads the module under the package

    assert callable(registry.check)
    assert callable(registry.resolve)
    assert registry.resolve.__module__ == "offprompt.registry.resolution"
    assert set(registry.__all__) <= set(dir(registry)) | set(registry._LAZY)
