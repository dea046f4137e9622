"""Each field as served: registry label, tile, link, rules (enforced or advice), masking, height."""

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.page.fields import initials
from offprompt.spec import GenerateSpec, SecretSpec
from offprompt.store import RequestRecord

from .conftest import path_of

MakeRequest = Callable[..., RequestRecord]


async def page(client: TestClient, req: RequestRecord) -> str:
    return await (await client.get(path_of(req))).text()


def field_block(body: str, name: str) -> str:
    """The markup of one field, from its div to the next field (or the tracked box)."""
    match = re.search(
        rf'<div class="field[^"]*" id="field-{name}">(.*?)'
        r'(?=<div class="field(?: invalid)?" id=|<div class="tracked)',
        body,
        re.DOTALL,
    )
    assert match is not None
    return match.group(1)


def textarea(body: str, name: str) -> str:
    match = re.search(rf'<textarea [^>]*name="{name}"[^>]*>', body)
    assert match is not None
    return match.group(0)


def page_data(body: str) -> dict[str, object]:
    match = re.search(r'<script type="application/json" id="page-data">(.*?)</script>', body)
    assert match is not None
    data: dict[str, object] = json.loads(match.group(1))
    return data


@pytest.mark.parametrize(
    ("name", "letters"),
    [
        ("Stripe", "S"),
        ("Google Cloud", "GC"),
        ("1Password", "1P"),
        ("Fly.io", "F"),
        ("Atlassian (Jira, Confluence)", "A"),
        ("npm", "N"),
    ],
)
def test_tile_initials(name: str, letters: str) -> None:
    """A provider's tile shows its initial, two for two-word names, digit names keep two."""
    assert initials(name) == letters


async def test_known_provider_field_has_tile_label_and_get_it_link(
    client: TestClient, make_request: MakeRequest
) -> None:
    """STRIPE_SECRET_KEY shows the S tile, "Stripe secret key" and a link to Stripe's dashboard."""
    block = field_block(
        await page(client, make_request(SecretSpec("STRIPE_SECRET_KEY"))), "STRIPE_SECRET_KEY"
    )
    assert re.search(r'<span class="tile t[0-7]" aria-hidden="true">S</span>', block)
    assert '<span class="what">Stripe secret key</span>' in block
    assert 'href="https://dashboard.stripe.com/apikeys" target="_blank"' in block
    assert '<label for="v-STRIPE_SECRET_KEY" class="key">STRIPE_SECRET_KEY</label>' in block


async def test_unknown_key_has_no_tile_link_or_rules(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A name the registry does not know is a plain field: no tile, link or rule lines."""
    block = field_block(
        await page(client, make_request(SecretSpec("MY_OWN_THING"))), "MY_OWN_THING"
    )
    assert ('class="tile' in block, "<a " in block, 'class="rules' in block) == (
        False,
        False,
        False,
    )


async def test_field_found_by_name_only_gives_advice(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A key resolved from its name alone shows its rules as advice, and is not enforced."""
    body = await page(client, make_request(SecretSpec("STRIPE_SECRET_KEY")))
    block = field_block(body, "STRIPE_SECRET_KEY")
    assert '<div class="rules advice" id="r-STRIPE_SECRET_KEY">' in block
    assert "it is written either way" in block
    assert page_data(body)["enforced"] == []


async def test_field_with_a_named_provider_is_checked_before_writing(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A key whose provider the agent named shows enforced rules, listed in the page's data."""
    body = await page(client, make_request(SecretSpec("MAIL_KEY", provider="resend")))
    block = field_block(body, "MAIL_KEY")
    assert '<div class="rules enforced" id="r-MAIL_KEY">' in block
    assert "Checked before writing:" in block
    assert '<li class="rule" data-rule="prefix">' in block
    assert "starts with re_" in block
    assert page_data(body)["enforced"] == ["MAIL_KEY"]


async def test_rules_are_described_by_the_textarea(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The textarea's aria-describedby covers the caption, blanks note, rule lines and errors."""
    body = await page(client, make_request(SecretSpec("STRIPE_SECRET_KEY", caption="Live mode")))
    assert (
        'aria-describedby="c-STRIPE_SECRET_KEY b-STRIPE_SECRET_KEY r-STRIPE_SECRET_KEY'
        ' e-STRIPE_SECRET_KEY"' in textarea(body, "STRIPE_SECRET_KEY")
    )


async def test_registry_placeholder_and_escaped_caption(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The placeholder comes from the registry; the agent's caption is escaped."""
    req = make_request(SecretSpec("RESEND_API_KEY", caption="<b>from</b> the team"))
    body = await page(client, req)
    assert 'placeholder="re_…"' in textarea(body, "RESEND_API_KEY")
    assert '<p class="caption" id="c-RESEND_API_KEY">&lt;b&gt;from&lt;/b&gt; the team</p>' in body


async def test_multi_line_format_is_taller_and_in_clear(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A PEM key gets eight rows, no masking and no single-line marker."""
    tag = textarea(
        await page(client, make_request(SecretSpec("APPLE_PRIVATE_KEY"))), "APPLE_PRIVATE_KEY"
    )
    assert ('rows="8"' in tag, "masked" in tag, "data-single-line" in tag) == (True, False, False)


async def test_single_line_secret_is_masked_with_css_in_a_textarea(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A one-line secret is a one-row textarea with the masked class, never a password input."""
    body = await page(client, make_request(SecretSpec("API_KEY")))
    tag = textarea(body, "API_KEY")
    assert ('rows="1"' in tag, 'class="value masked"' in tag) == (True, True)
    assert 'type="password"' not in body


async def test_key_the_registry_calls_public_is_shown_in_clear(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A publishable key is not a secret: its field is not masked and has no Show button."""
    body = await page(client, make_request(SecretSpec("STRIPE_PUBLISHABLE_KEY")))
    assert "masked" not in textarea(body, "STRIPE_PUBLISHABLE_KEY")
    assert 'class="reveal"' not in field_block(body, "STRIPE_PUBLISHABLE_KEY")


async def test_generated_field_offers_regenerate(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A generated key has a (script-only, hidden until then) Regenerate button."""
    body = await page(client, make_request(SecretSpec("SESSION_SECRET", generate=GenerateSpec())))
    assert (
        '<button type="button" class="regen" aria-controls="v-SESSION_SECRET" hidden>'
        "Regenerate</button>" in body
    )


async def test_generated_key_already_set_offers_generate_but_stays_empty(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A generated key the file holds is not filled on load; a Generate button makes one."""
    (project / ".env").write_text("SESSION_SECRET=old\n")
    body = await page(
        client, make_request(SecretSpec("SESSION_SECRET", generate=GenerateSpec(16, "hex")))
    )
    tag = textarea(body, "SESSION_SECRET")
    assert ('data-regen-bytes="16"' in tag, "data-generate-bytes" in tag) == (True, False)
    assert ">Generate</button>" in body


async def test_show_tool_and_blanks_note_are_hidden_until_script(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Show and the blanks note with its Remove button start hidden: they need the script."""
    block = field_block(await page(client, make_request(SecretSpec("API_KEY"))), "API_KEY")
    hidden = re.findall(r'<(\w+) (?:type="button" )?class="(\w+)"[^>]*\bhidden>', block)
    assert (hidden, 'class="trim"' in block) == (
        [("button", "reveal"), ("p", "blanks"), ("ul", "errors")],
        True,
    )


async def test_page_data_carries_registry_fields_and_hints(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The script's data: each field's registry entry (null when none), hints, sink and dest."""
    data = page_data(
        await page(client, make_request(SecretSpec("RESEND_API_KEY"), SecretSpec("X_KEY")))
    )
    fields = data["fields"]
    assert isinstance(fields, dict)
    assert (fields["RESEND_API_KEY"]["ref"], fields["X_KEY"]) == ("resend/api_key", None)
    assert (data["file_sink"], data["dest"]) == (False, ".env")
    assert isinstance(data["hints"], list)
    assert len(data["hints"]) > 50
