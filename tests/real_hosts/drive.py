"""The person at a host's terminal, and what one scenario ended with (its row in the table)."""

from __future__ import annotations

import functools
import json
import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from .harness import PROMPT, World
from .model import CLAUDE_AWAIT, CLAUDE_TOOL
from .terminal import Terminal

DIALOG = "wants to open a URL"
DONE = "I'm done, continue"
# What the scripted model says once it has a result (model.reply_for).
SELECTED = "\u276f"  # the marker before the dialog's selected button
MODEL_SAID = r"Done\. Fingerprint|Open this link|gave no fingerprint"


@dataclass
class Outcome:
    """One scenario's row: tabs by opener, whether the page loaded, what the model got and
    what the screen said after the write."""

    scenario: str
    tabs: dict[str, int] = field(default_factory=dict)
    reachable: bool = False
    page_fingerprint: str | None = None
    model_results: list[str] = field(default_factory=list)
    model_fingerprints: list[str] = field(default_factory=list)
    tabs_after_decline: dict[str, int] | None = None
    screen_link: str = ""
    dialog: str = ""
    dialog_after_write: bool | None = None
    written_page: str = ""
    screen_after_write: str = ""
    final_screen: str = ""
    seconds: float = 0.0

    def show(self) -> None:
        """Printed, so a failing test (and `pytest -s`) shows the whole row."""
        print("OUTCOME " + json.dumps(asdict(self), ensure_ascii=False))


def collect(world: World, outcome: Outcome) -> Outcome:
    """Fill in what the person's log and the model's requests say."""
    outcome.tabs = world.tabs()
    outcome.reachable = any(n.get("status") == 200 and n.get("form") for n in world.loads())
    writes = [w for w in world.writes() if w.get("post_status") == 200]
    # Whatever the scenario, no page served after a write may show a value (the person's log
    # checks the whole page body).
    assert not any(w.get("echoed") for w in world.writes()), "a page after the write shows a value"
    if writes:
        outcome.page_fingerprint = writes[0]["fingerprint"]
        outcome.written_page = writes[0]["written_text"]
    outcome.model_results = world.model.tool_results()
    outcome.model_fingerprints = world.model.fingerprints()
    outcome.seconds = round(time.monotonic() - world.started, 1)
    return outcome


def server_ready(world: World, timeout: float = 30) -> None:
    """Wait until the host has listed offprompt's tools (its answer crossed the tee)."""
    deadline = time.monotonic() + timeout
    while b'"collect_secret"' not in b"".join(p.read_bytes() for p in world.tee.glob("*.out")):
        if time.monotonic() > deadline:
            raise TimeoutError("the host never listed offprompt's tools")
        time.sleep(0.05)


def type_prompt(term: Terminal, world: World) -> None:
    """The person types the request into the host's input box and presses Enter (again, if
    the host did not take it: a busy machine can drop keys while the TUI settles)."""
    term.child.send(PROMPT)
    soft_wait(term, re.escape(PROMPT), 5)
    for _attempt in range(3):
        term.press("enter")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if world.model.conversation():
                return
            time.sleep(0.05)
    raise TimeoutError(f"the host never sent the prompt to the model; screen:\n{term.screen()}")


def soft_wait(term: Terminal, pattern: str | Callable[[str], bool], timeout: float) -> bool:
    try:
        term.wait(pattern, timeout)
    except TimeoutError:
        return False
    return True


# -- Claude Code's URL dialog ------------------------------------------------------------------


# The model may call these without the person approving each call.
ALLOWED = f"{CLAUDE_TOOL},{CLAUDE_AWAIT}"


def claude_argv(claude: str, config: str, *first: str) -> list[str]:
    """Claude Code with offprompt only; `first` (e.g. `-p PROMPT`) goes before the options."""
    options = ["--mcp-config", config, "--strict-mcp-config", "--allowedTools", ALLOWED]
    return [claude, *first, *options]


def dialog_showing(term: Terminal) -> bool:
    return DIALOG in term.screen() and DONE in term.screen()


def _options_line(screen: str) -> str:
    for line in screen.splitlines():
        if DONE in line and "Decline" in line:
            return line
    raise LookupError(f"no dialog buttons on screen:\n{screen}")


def _buttons(term: Terminal) -> str | None:
    """The dialog's buttons line, or None once the dialog is gone."""
    try:
        return _options_line(term.screen())
    except LookupError:
        return None


def _changed(term: Terminal, was: str, _screen: str) -> bool:
    return _buttons(term) != was


def choose(term: Terminal, label: str) -> None:
    """Move the dialog's selection to the button starting with `label` (←/→), then press
    Enter, as a person does: again if nothing visibly happened."""
    time.sleep(0.4)  # a person's reaction time; keys pressed while the dialog draws are lost
    for _ in range(8):
        line = _options_line(term.screen())
        before, _, after = line.partition(SELECTED)
        names = [o.strip() for o in re.split(r"\s{2,}", (before + after).strip()) if o.strip()]
        current = len([o for o in re.split(r"\s{2,}", before.strip()) if o.strip()])
        target = next(i for i, name in enumerate(names) if name.startswith(label))
        if target != current:
            term.press("right" if target > current else "left")
            continue
        for _attempt in range(3):
            term.press("enter")
            if soft_wait(term, functools.partial(_changed, term, line), 2):
                return
        raise RuntimeError(f"pressing {label!r} changed nothing: {line}")
    raise RuntimeError(f"could not select {label!r}: {_options_line(term.screen())}")


def after_write(term: Terminal, world: World, outcome: Outcome) -> None:
    """Wait for the person's write; note the screen then; if the dialog still shows, press
    "I'm done, continue" as the Written page tells them to."""
    # Time enough for the longest rung (the dialog wait, then a browser's cold start).
    timeout = world.dialog_wait_ms / 1000 + world.cold_start + 6
    if not world.wait_for("written", timeout=timeout):
        return
    time.sleep(0.5)  # what the terminal shows a moment after the page said Written
    outcome.screen_after_write = term.screen()
    outcome.dialog_after_write = dialog_showing(term)
    if outcome.dialog_after_write:
        choose(term, DONE)


def result_of(text: str) -> dict[str, Any]:
    """The structuredContent JSON in a tool result as the model got it (Codex prefixes it)."""
    out: dict[str, Any] = json.loads(text[text.index("{") :])
    return out
