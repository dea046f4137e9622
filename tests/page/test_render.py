"""Every answer's security headers, and what the form page shows (escaped, self-contained)."""

import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.store import RequestRecord, RequestStore

from .conftest import csp_nonce, path_of

MakeRequest = Callable[..., RequestRecord]


def track(project: Path, name: str) -> None:
    """Make `project` a git repository that tracks `name`."""
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", name], cwd=project, check=True)


HEADERS = {
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
}
CSP_PARTS = [
    "default-src 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "img-src 'self' data:",
    "connect-src 'self'",
]


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("GET", "{page}", {}),
        ("GET", "{page}/status", {}),
        ("GET", "/nowhere", {}),
        ("GET", "{page}", {"Host": "evil.example"}),
        ("GET", "{page}", {"Origin": "http://evil.example"}),
        ("POST", "{page}", {}),
        ("PUT", "{page}", {}),
        ("GET", "{page}?x", {}),
    ],
)
async def test_every_answer_carries_the_security_headers(
    client: TestClient, make_request: MakeRequest, method: str, path: str, headers: dict[str, str]
) -> None:
    """200, 404, 421, 403, 405 and JSON answers alike carry CSP and the other headers."""
    url = path.format(page=path_of(make_request()))
    resp = await client.request(method, url, headers=headers, data=b"nonce=x")
    csp = resp.headers["Content-Security-Policy"]
    nonce = csp_nonce(csp)
    assert {k: resp.headers.get(k) for k in HEADERS} == HEADERS
    assert [part in csp for part in CSP_PARTS] == [True] * len(CSP_PARTS)
    assert f"style-src 'nonce-{nonce}'" in csp
    assert "unsafe" not in csp


async def test_csp_nonce_is_fresh_per_response_and_marks_every_script_and_style(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Each response gets a new nonce, and every executable block in the page carries it."""
    req = make_request()
    first, second = await client.get(path_of(req)), await client.get(path_of(req))
    nonce = csp_nonce(first.headers["Content-Security-Policy"])
    body = await first.text()
    tags = re.findall(r"<(script|style)\b([^>]*)>", body)
    executable = [attrs for tag, attrs in tags if 'type="application/json"' not in attrs]
    assert nonce != csp_nonce(second.headers["Content-Security-Policy"])
    assert executable
    assert all(f'nonce="{nonce}"' in attrs for attrs in executable)


async def test_page_loads_nothing_from_anywhere_else(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Every src and action stays on this server; no http:// appears at all."""
    body = await (await client.get(path_of(make_request()))).text()
    refs = re.findall(r"""\b(?:src|action)\s*=\s*["']([^"']*)""", body)
    assert refs
    assert all(r.startswith("/r/") for r in refs)
    assert "http://" not in body


async def test_only_links_are_the_registry_get_it_links(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The page's only https links are the registry's "Get it" links for the asked keys."""
    req = make_request(SecretSpec("STRIPE_SECRET_KEY"), SecretSpec("MY_OWN_THING"))
    body = await (await client.get(path_of(req))).text()
    anchors = re.findall(r"<a\b([^>]*)>", body)
    hrefs = re.findall(r"""\bhref\s*=\s*["']([^"']*)""", body)
    assert [h for h in hrefs if not h.startswith("data:")] == [
        "https://dashboard.stripe.com/apikeys"
    ]
    assert len(anchors) == 1
    assert 'class="get"' in anchors[0]
    assert 'rel="noopener noreferrer"' in anchors[0]


async def test_page_carries_the_nonce_in_a_hidden_input(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The form holds the request nonce in a hidden input named nonce."""
    req = make_request()
    body = await (await client.get(path_of(req))).text()
    assert f'<input type="hidden" name="nonce" value="{req.nonce}">' in body


async def test_reason_and_client_are_escaped(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """The agent's reason and client name are shown as text, never as HTML."""
    req = store.create(
        [SecretSpec("API_KEY")],
        SinkSpec(),
        project,
        '<script>alert(1)</script><img src=x onerror="y">',
        ttl=300,
        client="<b>Agent</b>",
    )
    body = await (await client.get(path_of(req))).text()
    assert "<script>alert(1)" not in body
    assert "<img src=x" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body
    assert "&lt;b&gt;Agent" in body


async def test_bidi_controls_in_the_reason_are_spelled_out(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """A right-to-left override cannot make the reason read as something else."""
    req = store.create([SecretSpec("K")], SinkSpec(), project, "ok \u202egnp.exe", ttl=300)
    body = await (await client.get(path_of(req))).text()
    assert "\u202e" not in body
    assert "\\u202e" in body


async def test_one_textarea_per_secret_named_by_the_secret(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Each secret gets a textarea named by its name, in request order."""
    req = make_request(SecretSpec("B_KEY"), SecretSpec("A_KEY", secret=False))
    body = await (await client.get(path_of(req))).text()
    assert re.findall(r'<textarea[^>]*\bname="([A-Z_]+)"', body) == ["B_KEY", "A_KEY"]


async def test_secret_fields_are_masked_and_clear_ones_are_not(
    client: TestClient, make_request: MakeRequest
) -> None:
    """secret entries carry the masking class; secret=false entries show in clear."""
    req = make_request(SecretSpec("HIDDEN_KEY"), SecretSpec("SHOWN_URL", secret=False))
    body = await (await client.get(path_of(req))).text()
    classes = dict(re.findall(r'<textarea[^>]*name="([A-Z_]+)"[^>]*class="([^"]*)"', body))
    assert classes == {"HIDDEN_KEY": "value masked", "SHOWN_URL": "value"}


async def test_generated_field_is_left_empty_for_the_script_or_the_server(
    client: TestClient, make_request: MakeRequest
) -> None:
    """A generated secret's textarea is empty, marked for the script, and not required."""
    req = make_request(SecretSpec("GEN", generate=GenerateSpec(16, "hex")))
    body = await (await client.get(path_of(req))).text()
    (tag,) = re.findall(r"<textarea[^>]*></textarea>", body)
    assert 'data-generate-bytes="16"' in tag
    assert 'data-generate-encoding="hex"' in tag
    assert "required" not in tag


async def test_generated_key_already_in_the_file_is_not_prefilled(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A generated key the file holds is not marked for generation: empty keeps it."""
    (project / ".env").write_text("GEN=old\n")
    req = make_request(SecretSpec("GEN", generate=GenerateSpec()))
    body = await (await client.get(path_of(req))).text()
    (tag,) = re.findall(r"<textarea[^>]*></textarea>", body)
    assert "data-generate-bytes" not in tag
    assert "leave it empty to keep it" in body


async def test_tracked_destination_shows_the_warning_and_the_override(
    client: TestClient, make_request: MakeRequest, project: Path
) -> None:
    """A tracked .env shows the git warning with the allow_tracked checkbox visible."""
    (project / ".env").write_text("")
    track(project, ".env")
    body = await (await client.get(path_of(make_request()))).text()
    assert '<div class="tracked warn" id="tracked">' in body
    assert 'name="allow_tracked" value="1"' in body


async def test_untracked_destination_hides_the_override(
    client: TestClient, make_request: MakeRequest
) -> None:
    """Outside git the override is in the page but hidden."""
    body = await (await client.get(path_of(make_request()))).text()
    assert '<div class="tracked warn" id="tracked" hidden>' in body


async def test_emoji_table_is_embedded_as_json(
    client: TestClient, make_request: MakeRequest
) -> None:
    """The page embeds the 64-entry emoji table for its script."""
    body = await (await client.get(path_of(make_request()))).text()
    assert '<script type="application/json" id="emoji-table">[["\U0001f34b","lemon"]' in body


async def test_gone_page_is_html_for_a_browser_and_json_for_the_script(
    client: TestClient, make_request: MakeRequest, store: RequestStore
) -> None:
    """Errors follow Accept: an HTML page by default, {"error": ...} for JSON."""
    req = make_request()
    store.cancel(req)
    html = await client.get(path_of(req))
    data = await client.get(path_of(req), headers={"Accept": "application/json"})
    assert (html.status, html.content_type, data.status) == (410, "text/html", 410)
    assert "cancelled" in (await data.json())["error"]
