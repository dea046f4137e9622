"""Gemini CLI 0.61.0 with offprompt as its MCP server and a scripted model (`gemini -p`): the
tool call opens offprompt's one tab, the person writes, the model gets the page's fingerprint,
and the value is only in `.env`."""

import pytest
from helpers import tool_or_skip

from .conftest import MakeWorld
from .drive import Outcome, collect
from .harness import PROMPT, run

pytestmark = pytest.mark.real_hosts


def test_gemini_opens_the_one_tab_and_the_model_gets_the_fingerprint(
    make_world: MakeWorld, canary: str
) -> None:
    """`gemini -p --yolo` (the call runs without Gemini's confirmation): one tab, opened by
    offprompt; the fingerprint the page showed is the one the model received."""
    gemini = tool_or_skip("gemini")
    world = make_world("google")
    argv = [gemini, "-p", PROMPT, "--yolo"]
    done = run(argv, world.gemini(server=True), world.project, timeout=120)
    outcome = collect(world, Outcome("gemini -p"))
    outcome.final_screen = done.stdout
    outcome.show()
    assert done.returncode == 0, done.stdout + done.stderr
    assert outcome.tabs == {"host": 0, "offprompt": 1}
    assert outcome.reachable
    assert outcome.page_fingerprint is not None
    assert outcome.model_fingerprints == [outcome.page_fingerprint]
    assert outcome.page_fingerprint in done.stdout
    assert world.written_value() == canary
    out = ("stdout", done.stdout.encode()), ("stderr", done.stderr.encode())
    assert world.places_holding(canary, *out) == []


def test_gemini_offers_secret_status_to_the_model(make_world: MakeWorld) -> None:
    """The model's function declarations hold mcp_offprompt_secret_status, described, with
    its two arguments."""
    gemini = tool_or_skip("gemini")
    world = make_world("google")
    done = run([gemini, "-p", PROMPT, "--yolo"], world.gemini(server=True), world.project, 120)
    assert done.returncode == 0, done.stdout + done.stderr
    (first, *_) = world.model.conversation()
    assert isinstance(first.body, dict)
    declared = {
        f["name"]: f for t in first.body["tools"] for f in t.get("functionDeclarations", [])
    }
    status = declared["mcp_offprompt_secret_status"]
    assert "before collect_secret" in status["description"]
    schema = status.get("parametersJsonSchema") or status.get("parameters") or {}
    # Gemini CLI adds its own `wait_for_previous` to every tool it declares.
    assert {"names", "path"} == set(schema["properties"]) - {"wait_for_previous"}
