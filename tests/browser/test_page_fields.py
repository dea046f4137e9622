"""Each field's behaviour in Chromium: rule lines, show/hide, blanks note, generate, the button."""

import re

import pytest
from dotenv import dotenv_values
from helpers import bash_reads
from playwright.sync_api import BrowserContext, Page

from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec

from .conftest import LiveServer
from .kit import focused, paste, rule_states

pytestmark = pytest.mark.browser

RESEND = "re_" + "Abc123def456ghi789jkl"
OPENAI = "sk-proj-" + "A1b2C3d4" * 6


def open_page(live: LiveServer, context: BrowserContext, *secrets: SecretSpec) -> Page:
    page = context.new_page()
    page.goto(live.url(live.create(*secrets)))
    return page


def button(page: Page) -> str:
    return page.inner_text("#submit").strip()


def test_wrong_key_fails_its_rule_lines_then_the_fix_passes_and_writes(
    live: LiveServer, context: BrowserContext
) -> None:
    """An OpenAI key in a Resend field fails live with a hint; the right key passes and writes."""
    page = open_page(live, context, SecretSpec("RESEND_API_KEY", provider="resend"))
    page.fill("textarea[name=RESEND_API_KEY]", OPENAI)
    page.locator("#r-RESEND_API_KEY li.rule.fail").first.wait_for()
    assert rule_states(page, "RESEND_API_KEY") == ["fail", "pass", "pass"]
    assert page.inner_text("#r-RESEND_API_KEY .wrong-key") == (
        "That looks like the OpenAI API key; this field needs the Resend API key."
    )
    assert button(page) == "Fix 1 value to write"
    page.fill("textarea[name=RESEND_API_KEY]", RESEND)
    page.locator("#r-RESEND_API_KEY li.rule.pass").nth(2).wait_for()
    assert rule_states(page, "RESEND_API_KEY") == ["pass", "pass", "pass"]
    assert button(page) == "Write to .env"
    page.click("#submit")
    page.locator("#written").wait_for()
    assert dotenv_values(live.project / ".env") == {"RESEND_API_KEY": RESEND}


def test_enforced_rule_failure_is_not_sent(live: LiveServer, context: BrowserContext) -> None:
    """Submitting a failing enforced value marks the field and sends nothing."""
    page = open_page(live, context, SecretSpec("RESEND_API_KEY", provider="resend"))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.fill("textarea[name=RESEND_API_KEY]", OPENAI)
    page.click("#submit")
    page.locator("#e-RESEND_API_KEY li").wait_for()
    assert (posts, focused(page)) == ([], "textarea[RESEND_API_KEY]")


def test_rule_lines_are_pending_while_typing(live: LiveServer, context: BrowserContext) -> None:
    """Keystrokes put the lines in "pending"; a pause gives each line its verdict."""
    page = context.new_page()
    page.clock.install()
    page.goto(live.url(live.create(SecretSpec("RESEND_API_KEY", provider="resend"))))
    page.locator("textarea[name=RESEND_API_KEY]").press_sequentially("re_ab")
    pending = rule_states(page, "RESEND_API_KEY")
    page.clock.run_for(1000)
    assert (pending, rule_states(page, "RESEND_API_KEY")) == (
        ["pending", "pending", "pending"],
        ["pass", "fail", "pass"],
    )


def test_name_only_rules_are_advice_and_do_not_block(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A key known by its name alone shows a failing line as advice and still writes."""
    page = open_page(live, context, SecretSpec("STRIPE_SECRET_KEY"))
    page.fill("textarea[name=STRIPE_SECRET_KEY]", canary)
    page.locator("#r-STRIPE_SECRET_KEY li.rule.fail").first.wait_for()
    assert button(page) == "Write to .env"
    page.click("#submit")
    page.locator("#written").wait_for()
    assert dotenv_values(live.project / ".env") == {"STRIPE_SECRET_KEY": canary}


def masking(page: Page, name: str) -> str:
    style: str = page.locator(f"textarea[name={name}]").evaluate(
        "e => getComputedStyle(e).webkitTextSecurity"
    )
    return style


def test_show_and_hide_per_field_and_for_all(live: LiveServer, context: BrowserContext) -> None:
    """Show unmasks one field; Show all unmasks every field, and then reads Hide all."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    page.click("#field-A_KEY button.reveal")
    one = (masking(page, "A_KEY"), masking(page, "B_KEY"))
    page.click("#reveal-all")
    every = (masking(page, "A_KEY"), masking(page, "B_KEY"), page.inner_text("#reveal-all"))
    page.click("#reveal-all")
    again = (masking(page, "A_KEY"), masking(page, "B_KEY"))
    assert (one, every, again) == (
        ("none", "disc"),
        ("none", "none", "Hide all"),
        ("disc", "disc"),
    )


def blanks_note(page: Page, name: str) -> str | None:
    """The blanks note under a field and its button's words, `note | button` (None while hidden)."""
    note = page.locator(f"#b-{name}")
    if note.is_hidden():
        return None
    return f"{note.locator('.blanks-why').inner_text()} | {note.locator('.blanks-do').inner_text()}"


def written_fingerprints(page: Page) -> tuple[str, str | None]:
    """(the server's four emoji, the ones this page computed), from the Written view."""
    page.locator("#fp-check").wait_for()
    server = page.locator("#fp-server").inner_text().strip()
    return server, page.get_attribute("#fp-check", "data-page-fingerprint")


def test_note_names_the_blanks_at_each_end_and_remove_drops_only_them(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Blanks around a value are named, with where they are; Remove drops them and the note."""
    page = open_page(live, context, SecretSpec("API_KEY"))
    page.fill("textarea[name=API_KEY]", f"  {canary} x\t\n")
    note = blanks_note(page, "API_KEY")
    page.click("#field-API_KEY button.trim")
    assert note == (
        "It starts with 2 spaces and ends with a tab and a line break, written as part of the"
        " value. | Remove them"
    )
    assert (page.input_value("textarea[name=API_KEY]"), blanks_note(page, "API_KEY")) == (
        f"{canary} x",
        None,
    )


def test_pasted_trailing_space_is_written_exactly_when_the_note_is_ignored(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """A pasted key with a trailing space shows the note; left as is, it is written exactly."""
    req = live.create(SecretSpec("API_KEY"))
    page = clip.new_page()
    page.goto(live.url(req))
    paste(page, "textarea[name=API_KEY]", canary + " ")
    note = blanks_note(page, "API_KEY")
    page.click("#submit")
    server, mine = written_fingerprints(page)
    assert note == "It ends with a space, written as part of the value. | Remove it"
    assert (dotenv_values(live.project / ".env"), bash_reads(live.project, "API_KEY")) == (
        {"API_KEY": canary + " "},
        canary + " ",
    )
    assert req.outcome is not None
    assert (server, mine) == (req.outcome.fingerprint, req.outcome.fingerprint)


def test_pasted_trailing_space_is_dropped_when_the_person_presses_remove(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Pressing Remove after the paste writes the key without the space; the emoji still agree."""
    req = live.create(SecretSpec("API_KEY"))
    page = clip.new_page()
    page.goto(live.url(req))
    paste(page, "textarea[name=API_KEY]", canary + " ")
    page.click("#field-API_KEY button.trim")
    page.click("#submit")
    server, mine = written_fingerprints(page)
    assert (dotenv_values(live.project / ".env"), bash_reads(live.project, "API_KEY")) == (
        {"API_KEY": canary},
        canary,
    )
    assert req.outcome is not None
    assert (server, mine) == (req.outcome.fingerprint, req.outcome.fingerprint)


def test_file_sink_keeps_one_final_line_break_out_of_the_note(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """A file's final line break is expected: no note for it; an extra one is noted and dropped."""
    req = live.create(SecretSpec("KEY_PEM"), sink=SinkSpec("file", "key.pem"))
    page = context.new_page()
    page.goto(live.url(req))
    area = "textarea[name=KEY_PEM]"
    body = f"-----BEGIN-----\n{canary}\n-----END-----\n"
    page.fill(area, body)
    one = blanks_note(page, "KEY_PEM")
    page.fill(area, body + "\n")
    two = blanks_note(page, "KEY_PEM")
    page.click("#field-KEY_PEM button.trim")
    page.click("#submit")
    server, mine = written_fingerprints(page)
    assert (one, two) == (
        None,
        "It ends with a line break, written as part of the value. | Remove it",
    )
    assert (live.project / "key.pem").read_bytes() == body.encode()
    assert req.outcome is not None
    assert (server, mine) == (req.outcome.fingerprint, req.outcome.fingerprint)


def test_generated_field_is_filled_on_load_and_regenerate_changes_it(
    live: LiveServer, context: BrowserContext
) -> None:
    """A generated key holds crypto.getRandomValues output; Regenerate makes a new one."""
    page = open_page(live, context, SecretSpec("SESSION_SECRET", generate=GenerateSpec(24)))
    first = page.input_value("textarea[name=SESSION_SECRET]")
    page.click("#field-SESSION_SECRET button.regen")
    second = page.input_value("textarea[name=SESSION_SECRET]")
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", first)
    assert re.fullmatch(r"[A-Za-z0-9_-]{32}", second)
    assert first != second


def test_button_says_what_is_left(live: LiveServer, context: BrowserContext, canary: str) -> None:
    """The button counts the empty fields down, then names the file it writes to."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    seen = [button(page)]
    page.fill("textarea[name=A_KEY]", canary)
    seen.append(button(page))
    page.fill("textarea[name=B_KEY]", canary)
    seen.append(button(page))
    assert seen == ["Fill 2 values to write", "Fill 1 value to write", "Write to .env"]


def test_submit_with_an_empty_field_focuses_it_and_sends_nothing(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Write with a field left empty: it is marked Required and focused; no request is made."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    page.fill("textarea[name=A_KEY]", canary)
    page.click("#submit")
    assert (page.inner_text("#e-B_KEY"), focused(page), posts) == (
        "Required",
        "textarea[B_KEY]",
        [],
    )
    assert page.inner_text("#form-error") == "Fill in B_KEY first."


def test_ctrl_enter_submits(live: LiveServer, context: BrowserContext, canary: str) -> None:
    """Ctrl+Enter in any field writes."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    page.fill("textarea[name=A_KEY]", canary)
    page.fill("textarea[name=B_KEY]", canary + "b")
    page.press("textarea[name=A_KEY]", "Control+Enter")
    page.locator("#written").wait_for()
    assert dotenv_values(live.project / ".env") == {"A_KEY": canary, "B_KEY": canary + "b"}


def test_enter_moves_on_to_the_next_empty_field(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Enter in a one-line field goes to the next empty one instead of writing too early."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    page.fill("textarea[name=A_KEY]", canary)
    page.press("textarea[name=A_KEY]", "Enter")
    assert (focused(page), page.input_value("textarea[name=A_KEY]")) == (
        "textarea[B_KEY]",
        canary,
    )


def test_keyboard_only_fill_and_submit(
    live: LiveServer, context: BrowserContext, canary: str
) -> None:
    """Tab walks file, show-all, each field and its Show, then the button; Enter writes."""
    page = open_page(live, context, SecretSpec("A_KEY"), SecretSpec("B_KEY"))
    order = []
    for _ in range(7):
        page.keyboard.press("Tab")
        order.append(focused(page))
    assert order == [
        "button#choose",
        "button#reveal-all",
        "textarea[A_KEY]",
        "button.reveal@A_KEY",
        "textarea[B_KEY]",
        "button.reveal@B_KEY",
        "button#submit",
    ]
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.type(canary + "b")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.type(canary)
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.locator("#written").wait_for()
    assert dotenv_values(live.project / ".env") == {"A_KEY": canary, "B_KEY": canary + "b"}
    assert focused(page) == "h1#written-h"


def test_every_field_is_labelled_by_its_key(live: LiveServer, context: BrowserContext) -> None:
    """Each textarea's accessible name is its key name, from its <label>."""
    page = open_page(live, context, SecretSpec("STRIPE_SECRET_KEY"), SecretSpec("B_KEY"))
    labelled = [
        page.get_by_label("STRIPE_SECRET_KEY", exact=True).get_attribute("name"),
        page.get_by_label("B_KEY", exact=True).get_attribute("name"),
    ]
    assert labelled == ["STRIPE_SECRET_KEY", "B_KEY"]
