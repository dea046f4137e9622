"""`uvx --from SOURCE offprompt init`, run for real with uv: the command written keeps
`--from SOURCE`, and that command starts offprompt again."""

import os
import shutil
import subprocess
import sysconfig
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def uvx_or_skip() -> str:
    """uv's `uvx` installed beside this Python (the test extras); fails in CI when missing."""
    found = shutil.which("uvx", path=sysconfig.get_path("scripts"))
    if found:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("uvx is missing in CI: `uv` belongs in the test extras")
    pytest.skip("uv is not installed here (python -m pip install uv)")


@pytest.mark.slow
def test_uvx_from_a_checkout_writes_a_command_that_starts_it_again(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """Codex's user config (it has no personal project scope) gets `uvx --from <checkout>
    offprompt serve`; the same words with `--version` run that offprompt."""
    uvx = uvx_or_skip()
    env = {
        "HOME": str(home),
        "PATH": f"{Path(uvx).parent}:/usr/bin:/bin",
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_TOOL_DIR": str(tmp_path / "uv-tools"),
        "LANG": "C.UTF-8",
    }
    for name in ("UV_INDEX_URL", "UV_DEFAULT_INDEX", "SSL_CERT_FILE", "PIP_CERT", "HTTPS_PROXY"):
        if name in os.environ:
            env[name] = os.environ[name]

    done = subprocess.run(
        [uvx, "--from", str(ROOT), "offprompt", "init", "--agent", "codex", "--project",
         str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )  # fmt: skip

    assert 0 == done.returncode, done.stdout + done.stderr
    entry = tomllib.loads((home / ".codex" / "config.toml").read_text())["mcp_servers"]
    command, args = entry["offprompt"]["command"], entry["offprompt"]["args"]
    assert (uvx, ["--from", str(ROOT), "offprompt", "serve"]) == (command, args)
    again = subprocess.run(
        [command, *args[:-1], "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert 0 == again.returncode, again.stdout + again.stderr
    assert again.stdout.startswith("offprompt")
