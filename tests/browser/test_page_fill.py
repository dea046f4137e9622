"""Filling many fields at once in Chromium: a pasted .env block, a chosen file, a dropped file."""

import pytest
from dotenv import dotenv_values
from playwright.sync_api import BrowserContext

from offprompt.spec import SecretSpec

from .conftest import LiveServer
from .kit import dom, drop_file, paste, record

pytestmark = pytest.mark.browser

KEYS = (SecretSpec("API_KEY"), SecretSpec("DB_PASSWORD"), SecretSpec("SIGNING_SECRET"))


def block(canary: str) -> str:
    """A .env as copied from a dashboard or a teammate: comments, export, quotes, extras."""
    return (
        "# production\n"
        f"API_KEY={canary}-a\n"
        f"export DB_PASSWORD='{canary}-b'\n"
        f"OTHER_THING={canary}-other\n"
        "NODE_ENV=production\n"
    )


def test_paste_of_a_block_fills_every_field_it_names(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Pasting NAME=value lines into one field fills each named field, with a banner."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    paste(page, "textarea[name=API_KEY]", block(canary))
    banner = page.locator("#banner")
    banner.wait_for()
    values = [page.input_value(f"textarea[name={k.name}]") for k in KEYS]
    assert values == [f"{canary}-a", f"{canary}-b", ""]
    assert banner.inner_text().splitlines()[0] == (
        "Filled API_KEY and DB_PASSWORD from the pasted text. Skipped 2 keys this page did not "
        "ask for: OTHER_THING and NODE_ENV. Still to fill: SIGNING_SECRET."
    )


def test_keys_the_page_did_not_ask_for_never_reach_the_page(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """A skipped key's value is in no field and nowhere in the document."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    paste(page, "textarea[name=API_KEY]", block(canary))
    page.locator("#banner").wait_for()
    assert f"{canary}-other" not in dom(page)


def test_undo_puts_back_what_the_fields_held(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Undo restores every field the paste changed, and the banner says so."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    page.fill("textarea[name=DB_PASSWORD]", "typed before")
    paste(page, "textarea[name=API_KEY]", block(canary))
    page.click("#undo")
    values = [page.input_value(f"textarea[name={k.name}]") for k in KEYS]
    assert values == ["", "typed before", ""]
    assert page.inner_text("#banner-text").startswith("Undone")
    assert page.locator("#undo").is_hidden()


def test_paste_naming_none_of_the_keys_is_an_ordinary_paste(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """A value, or lines for other keys, paste into the field as typed text; no banner."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    paste(page, "textarea[name=API_KEY]", f"{canary}==\nNOT_ASKED=1")
    assert page.input_value("textarea[name=API_KEY]") == f"{canary}==\nNOT_ASKED=1"
    assert page.locator("#banner").is_hidden()


def test_paste_anywhere_on_the_page_fills_the_fields(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """With no field focused, Ctrl+V on the page still fills the named fields."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    paste(page, None, f"SIGNING_SECRET={canary}\n")
    page.locator("#banner").wait_for()
    assert page.input_value("textarea[name=SIGNING_SECRET]") == canary


def test_pasted_values_are_written_and_fingerprints_match(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Paste, fill the last one, write: the file holds the pasted values, the emoji agree."""
    req = live.create(*KEYS)
    page = clip.new_page()
    page.goto(live.url(req))
    paste(page, "textarea[name=API_KEY]", block(canary))
    page.fill("textarea[name=SIGNING_SECRET]", f"{canary}-c")
    page.click("#submit")
    page.locator("#written").wait_for()
    assert dotenv_values(live.project / ".env") == {
        "API_KEY": f"{canary}-a",
        "DB_PASSWORD": f"{canary}-b",
        "SIGNING_SECRET": f"{canary}-c",
    }
    assert req.outcome is not None
    assert page.get_attribute("#fp-check", "data-page-fingerprint") == req.outcome.fingerprint


def test_chosen_env_file_fills_the_fields_and_is_never_uploaded(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """Choose file reads the .env in the page: fields fill, and no request carries it."""
    page = clip.new_page()
    sent = record(page)
    page.goto(live.url(live.create(*KEYS)))
    page.set_input_files(
        "#env-file",
        files=[
            {"name": ".env.production", "mimeType": "text/plain", "buffer": block(canary).encode()}
        ],
    )
    page.locator("#banner").wait_for()
    page.wait_for_timeout(300)
    assert page.input_value("textarea[name=DB_PASSWORD]") == f"{canary}-b"
    assert page.inner_text("#banner-text").startswith(
        "Filled API_KEY and DB_PASSWORD from .env.production."
    )
    assert (sent.posts(), [s for s in sent.sent if canary in s.body + s.url]) == ([], [])


def test_dropped_env_file_fills_the_fields(
    live: LiveServer, clip: BrowserContext, canary: str
) -> None:
    """A .env dropped anywhere on the page fills the fields it names; nothing is sent."""
    page = clip.new_page()
    sent = record(page)
    page.goto(live.url(live.create(*KEYS)))
    drop_file(page, ".env", block(canary))
    page.locator("#banner").wait_for()
    assert page.input_value("textarea[name=API_KEY]") == f"{canary}-a"
    assert sent.posts() == []


def test_file_naming_none_of_the_keys_says_so(live: LiveServer, clip: BrowserContext) -> None:
    """A file without any asked key fills nothing and says which keys the page wants."""
    page = clip.new_page()
    page.goto(live.url(live.create(*KEYS)))
    drop_file(page, "other.env", "PORT=3000\n")
    page.locator("#banner").wait_for()
    assert page.inner_text("#banner-text") == (
        "other.env names none of the keys asked for here (API_KEY, DB_PASSWORD and "
        "SIGNING_SECRET). Nothing was filled."
    )
    assert page.input_value("textarea[name=API_KEY]") == ""
