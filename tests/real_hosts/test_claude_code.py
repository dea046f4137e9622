"""Claude Code 2.1.337 with offprompt as its MCP server and a scripted model: print mode, and a
person at its terminal answering the URL dialog each way (DESIGN §4, §4.1)."""

import time
from collections.abc import Callable

import pytest
from helpers import tool_or_skip

from .conftest import MakeWorld
from .drive import (
    DIALOG,
    DONE,
    MODEL_SAID,
    Outcome,
    after_write,
    choose,
    claude_argv,
    collect,
    result_of,
    server_ready,
    soft_wait,
    type_prompt,
)
from .harness import KEY, PROMPT, World, run
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts


def test_print_mode_cancels_the_dialog_and_offprompt_opens_the_one_tab(
    make_world: MakeWorld, canary: str
) -> None:
    """`claude -p` cancels the URL elicitation; offprompt opens one tab, the person writes,
    the model gets the page's fingerprint, and the value is only in `.env`."""
    claude = tool_or_skip("claude")
    world = make_world("anthropic")
    env, config = world.claude()
    argv = claude_argv(claude, str(config), "-p", PROMPT)
    done = run(argv, env, world.project, timeout=90)
    outcome = collect(world, Outcome("claude -p"))
    outcome.final_screen = done.stdout
    outcome.show()
    sent = world.mcp_messages(".in")
    retries = [m for m in sent if m.get("params", {}).get("inputResponses")]
    assert [r["params"]["inputResponses"] for r in retries] == [
        {"offprompt_page": {"action": "cancel"}}
    ]
    assert outcome.tabs == {"host": 0, "offprompt": 1}
    assert outcome.reachable
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in done.stdout
    assert done.returncode == 0, done.stderr
    assert world.written_value() == canary
    out = ("stdout", done.stdout.encode()), ("stderr", done.stderr.encode())
    assert world.places_holding(canary, *out) == []


# -- the interactive terminal --------------------------------------------------------------------

Person = Callable[[Terminal, World, Outcome], None]


def open_at_once(term: Terminal, world: World, outcome: Outcome) -> None:
    choose(term, "Open in browser")
    after_write(term, world, outcome)


def open_after_3s(term: Terminal, world: World, outcome: Outcome) -> None:
    time.sleep(3)
    choose(term, "Open in browser")
    after_write(term, world, outcome)


def ignore(term: Terminal, world: World, outcome: Outcome) -> None:
    after_write(term, world, outcome)


def done_first(term: Terminal, world: World, outcome: Outcome) -> None:
    choose(term, DONE)
    after_write(term, world, outcome)


def decline(term: Terminal, world: World, outcome: Outcome) -> None:
    """Declines; then, asked by the agent, changes their mind and pastes the link it shows."""
    choose(term, "Decline")
    soft_wait(term, "Open this link", 20)
    outcome.screen_link = term.screen()
    # Long enough for any timer of the ladder to have fired (dialog wait 3 s) and been seen.
    time.sleep(world.dialog_wait_ms / 1000 + 1)
    outcome.tabs_after_decline = world.tabs()
    results = world.model.tool_results()
    if results and "url" in (declined := result_of(results[0])):
        world.open_by_hand(declined["url"])
        after_write(term, world, outcome)
        soft_wait(term, r"Done\. Fingerprint", 15)


def escape(term: Terminal, world: World, outcome: Outcome) -> None:
    term.press("esc")
    after_write(term, world, outcome)


def run_claude_tui(world: World, person: Person, scenario: str) -> tuple[Outcome, bytes]:
    """Claude Code's TUI in a pty: the person types the prompt, meets the dialog, does what
    `person` does; the row of what happened and every byte the terminal showed."""
    env, config = world.claude()
    term = Terminal(claude_argv(tool_or_skip("claude"), str(config)), env, world.project)
    outcome = Outcome(scenario)
    try:
        server_ready(world)
        type_prompt(term, world)
        outcome.dialog = term.wait(DIALOG, 30)
        person(term, world, outcome)
        soft_wait(term, MODEL_SAID, 20 if world.writes() else 5)
        time.sleep(0.5)
        outcome.final_screen = term.screen()
    finally:
        term.close()
        collect(world, outcome)
        outcome.show()
    return outcome, bytes(term.raw)


def assert_dialog_said_what_design_says(outcome: Outcome) -> None:
    """The dialog's message for one key (DESIGN §4), and the page's link in it."""
    assert f"offprompt is collecting {KEY}. Open the page to type it." in outcome.dialog
    assert "http://127.0.0.1:" in outcome.dialog


# (person, dialog wait, who opens the one tab, whether the dialog is still up after the write)
SCENARIOS = {
    "open at once": (open_at_once, 3000, "host", True),
    # 3 s, then a 1.5 s cold start: inside the default 10 s dialog wait, so offprompt waits.
    "open after 3 s": (open_after_3s, 10000, "host", True),
    "ignore the dialog": (ignore, 3000, "offprompt", True),
    "I'm done before opening": (done_first, 3000, "offprompt", False),
    "Esc": (escape, 3000, "offprompt", False),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_tui_person_gets_one_tab_and_the_model_the_fingerprint(
    make_world: MakeWorld, canary: str, scenario: str
) -> None:
    """Whatever the person does with the dialog short of declining: exactly one tab, the page
    loads, the model is told the page's fingerprint, the value is only in `.env`; where the
    dialog outlives the write, the Written page says to press "I'm done, continue"."""
    person, wait_ms, opener, dialog_stays = SCENARIOS[scenario]
    world = make_world("anthropic", dialog_wait_ms=wait_ms)
    outcome, screen_bytes = run_claude_tui(world, person, scenario)
    assert_dialog_said_what_design_says(outcome)
    other = "offprompt" if opener == "host" else "host"
    assert outcome.tabs == {opener: 1, other: 0}
    assert outcome.reachable
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in outcome.final_screen
    assert outcome.dialog_after_write is dialog_stays
    if dialog_stays:
        assert DONE in outcome.written_page
    assert world.written_value() == canary
    assert world.places_holding(canary, ("terminal", screen_bytes)) == []


def test_tui_decline_opens_no_tab_and_the_link_still_works(
    make_world: MakeWorld, canary: str
) -> None:
    """Decline (DESIGN §4.1): no tab at all; the call answers `awaiting` with the link and a
    note that the person declined; the agent shows the link; the person opens it by hand and
    writes; await_secret hands the model the page's fingerprint; the value is only in `.env`."""
    world = make_world("anthropic")
    outcome, screen_bytes = run_claude_tui(world, decline, "Decline")
    assert_dialog_said_what_design_says(outcome)
    assert outcome.tabs_after_decline == {"host": 0, "offprompt": 0}
    assert outcome.tabs == {"host": 0, "offprompt": 0, "person": 1}
    declined = result_of(outcome.model_results[0])
    assert declined["status"] == "awaiting"
    assert "declined" in declined["note"]
    assert declined["url"] in outcome.screen_link.replace("\n", "")
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in outcome.final_screen
    assert world.written_value() == canary
    assert world.places_holding(canary, ("terminal", screen_bytes)) == []
