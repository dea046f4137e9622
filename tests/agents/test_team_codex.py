"""What a Codex teammate is asked to trust (DESIGN §14: Codex runs a project's hook only once
the person trusts it in /hooks, and `codex exec` runs no untrusted hook): the shared hook says
what it is in its first words (Codex's `statusMessage`, which its /hooks screen shows instead
of "Unnamed hook"), and `init --shared` says, and writes as a comment in the shared Codex
config, the line the team must pass on."""

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from cli_helpers import shared
from click.testing import Result

from offprompt.agents import guard_install

Run = Callable[..., Result]
pytestmark = pytest.mark.usefixtures("portable")


def test_init_shared_names_the_codex_hook_and_tells_the_team_to_trust_it(
    run: Run, project: Path
) -> None:
    """The hook's statusMessage starts `offprompt guard`; config.toml carries a comment naming
    /hooks and `codex exec`; init says the same once; the entry is still offprompt's."""
    done = run("init", "--agent", "codex", *shared(project))

    assert 0 == done.exit_code, done.output
    entry = json.loads((project / ".codex" / "hooks.json").read_text())["hooks"]["PreToolUse"][0]
    (handler,) = entry["hooks"]
    assert handler["statusMessage"].startswith("offprompt guard")
    assert guard_install.is_ours(entry)
    config = (project / ".codex" / "config.toml").read_text()
    comments = [line for line in config.splitlines() if line.startswith("#")]
    told = [c for c in comments if "/hooks" in c and "codex exec" in c]
    assert 1 == len(told), config
    assert "offprompt" in tomllib.loads(config)["mcp_servers"]
    said = [line for line in done.stdout.splitlines() if "/hooks" in line and "codex exec" in line]
    assert 1 == len(said), done.stdout


def test_init_personal_keeps_the_codex_hook_as_it_was(run: Run, project: Path) -> None:
    """The personal (user-level) Codex hook is not changed: a changed definition waits for
    the person to trust it again, and runs unguarded until then."""
    done = run("init", "--agent", "codex", "--project", str(project))

    assert 0 == done.exit_code, done.output
    assert not any("codex exec" in line for line in done.stdout.splitlines())
