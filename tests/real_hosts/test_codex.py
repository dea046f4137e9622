"""Codex 0.171.0 with offprompt as its MCP server and a scripted model: `codex exec`, and its
TUI in a pseudo-terminal (DESIGN §4: a local page goes straight to offprompt's own tab)."""

import time

import pytest
from helpers import tool_or_skip

from .conftest import MakeWorld
from .drive import MODEL_SAID, Outcome, collect, server_ready, soft_wait, type_prompt
from .harness import PROMPT, World, run
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts


def elicitations(world: World) -> list[dict[str, object]]:
    """Every elicitation/create offprompt sent Codex."""
    return [m for m in world.mcp_messages(".out") if m.get("method") == "elicitation/create"]


def test_exec_opens_the_one_tab_and_the_model_gets_the_fingerprint(
    make_world: MakeWorld, canary: str
) -> None:
    """`codex exec`: no dialog for an http link, offprompt opens one tab, the person writes,
    the model gets the page's fingerprint, and the value is only in `.env`."""
    codex = tool_or_skip("codex")
    world = make_world("openai")
    argv = [codex, "exec", "--skip-git-repo-check", PROMPT]
    done = run(argv, world.codex(), world.project, timeout=90)
    outcome = collect(world, Outcome("codex exec"))
    outcome.final_screen = done.stdout
    outcome.show()
    assert outcome.tabs == {"host": 0, "offprompt": 1}
    assert outcome.reachable
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in done.stdout
    assert done.returncode == 0, done.stderr
    assert elicitations(world) == []
    assert world.written_value() == canary
    out = ("stdout", done.stdout.encode()), ("stderr", done.stderr.encode())
    assert world.places_holding(canary, *out) == []


def test_tui_shows_the_write_and_the_model_says_the_fingerprint(
    make_world: MakeWorld, canary: str
) -> None:
    """Codex's TUI, the same prompt: no dialog, one tab (offprompt's), the screen shows the
    headline `Wrote 1 value to .env · fingerprint …` and the model repeats the fingerprint;
    the app-server daemon the TUI leaves behind is ended by the fixture."""
    codex = tool_or_skip("codex")
    world = make_world("openai")
    term = Terminal([codex], world.codex(), world.project)
    outcome = Outcome("Codex TUI")
    try:
        server_ready(world)
        type_prompt(term, world)
        if world.wait_for("written", timeout=world.cold_start + 10):
            soft_wait(term, "Wrote 1 value", 10)
            outcome.screen_after_write = term.screen()
        soft_wait(term, MODEL_SAID, 20 if world.writes() else 5)
        time.sleep(0.5)
        outcome.final_screen = term.screen()
    finally:
        term.close()
        collect(world, outcome)
        outcome.show()
    assert outcome.tabs == {"host": 0, "offprompt": 1}
    assert outcome.reachable
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    headline = f"Wrote 1 value to .env · fingerprint {outcome.page_fingerprint}"
    assert headline in outcome.final_screen
    assert f"Done. Fingerprint {outcome.page_fingerprint}" in outcome.final_screen
    assert elicitations(world) == []
    assert world.written_value() == canary
    assert world.places_holding(canary, ("terminal", bytes(term.raw))) == []
