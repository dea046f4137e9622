"""Both real hosts accept secret_status's schemas and hand the model the tool with its
description, and Codex the instructions that say to call it first (DESIGN §3, §12)."""

import pytest
from helpers import tool_or_skip

from offprompt.tools.app import INSTRUCTIONS

from .conftest import MakeWorld
from .drive import claude_argv
from .harness import PROMPT, run

pytestmark = pytest.mark.real_hosts


def test_claude_code_offers_secret_status_to_the_model(make_world: MakeWorld) -> None:
    """`claude -p`: the model's tool list holds mcp__offprompt__secret_status, described."""
    claude = tool_or_skip("claude")
    world = make_world("anthropic")
    env, config = world.claude()
    done = run(claude_argv(claude, str(config), "-p", PROMPT), env, world.project, timeout=90)
    assert done.returncode == 0, done.stderr
    (first, *_) = world.model.conversation()
    assert isinstance(first.body, dict)
    tools = {t.get("name"): t for t in first.body["tools"]}
    status = tools["mcp__offprompt__secret_status"]
    assert "before collect_secret" in status["description"]
    assert set(status["input_schema"]["properties"]) == {"names", "path"}


def test_codex_offers_secret_status_and_the_instructions(make_world: MakeWorld) -> None:
    """`codex exec`: the model's offprompt namespace holds secret_status, and the namespace's
    description (our instructions) says to call it first."""
    codex = tool_or_skip("codex")
    world = make_world("openai")
    done = run(
        [codex, "exec", "--skip-git-repo-check", PROMPT], world.codex(), world.project, timeout=90
    )
    assert done.returncode == 0, done.stderr
    (first, *_) = world.model.conversation()
    (ours,) = [t for t in first.body["tools"] if t.get("name") == "mcp__offprompt"]
    assert ours["type"] == "namespace"
    assert ours["description"] == INSTRUCTIONS
    tools = {t.get("name"): t for t in ours["tools"]}
    assert "before collect_secret" in tools["secret_status"]["description"]
