"""DESIGN §17 in the real hosts: a remote request (OFFPROMPT_SANDBOX=1; OFFPROMPT_TUNNEL=off, so
the link is loopback) answers `awaiting` + the link at once and opens no tab; the person opens the
link, their page claims the request and seals the submit (tests/sandbox/person.py), and the
submit is held: the page shows a confirmation code and nothing is written until the code comes
back through the host.

What each host does with the code (observed with Claude Code 2.1.328 and Codex 0.169.0; Codex
0.171.0 does the same):
- Claude Code's TUI shows offprompt's form (`input_required`, 2026-07-28) as "MCP server
  “offprompt” requests your input"; the person types the code, Enter, Enter on Accept. A person
  who declines it is asked by the model in the chat, types the code there, and the model passes
  it to await_secret as `confirm`.
- Codex's TUI shows the legacy form `elicitation/create` ("Field 1/1 … enter to submit").
- `codex exec` declines the form unseen, at once, so the `confirm` result and its note reach the
  model, which asks the person and calls await_secret with `confirm`.

Each test: the value only in `.env`; the page's fingerprint reaches the model; the code is never
in anything offprompt sent (results, the model's traffic), and where the person typed it into
the host's dialog it is in no transcript or model request either; where it went through the
model it is there only as the person's message and the model's one `confirm` argument, used once.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers import tool_or_skip
from sandbox import person

from .conftest import MakeWorld
from .drive import (
    MODEL_SAID,
    SELECTED,
    Outcome,
    claude_argv,
    result_of,
    server_ready,
    soft_wait,
    type_prompt,
)
from .harness import ARGUMENTS, KEY, PROMPT, World
from .model import ASK_CODE, ScriptedModel
from .terminal import Terminal

pytestmark = pytest.mark.real_hosts

SHOWN_CODE = re.compile(r'id="confirm-code">([^<]+)<')
CODE_NOTE = "Ask the person to type that code here in the chat"
FORM_MESSAGE = "Type the code the offprompt page shows"
CLAUDE_FORM = "MCP server “offprompt” requests your input"
CODEX_FORM = "enter to submit | esc to cancel"
# Where the hosts record the conversation: its sessions, and what the person typed at the prompt.
TRANSCRIPTS = (
    "home/.claude/projects/",
    "home/.claude/history.jsonl",
    "codex-home/sessions/",
    "codex-home/history.jsonl",
    "codex-home/thread_history",  # Codex's SQLite copy of each thread
)


def remote(world: World) -> World:
    """The run as a remote (sandbox) one whose link is this machine's loopback address."""
    world.env["OFFPROMPT_SANDBOX"] = "1"
    world.env["OFFPROMPT_TUNNEL"] = "off"
    return world


@dataclass
class Person:
    """The person at a remote page: what they were given, saw and typed."""

    link: str = ""
    page: str = ""  # the page as loaded, as text
    held: dict[str, Any] = field(default_factory=dict)  # the page's answer to the submit
    code: str = ""  # the code as the page shows it (`ABCD-EFG`); what the person types
    fingerprint: str = ""  # the four emoji the page computed
    written_before_code: bool = False
    page_after: dict[str, Any] = field(default_factory=dict)  # /status once it is over

    def show(self) -> None:
        print("PERSON " + json.dumps(self.__dict__, ensure_ascii=False))


def first_result(world: World, timeout: float = 40) -> dict[str, Any]:
    """The collect_secret result as the model got it (the link is in it: remote)."""
    deadline = time.monotonic() + timeout
    while not (results := world.model.tool_results()):
        if time.monotonic() > deadline:
            raise TimeoutError("the model never got collect_secret's result")
        time.sleep(0.05)
    return result_of(results[0])


def submit(world: World, canary: str, who: Person) -> None:
    """The person opens the link the agent showed; the page claims the request and seals the
    value; the submit is held and the page shows the code."""
    who.link = first_result(world)["url"]
    page = person.fetch(who.link.partition("#")[0])
    shown = re.sub(r"<(style|script)\b.*?</\1>|<[^>]+>", " ", page.body, flags=re.S)
    who.page = " ".join(shown.split())[:600]
    answer, who.fingerprint = person.sealed_submit(who.link, {KEY: canary})
    assert answer.status == 200, answer.body
    who.held = answer.json()
    shown = SHOWN_CODE.search(who.held["html"])
    assert shown is not None, who.held
    who.code = shown.group(1)
    who.written_before_code = (world.project / ".env").exists()


def page_after(who: Person) -> None:
    """What the person's page learns once it is over (it polls its status)."""
    who.page_after = person.fetch(who.link.partition("#")[0] + "/status").json()


def wait_until(test: Callable[[], object], what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not test():
        if time.monotonic() > deadline:
            raise TimeoutError(f"never happened: {what}")
        time.sleep(0.05)


# -- where the code went -------------------------------------------------------------------------


def code_forms(who: Person) -> tuple[str, ...]:
    """The code as the page shows it and as `confirm_code` carries it (no hyphen)."""
    return who.code, who.code.replace("-", ""), str(who.held["confirm_code"])


def through_the_model(data: str, code: str) -> str:
    """`data` without the places a code sent through the model may be: the person's chat
    message that is the code (as the model got it, and in the host's prompt history), and the
    model's `confirm` argument (JSON, or JSON in a string)."""
    quote = r'\\*"'
    confirm = rf"{quote}confirm{quote}\s*:\s*{quote}{re.escape(code)}{quote}"
    keys = "(?:text|content|display|lastPrompt)"
    said = rf"{quote}{keys}{quote}\s*:\s*{quote}{re.escape(code)}{quote}"
    return re.sub(f"{confirm}|{said}", "", data)


def code_places(world: World, who: Person, *, model_has_it: bool) -> list[str]:
    """Where the code is, outside the host↔offprompt pipe (the tee: the host's answer to the
    form, or the model's argument) and the terminal the person typed it into. With
    `model_has_it`, the person's chat message and the model's `confirm` argument are allowed
    in the model's requests and the host's transcripts, nothing else there."""
    found = []
    for code in set(code_forms(who)):
        for place in world.places_holding(code):
            if place.startswith("tee/"):
                continue
            if model_has_it and place == "model requests":
                data = world.model.raw().decode(errors="replace")
            elif model_has_it and place.startswith(TRANSCRIPTS):
                data = (world.root / place).read_text(errors="replace")
            else:
                found.append(place)
                continue
            if code in through_the_model(data, code):
                found.append(place)
    return found


def pipe_carrying(world: World, who: Person) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Messages on the pipe that hold the code: host → offprompt, offprompt → host."""

    def holding(m: dict[str, Any]) -> bool:
        text = json.dumps(m)
        return any(code in text for code in code_forms(who))

    sent = [m for m in world.mcp_messages(".in") if holding(m)]
    answered = [m for m in world.mcp_messages(".out") if holding(m)]
    return sent, answered


def assert_held_then_written(
    world: World, who: Person, canary: str, *, page_saw: str = "written"
) -> None:
    """The common end of every run: no tab, the link loopback, held until the code, written
    with the page's fingerprint, the value only in `.env`; `page_saw`: what the page's own
    status said afterwards (`unreachable` once a print-mode host has ended offprompt)."""
    first = result_of(world.model.tool_results()[0])
    assert first["status"] == "awaiting"
    assert first["url"] == who.link
    assert who.link.startswith("http://127.0.0.1:")
    assert "/r/" in who.link
    assert "#k=" in who.link
    assert world.tabs() == {"host": 0, "offprompt": 0}  # remote: offprompt opens no tab
    assert who.held["status"] == "confirm"
    assert len(who.held["confirm_code"]) == 7
    assert who.code.replace("-", "") == who.held["confirm_code"]
    assert "Nothing is written yet" in who.held["html"]
    assert who.written_before_code is False
    assert world.model.fingerprints() == [who.fingerprint]
    assert who.page_after["status"] == page_saw
    assert world.written_value() == canary


def assert_code_used_once(world: World, who: Person, *, by_model: bool) -> None:
    """The code crossed the pipe once, host → offprompt (the form's answer, or the model's
    `confirm`), and never the other way."""
    sent, answered = pipe_carrying(world, who)
    assert answered == []
    assert len(sent) == 1
    (message,) = sent
    form_answer = {"action": "accept", "content": {"code": who.code}}
    if by_model:
        assert message["params"]["name"] == "await_secret"
        assert message["params"]["arguments"]["confirm"] == who.code
    elif "result" in message:  # legacy: the answer to offprompt's elicitation/create
        assert message["result"] == form_answer
    else:  # 2026-07-28: the retry carries the form's answer
        assert list(message["params"]["inputResponses"].values()) == [form_answer]


def confirm_results(world: World) -> list[dict[str, Any]]:
    out = [result_of(r) for r in world.model.tool_results()]
    return [r for r in out if r["status"] == "confirm"]


# -- Claude Code ----------------------------------------------------------------------------------


def claude_form(term: Terminal, who: Person) -> None:
    """The person types the code their page shows into the dialog: Enter leaves the field
    and selects Accept, Enter accepts."""
    term.child.send(who.code)
    # 2.1.332-2.1.336 show "✔ Confirmation code: 031B-RKY"; 2.1.337 "Confirmation code*:  1WBP-A4X"
    # (a `*` on a required field, the value in an aligned column).
    term.wait(r"(?:✔ Confirmation code: |Confirmation code\*: +)" + re.escape(who.code), 10)
    term.press("enter")
    term.wait(f"{SELECTED} Accept", 10)
    term.press("enter")


def claude_decline(term: Terminal, who: Person) -> None:
    """The person declines the dialog; the model asks in the chat; they type the code there."""
    for _ in range(4):  # from the field down to Decline, letting each move draw
        if soft_wait(term, f"{SELECTED} Decline", 1.5):
            break
        term.press("down")
    term.wait(f"{SELECTED} Decline", 5)
    time.sleep(0.3)
    term.press("enter")
    term.wait(re.escape(ASK_CODE), 20)
    time.sleep(0.3)
    type_line(term, who.code)


def type_line(term: Terminal, text: str) -> None:
    """Type `text` into the host's input box and send it."""
    term.child.send(text)
    term.wait(re.escape(text), 5)
    time.sleep(0.2)
    term.press("enter")


CLAUDE_PEOPLE = {"form dialog": claude_form, "declines the dialog": claude_decline}


@pytest.mark.parametrize("scenario", list(CLAUDE_PEOPLE))
def test_claude_code_tui_takes_the_code_and_writes(
    make_world: MakeWorld, canary: str, scenario: str
) -> None:
    """Claude Code's TUI: the link in the result (no dialog for it, no tab), the model shows it
    and calls await_secret; the person submits; the held submit comes back to Claude Code as
    a form dialog for the code. Typed there: written, and neither the model nor the transcript
    sees the code. Declined: the `confirm` result and its note reach the model, it asks the
    person in the chat, and passes their answer as `confirm` (once). Both: the fingerprint."""
    world = remote(make_world("anthropic"))
    env, config = world.claude()
    term = Terminal(claude_argv(tool_or_skip("claude"), str(config)), env, world.project)
    outcome, who = Outcome(f"Claude Code TUI, {scenario}"), Person()
    try:
        server_ready(world)
        type_prompt(term, world)
        submit(world, canary, who)
        outcome.screen_link = term.wait("Open this link", 20)
        outcome.dialog = term.wait(lambda s: CLAUDE_FORM in s and "Confirmation code" in s, 30)
        time.sleep(0.4)  # keys pressed while the dialog draws are lost
        CLAUDE_PEOPLE[scenario](term, who)
        outcome.final_screen = term.wait(r"Done\. Fingerprint", 30)
        page_after(who)
    finally:
        term.close()
        outcome.model_results = world.model.tool_results()
        outcome.show()
        who.show()
    declined = scenario == "declines the dialog"
    assert FORM_MESSAGE in outcome.dialog
    assert who.link in outcome.screen_link.replace("\n", "").replace(" ", "")
    assert_held_then_written(world, who, canary)
    assert f"Done. Fingerprint {who.fingerprint}" in outcome.final_screen
    assert_code_used_once(world, who, by_model=declined)
    asked = confirm_results(world)
    if declined:
        (result,) = asked
        assert CODE_NOTE in result["note"]
        assert result["tries_left"] == 5
        assert ASK_CODE in outcome.final_screen
    else:
        assert asked == []  # the model never had to ask
    assert code_places(world, who, model_has_it=declined) == []
    assert world.places_holding(canary, ("terminal", bytes(term.raw))) == []


# -- Codex ----------------------------------------------------------------------------------------


def codex_forms(world: World) -> list[dict[str, Any]]:
    """The legacy form elicitations offprompt sent Codex, and Codex's answers to them."""
    asked = [
        m
        for m in world.mcp_messages(".out")
        if m.get("method") == "elicitation/create" and m["params"].get("mode") == "form"
    ]
    ids = {m["id"] for m in asked}
    answers = [m for m in world.mcp_messages(".in") if m.get("id") in ids and "method" not in m]
    return asked + answers


@dataclass
class Printed:
    """A print-mode run: what the person saw and what the host printed."""

    who: Person
    stdout: str
    stderr: str
    returncode: int


def run_print_mode(
    world: World, argv: list[str], env: dict[str, str], started: Callable[[Person], None]
) -> Printed:
    """The host in print mode; the person submits the link the model got, and is the one the
    model asks for the code (the scripted model's `code_in_turn`: nobody is at a prompt)."""
    who = Person()
    started(who)
    host = subprocess.Popen(
        argv,
        env=env,
        cwd=world.project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        submit(world, world.canary, who)
        stdout, stderr = host.communicate(timeout=60)
        # offprompt ends with the host: the page, asking every 2 s, missed the write, and
        # now says it cannot reach offprompt (`unreachable` here).
        try:
            page_after(who)
        except OSError:
            who.page_after = {"status": "unreachable"}
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate()
        who.show()
    return Printed(who, stdout, stderr, host.returncode)


def print_model(kind: str, who: Callable[[], Person | None]) -> ScriptedModel:
    """A scripted model told the code by the person within its turn, once the page shows it."""

    def code() -> str | None:
        person_now = who()
        return (person_now.code or None) if person_now else None

    return ScriptedModel(kind, ARGUMENTS, code_in_turn=code)


def assert_print_mode(world: World, run: Printed, canary: str) -> None:
    """The `confirm` result and its note reached the model; it passed the person's code as
    `confirm`, once; written; the fingerprint printed; code and canary nowhere else."""
    who = run.who
    assert run.returncode == 0, run.stderr
    (result,) = confirm_results(world)
    assert CODE_NOTE in result["note"]
    assert result["tries_left"] == 5
    assert_held_then_written(world, who, canary, page_saw="unreachable")
    assert f"Done. Fingerprint {who.fingerprint}" in run.stdout
    assert_code_used_once(world, who, by_model=True)
    assert code_places(world, who, model_has_it=True) == []
    for code in code_forms(who):
        assert code not in run.stdout + run.stderr
    outputs = ("stdout", run.stdout.encode()), ("stderr", run.stderr.encode())
    assert world.places_holding(canary, *outputs) == []


def test_codex_exec_declines_the_form_and_the_model_asks_for_the_code(
    make_world: MakeWorld, canary: str
) -> None:
    """`codex exec` declines offprompt's form for the code unseen (legacy
    `elicitation/create`), so the `confirm` result and its note reach the model, which asks
    and passes the person's answer as `confirm`: written, the fingerprint on stdout."""
    runs: list[Person] = []
    model = print_model("openai", lambda: runs[0] if runs else None)
    world = remote(make_world("openai", model=model))
    argv = [tool_or_skip("codex"), "exec", "--skip-git-repo-check", PROMPT]
    run = run_print_mode(world, argv, world.codex(), runs.append)
    asked, answer = codex_forms(world)
    assert asked["params"]["message"] == FORM_MESSAGE
    assert answer["result"] == {"action": "decline"}
    assert_print_mode(world, run, canary)


def test_claude_print_mode_cancels_the_form_and_the_model_asks_for_the_code(
    make_world: MakeWorld, canary: str
) -> None:
    """`claude -p` retries offprompt's form (`input_required`) with `cancel` at once, so the
    `confirm` result and its note reach the model, which asks and passes the person's answer
    as `confirm`: written, the fingerprint on stdout."""
    runs: list[Person] = []
    model = print_model("anthropic", lambda: runs[0] if runs else None)
    world = remote(make_world("anthropic", model=model))
    env, config = world.claude()
    argv = claude_argv(tool_or_skip("claude"), str(config), "-p", PROMPT)
    run = run_print_mode(world, argv, env, runs.append)
    retries = [m for m in world.mcp_messages(".in") if m.get("params", {}).get("inputResponses")]
    assert [r["params"]["inputResponses"] for r in retries] == [
        {"offprompt_code": {"action": "cancel"}}
    ]
    assert_print_mode(world, run, canary)


def test_codex_tui_shows_the_form_and_writes(make_world: MakeWorld, canary: str) -> None:
    """Codex's TUI shows offprompt's form for the code (legacy `elicitation/create`); the
    person types what their page shows and presses Enter: written, the headline and the
    model's fingerprint on screen, and the code in no model request or session file."""
    world = remote(make_world("openai"))
    term = Terminal([tool_or_skip("codex")], world.codex(), world.project)
    outcome, who = Outcome("Codex TUI"), Person()
    try:
        server_ready(world)
        type_prompt(term, world)
        submit(world, canary, who)
        outcome.screen_link = term.wait("Open this link", 20)
        outcome.dialog = term.wait(lambda s: FORM_MESSAGE in s and CODEX_FORM in s, 30)
        time.sleep(0.4)
        type_line(term, who.code)
        outcome.final_screen = term.wait(r"Done\. Fingerprint", 30)
        page_after(who)
    finally:
        term.close()
        outcome.model_results = world.model.tool_results()
        outcome.show()
        who.show()
    assert "Confirmation code" in outcome.dialog
    asked, answer = codex_forms(world)
    assert asked["params"]["message"] == FORM_MESSAGE
    assert answer["result"]["action"] == "accept"
    assert_held_then_written(world, who, canary)
    assert confirm_results(world) == []
    headline = f"Wrote 1 value to .env · fingerprint {who.fingerprint}"
    assert headline in outcome.final_screen
    assert f"Done. Fingerprint {who.fingerprint}" in outcome.final_screen
    assert re.search(MODEL_SAID, outcome.final_screen)
    assert_code_used_once(world, who, by_model=False)
    assert code_places(world, who, model_has_it=False) == []
    assert world.places_holding(canary, ("terminal", bytes(term.raw))) == []
