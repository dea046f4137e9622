"""`$BROWSER` for host tests: `python browser.py PERSON.json URL`.

Stands in for a person's browser that both openers use: the host's own ("Open in browser") and
offprompt's. Every open is one JSON line in the person's log, naming who opened it (offprompt when
an ancestor process is `offprompt serve`, the person when they pasted a link themselves
(HOSTS_OPENER=person), else the host). The opener gets exit 0 at once, as from
a browser that took the link; a forked child then waits out a browser's cold start, GETs the page,
and, for the first tab that shows a form, plays the person: fills each field from the values in
PERSON.json, submits the form as a browser without JavaScript does, and notes the four emoji the
Written page shows. PERSON.json: {"log", "values", "cold_start", "claim"}, and optionally
"hold": a path; the person loads the page only once it exists (a test decides when the page is
filled, e.g. only after the host moved the call to the background).
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from http.cookiejar import CookieJar
from typing import Any

NONCE = re.compile(r'<input type="hidden" name="nonce" value="([^"]+)">')
FIELD = re.compile(r'<textarea [^>]*name="([A-Z][A-Z0-9_]*)"')
ACTION = re.compile(r'<form method="post" action="([^"]+)" id="collect"')
FINGERPRINT = re.compile(r'id="fp-server"[^>]*>([^<]+)<')
WRITTEN = re.compile(r'<section class="written" id="written".*?</section>', re.S)
TAG = re.compile(r"<[^>]+>")
HOLD_LIMIT = 120.0


def _ancestry() -> list[str]:
    """Command lines of this process's ancestors, nearest first."""
    out = []
    pid = os.getppid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                out.append(f.read().replace(b"\0", b" ").decode(errors="replace").strip())
            with open(f"/proc/{pid}/stat") as f:
                pid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def opener(ancestry: list[str]) -> str:
    """Who opened this tab: the person by hand (HOSTS_OPENER=person), offprompt, or the host."""
    if os.environ.get("HOSTS_OPENER") == "person":
        return "person"
    return "offprompt" if any("offprompt serve" in cmd for cmd in ancestry) else "host"


# One browser: it keeps the claim cookie its first GET of a page got (DESIGN §17).
_BROWSER = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))


def fetch(request: str | urllib.request.Request) -> tuple[int, str]:
    try:
        with _BROWSER.open(request, timeout=30) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


def page_text(body: str) -> str:
    """What a person reads in an HTML fragment: tags dropped, entities decoded, spaces joined."""
    return " ".join(html.unescape(TAG.sub(" ", body)).split())


def _note(person: dict[str, Any], record: dict[str, Any]) -> None:
    with open(person["log"], "a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _claim(person: dict[str, Any]) -> bool:
    """Whether this tab is the first one the person types into."""
    try:
        os.close(os.open(person["claim"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _fill(person: dict[str, Any], url: str, page: str) -> dict[str, Any]:
    nonce = NONCE.search(page)
    action = ACTION.search(page)
    if nonce is None or action is None:
        return {"error": "the page has no form"}
    parts = urllib.parse.urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    fields = {"nonce": html.unescape(nonce.group(1))}
    fields.update({n: person["values"][n] for n in FIELD.findall(page) if n in person["values"]})
    post = urllib.request.Request(  # noqa: S310 - loopback
        origin + html.unescape(action.group(1)),
        data=urllib.parse.urlencode(fields).encode(),
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": origin,
            "Referer": url,
            "Sec-Fetch-Site": "same-origin",
            "Sec-Fetch-Mode": "navigate",
            "Accept": "text/html,application/xhtml+xml",
        },
        method="POST",
    )
    status, body = fetch(post)
    written = WRITTEN.search(body)
    found = FINGERPRINT.search(body)
    return {
        "post_status": status,
        "fingerprint": " ".join(html.unescape(found.group(1)).split()) if found else None,
        "written_text": page_text(written.group(0)) if written else page_text(body)[:500],
        "echoed": any(v and v in body for v in person["values"].values()),
    }


def _held(person: dict[str, Any]) -> None:
    """Wait (at most HOLD_LIMIT s) until the file named by "hold" exists, if one is named."""
    hold = person.get("hold")
    deadline = time.monotonic() + HOLD_LIMIT
    while hold and not os.path.exists(hold) and time.monotonic() < deadline:
        time.sleep(0.05)


def _browse(person: dict[str, Any], url: str, record: dict[str, Any]) -> None:
    time.sleep(float(person.get("cold_start", 1.5)))
    _held(person)
    try:
        status, page = fetch(url)
    except OSError as exc:
        _note(person, {**record, "event": "loaded", "error": f"{type(exc).__name__}: {exc}"})
        return
    form = status == 200 and NONCE.search(page) is not None
    _note(person, {**record, "event": "loaded", "status": status, "form": form, "t": time.time()})
    if form and _claim(person):
        try:
            done = _fill(person, url, page)
        except Exception as exc:  # reported to the test through the log
            done = {"error": f"{type(exc).__name__}: {exc}"}
        _note(person, {**record, "event": "written", **done, "t": time.time()})


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        return 2
    with open(argv[0], encoding="utf-8") as f:
        person = json.load(f)
    url = argv[1]
    ancestry = _ancestry()
    record = {"url": url, "opener": opener(ancestry), "pid": os.getpid()}
    _note(person, {**record, "event": "opened", "ancestry": ancestry[:4], "t": time.time()})
    if os.fork():
        return 0  # the browser took the link; it loads the page in its own time
    try:
        os.setsid()
        _browse(person, url, record)
    finally:
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
