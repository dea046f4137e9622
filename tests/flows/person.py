"""The person at the browser, as a `$BROWSER` command: `python tests/flows/person.py URL`.

PERSON_MODE chooses what the person does with the page offprompt opened:
- `http` (default): GET the page, read its hidden `nonce`, POST PERSON_VALUES (JSON) as the
  plain form would, with a fingerprint key of our own;
- `chromium`: open the page in headless Chromium, type each value, submit, read the emoji;
- `record`: only note the URL (the page is "open" and nobody has typed yet), then exit after
  PERSON_DELAY seconds (default 0), like a browser slow to hand back.
Every mode exits 0 at once, as a browser that opened would; the work goes on in a forked child.
Each outcome is one JSON line appended to PERSON_OUT: `{"url", "fingerprint"}` or `{"error"}`.
The fingerprint is computed here from DESIGN §7, independently of offprompt's own code.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import re
import secrets
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from http.cookiejar import CookieJar
from typing import Any

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]+)">')
FIELD = re.compile(r'<textarea [^>]*name="([A-Z][A-Z0-9_]*)"')


def expected_fingerprint(fp_key: bytes, pairs: Sequence[tuple[str, str]]) -> str:
    """DESIGN §7, written out again: HMAC-SHA256, first 3 bytes, four 6-bit indices."""
    from offprompt.crypto.fingerprint import EMOJI

    payload = json.dumps([list(p) for p in pairs], separators=(",", ":"), ensure_ascii=False)
    mac = hmac.new(fp_key, b"offprompt/fingerprint/v1\n" + payload.encode(), "sha256").digest()
    n = int.from_bytes(mac[:3], "big")
    return " ".join(EMOJI[i][0] for i in ((n >> 18) & 63, (n >> 12) & 63, (n >> 6) & 63, n & 63))


class PageRefused(Exception):
    """The page answered a submit with an error status."""

    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"the page answered HTTP {status}")
        self.status = status
        self.body = body


@dataclass(frozen=True)
class Form:
    """What a person's browser holds after loading the page: its URL, nonce and fields."""

    url: str
    nonce: str
    names: tuple[str, ...]


# One browser: it keeps the claim cookie each page hands it (DESIGN §17) for its later posts.
_BROWSER = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


def _fetch(request: str | urllib.request.Request) -> tuple[int, str]:
    try:
        with _BROWSER.open(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


def open_form(url: str) -> Form:
    """GET the page as a browser without JavaScript would."""
    status, html = _fetch(url)
    if status != 200:
        raise PageRefused(status, html)
    found = NONCE.search(html)
    if found is None:
        raise RuntimeError("the page has no nonce input")
    return Form(url, found.group(1), tuple(FIELD.findall(html)))


def post_form(form: Form, values: dict[str, str]) -> str:
    """POST the fields the page asks for; the fingerprint the person expects (DESIGN §7).

    Only the fields the page asks for are sent, so one `values` can serve several pages.
    Raises PageRefused for any answer but 200, and if the answer disagrees or echoes a value.
    """
    return post_answer(form, values)[0]


def post_answer(form: Form, values: dict[str, str]) -> tuple[str, dict[str, Any]]:
    """`post_form`, plus the page's JSON answer."""
    values = {name: values[name] for name in form.names if name in values}
    fp_key = secrets.token_bytes(32)
    fields = {"nonce": form.nonce, **values}
    fields["fp_key"] = base64.urlsafe_b64encode(fp_key).rstrip(b"=").decode()
    post = urllib.request.Request(  # noqa: S310 - loopback test URL
        form.url,
        data=urllib.parse.urlencode(fields).encode(),
        headers={"Accept": "application/json"},
        method="POST",
    )
    status, body = _fetch(post)
    for value in values.values():
        if value and value in body:
            raise RuntimeError("the page echoed a value")
    if status != 200:
        raise PageRefused(status, body)
    data = json.loads(body)
    mine = expected_fingerprint(fp_key, [(k, v) for k, v in values.items() if v])
    if data.get("fingerprint") != mine:
        raise RuntimeError(f"page answered fingerprint {data.get('fingerprint')}, expected {mine}")
    return mine, data


def http_submit(url: str, values: dict[str, str]) -> str:
    """Load the page and submit `values` as a plain form; the fingerprint the person expects."""
    return post_form(open_form(url), values)


def chromium_submit(url: str, values: dict[str, str], executable: str) -> str:
    """Type the values into the page in headless Chromium; the four emoji the page shows."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            return fill_page(browser, url, values)
        finally:
            browser.close()


def fill_page(browser: Any, url: str, values: dict[str, str]) -> str:
    """One person at one page: type, submit, wait for Written, read and check the emoji.

    Types only the fields the page asks for, so one `values` can serve several pages.
    Raises if the page's own fingerprint differs from the server's, or if anything the page
    received back holds a value.
    """
    return fill_page_and_read(browser, url, values)[0]


def fill_page_and_read(browser: Any, url: str, values: dict[str, str]) -> tuple[str, str]:
    """`fill_page`, plus the text of the Written view the person reads."""
    context = browser.new_context()
    bodies: list[bytes] = []
    try:
        page = context.new_page()

        def keep(response: Any) -> None:
            try:
                bodies.append(response.body())
            except Exception:  # a response without a body (redirect, aborted load)
                bodies.append(b"")

        page.on("response", keep)
        page.goto(url)
        asked = page.locator("textarea.value").evaluate_all("els => els.map(e => e.name)")
        typed = {name: values[name] for name in asked if name in values}
        if not typed:
            raise RuntimeError(f"the page asks for {asked}, none of which the person knows")
        for name, value in typed.items():
            page.locator(f'textarea[name="{name}"]').fill(value)
        page.locator("#submit").click()
        page.locator("#written").wait_for(timeout=30_000)
        shown = page.locator("#fp-server").inner_text().strip()
        written = page.locator("#written").inner_text()
        check = page.locator("#fp-check")
        computed = check.get_attribute("data-page-fingerprint") or ""
        if computed != shown or "match" not in (check.get_attribute("class") or "").split():
            raise RuntimeError(f"page computed {computed!r} but shows {shown!r}")
    finally:
        context.close()
    for value in typed.values():
        if value and any(value.encode() in body for body in bodies):
            raise RuntimeError("a response to the page held a value")
    return shown, written


def _note(record: dict[str, Any]) -> None:
    with open(os.environ["PERSON_OUT"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _act(url: str, mode: str) -> None:
    values = json.loads(os.environ.get("PERSON_VALUES", "{}"))
    try:
        if mode == "chromium":
            chromium = os.environ.get("PERSON_CHROMIUM", "/usr/bin/chromium")
            fingerprint = chromium_submit(url, values, chromium)
        else:
            fingerprint = http_submit(url, values)
    except Exception as exc:  # reported to the test through PERSON_OUT
        _note({"url": url, "error": f"{type(exc).__name__}: {exc}"})
    else:
        _note({"url": url, "fingerprint": fingerprint})


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        return 2
    url = argv[0]
    mode = os.environ.get("PERSON_MODE", "http")
    if mode == "record":
        _note({"url": url})
        # A browser that takes a while to hand back (PERSON_DELAY seconds) keeps the opener busy.
        time.sleep(float(os.environ.get("PERSON_DELAY", "0")))
        return 0
    if os.fork():
        return 0  # the "browser" opened; the person takes their time in the child
    try:
        _act(url, mode)
    finally:
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
