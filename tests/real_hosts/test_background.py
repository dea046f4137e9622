"""Claude Code 2.1.337's TUI moves a tool call still running after
CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS (120 s by default; 3 s here) to the background: the model is
told at once that the call "was moved to the background", and gets its result later as a
`<task-notification>` user turn. With the page filled only after that: one tab, one request, and
the page's fingerprint reaches the model through the notification, whether the model waits as
our instructions say or calls collect_secret again (DESIGN §3, §4; reference/hosts-observed.md
"Long calls")."""

import json
import re
import time
from typing import Any

import pytest
from helpers import tool_or_skip

from offprompt.tools.app import INSTRUCTIONS

from .conftest import MakeWorld
from .drive import DIALOG, Outcome, claude_argv, collect, server_ready, type_prompt
from .harness import ARGUMENTS, World
from .model import BACKGROUNDED, OPEN_WORDS, ScriptedModel
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts

BACKGROUND_MS = 3000
TURN_OVER = r"· done .* · 1 MCP task still running"
# A message typed while a call runs is queued: "Queued · ctrl+x ctrl+s to send now".
SEND_NOW = ("ctrl+x ctrl+s to send now", ("\x18", "\x13"))


def hold_the_person(world: World) -> None:
    """The person's browser loads the page only once the test says so (person.json "hold")."""
    person = world.root / "person.json"
    data = json.loads(person.read_text())
    data["hold"] = str(world.root / "hold")
    person.write_text(json.dumps(data))


def wait_until(test: Any, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise TimeoutError(f"never happened: {what}")
        time.sleep(0.05)


def backgrounded(world: World) -> bool:
    return any(BACKGROUNDED.search(r) for r in world.model.tool_results())


def collect_results(world: World) -> list[dict[str, Any]]:
    """Every tool result offprompt sent for a collect_secret call (the tee's record of the
    pipe), not counting the `input_required` round that carries the URL dialog."""
    asked = {
        m["id"]
        for m in world.mcp_messages(".in")
        if m.get("method") == "tools/call" and m["params"].get("name") == "collect_secret"
    }
    answers = [m["result"] for m in world.mcp_messages(".out") if m.get("id") in asked]
    return [a for a in answers if a.get("resultType") != "input_required"]


def run_backgrounded(
    world: World, outcome: Outcome, message: str | None = None
) -> tuple[Outcome, bytes]:
    """The person types the prompt and dismisses the URL dialog (Esc: the call is not moved
    while a dialog is pending), so offprompt opens its tab; once the host has moved the call
    to the background (and the model had its turn), the person fills the page in. With
    `message`, the host keeps its 120 s limit; the person writes `message` while waiting, and
    has it sent now rather than queued, which moves the call at once."""
    hold_the_person(world)
    env, config = world.claude()
    if message is None:
        env["CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS"] = str(BACKGROUND_MS)
    term = Terminal(claude_argv(tool_or_skip("claude"), str(config)), env, world.project)
    try:
        server_ready(world)
        type_prompt(term, world)
        outcome.dialog = term.wait(DIALOG, 30)
        time.sleep(0.4)  # keys pressed while the dialog draws are lost
        term.press("esc")
        if message is not None:
            wait_until(lambda: world.tabs()["offprompt"], "offprompt opening its tab", 10)
            term.child.send(message)
            time.sleep(0.3)
            term.press("enter")
            term.wait(re.escape(SEND_NOW[0]), 10)
            term.press(*SEND_NOW[1])
        wait_until(lambda: backgrounded(world), "the call moved to the background", 30)
        # The model's turn after the move is over, the call still running.
        outcome.screen_link = term.wait(TURN_OVER, 20)
        (world.root / "hold").touch()
        wait_until(world.writes, "the person's write", 30)
        # The fingerprint's own turn, not an earlier one: "model calls again" already said "gave
        # no fingerprint", and 2.1.337 takes longer than 0.5 s to draw the notified turn.
        term.wait(r"Done\. Fingerprint", 30)
        time.sleep(0.5)
        outcome.final_screen = term.screen()
    finally:
        term.close()
        collect(world, outcome)
        outcome.show()
    return outcome, bytes(term.raw)


def request_texts(body: Any) -> list[str]:
    """Every string in a request body (the system prompt is a message of its own here)."""
    if isinstance(body, str):
        return [body]
    if isinstance(body, dict):
        return [t for v in body.values() for t in request_texts(v)]
    if isinstance(body, list):
        return [t for v in body for t in request_texts(v)]
    return []


# (the model calls collect_secret again after the move, what the person writes meanwhile)
SCENARIOS = {
    "model waits": (False, None),
    "model calls again": (True, None),
    "person writes while waiting": (False, "I have the page open."),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_call_moved_to_the_background_gets_one_tab_and_the_fingerprint_later(
    make_world: MakeWorld, canary: str, scenario: str
) -> None:
    """The call moves to the background after 3 s; the model's next request still carries our
    instructions; the page is written later; one tab, one request (every collect_secret answer
    names it, one journal line), the fingerprint reaches the model in the task notification and
    the screen, and the value is only in `.env`. A model that calls again gets the open request
    back at once, told not to call again, and no second page. A message the person sends now
    (not queued) while the call waits moves it at once, whatever the time limit."""
    again, message = SCENARIOS[scenario]
    model = ScriptedModel("anthropic", ARGUMENTS, again_after_background=again)
    world = make_world("anthropic", model=model)
    outcome, screen_bytes = run_backgrounded(world, Outcome(scenario), message)

    assert outcome.tabs == {"host": 0, "offprompt": 1}
    assert outcome.reachable
    assert len({n["url"] for n in world.loads()}) == 1
    answers = collect_results(world)
    assert len(answers) == (2 if again else 1)
    request_ids = {a["structuredContent"]["request_id"] for a in answers}
    assert len(request_ids) == 1
    journal = (world.state / "journal.jsonl").read_text().splitlines()
    assert [json.loads(line)["request_id"] for line in journal] == list(request_ids)

    first, *rest = world.model.tool_results()
    assert BACKGROUNDED.search(first)
    why = r"so that a message that arrived" if message else r"is still running after \d+s\."
    assert re.search(why, first)
    after = next(
        r for r in world.model.conversation() if any(first in t for t in request_texts(r.body))
    )
    assert "even one moved to the background" in INSTRUCTIONS
    assert any(INSTRUCTIONS in text for text in request_texts(after.body))
    if not again:
        assert OPEN_WORDS in outcome.screen_link
    else:
        repeated = json.loads(rest[0])
        assert repeated["status"] == "awaiting"
        assert "Do not call collect_secret again" in repeated["note"]
    (notified,) = world.model.notified()
    assert outcome.page_fingerprint is not None
    assert json.loads(notified)["fingerprint"] == outcome.page_fingerprint
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in outcome.final_screen
    assert world.written_value() == canary
    assert world.places_holding(canary, ("terminal", screen_bytes)) == []
