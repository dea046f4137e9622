"""The page's HTML: the form, the Written view and the short error pages, assets from web/ inlined.

Everything inserted is escaped here; no value the person typed ever reaches a template.
"""

import functools
import html
import json
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from offprompt.crypto.fingerprint import EMOJI
from offprompt.requests import Request
from offprompt.sinks import Target
from offprompt.spec import Outcome, SecretSpec

_SLOT: Final = re.compile(r"\{\{([a-z_]+)\}\}")
# Bidi overrides and isolates can make a path or a reason read differently from what it is.
_BIDI: Final = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_EMOJI_NAME: Final = dict(EMOJI)


@functools.cache
def _web_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_web", here.parent / "web"):
        if (candidate / "page.html").is_file():
            return candidate
    raise FileNotFoundError("offprompt's web assets (page.html) are missing from the install")


@functools.cache
def _asset(name: str) -> str:
    return (_web_dir() / name).read_text(encoding="utf-8")


def _esc(text: str) -> str:
    return html.escape(text, quote=True)


def visible(text: str) -> str:
    """`text` with control and format characters spelled out as `\\uXXXX`, for paths and names."""
    return "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) in {"Cc", "Cf"} else ch for ch in text
    )


def _prose(text: str) -> str:
    """Agent-written prose, escaped, with bidi controls and stray controls spelled out."""
    text = _BIDI.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    text = "".join(
        f"\\u{ord(ch):04x}" if unicodedata.category(ch) == "Cc" and ch not in "\n\t" else ch
        for ch in text
    )
    return _esc(text)


def _script_json(data: Any) -> str:
    # Inside <script>, "<" must never start "</script" or "<!--": escape every one.
    return (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


def _document(title: str, main: str, *, csp_nonce: str, scripts: str = "") -> str:
    slots = {
        "title": _esc(title),
        "csp_nonce": _esc(csp_nonce),
        "css": _asset("page.css"),
        "main": main,
        "scripts": scripts,
    }
    # One pass, so text inside a slot is never read as another slot.
    return _SLOT.sub(lambda m: slots[m.group(1)], _asset("page.html"))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _minutes(seconds: float) -> str:
    if seconds <= 60:
        return "less than a minute"
    return _plural(round(seconds / 60), "minute")


@dataclass(frozen=True)
class FormState:
    """What a re-rendered form says after a refused POST; never holds a value."""

    errors: Mapping[str, Sequence[str]] = field(default_factory=dict)
    form_error: str | None = None
    tracked: bool = False
    retype: bool = False


def render_form(
    request: Request,
    target: Target | None,
    *,
    csp_nonce: str,
    expires_in: float,
    target_problem: str | None = None,
    state: FormState | None = None,
) -> str:
    """The collection page for an open request."""
    state = state or FormState()
    client = visible(request.client or "An agent")
    if len(client) > 80:
        client = client[:79] + "…"
    names = request.names
    asking = names[0] if len(names) == 1 else _plural(len(names), "secret")
    dest = visible(target.display if target else request.sink.path)
    trim = "1" if request.sink.kind == "dotenv" else "0"
    single_line = request.sink.kind == "dotenv"
    present = target.present if target else frozenset()
    tracked = bool(target and target.tracked) or state.tracked
    remote = request.remote

    parts = [
        f'<h1 id="title">{_esc(client)} is asking for <span class="ask">{_esc(asking)}</span></h1>',
        '<section class="reason" aria-labelledby="reason-h">',
        '<h2 id="reason-h">The agent says</h2>',
        f'<div class="reason-text">{_prose(request.reason)}</div>',
        "<p class=\"hint\">These are the agent's words, not offprompt's. "
        "Type a secret only if the reason makes sense to you.</p>",
        "</section>",
        _destination(request, target, dest, target_problem),
        f'<form method="post" action="/r/{_esc(request.token)}" id="collect" '
        f'data-trim="{trim}"{_REMOTE_ATTR if remote else ""} accept-charset="utf-8" '
        'aria-labelledby="title">',
        f'<input type="hidden" name="nonce" value="{_esc(request.nonce)}">',
    ]
    if state.retype:
        parts.append(
            '<p class="notice" role="status">Nothing was written. For your safety the page '
            "never sends values back: type them again.</p>"
        )
    for secret in request.secrets:
        parts.append(
            _field(
                secret,
                errors=state.errors.get(secret.name, ()),
                present=secret.name in present,
                dest=dest,
                single_line=single_line,
            )
        )
    parts.append(_tracked(dest, show=tracked))
    error = state.form_error or ""
    if remote:
        parts.append(_SEAL_STATUS)
    parts += [
        '<div class="actions">',
        f'<button type="submit" id="submit"{" disabled" if remote else ""}>Write to '
        f'<span class="mono">{_esc(dest)}</span></button>',
        f'<p class="form-error" id="form-error" role="alert"{"" if error else " hidden"}>'
        f"{_esc(error)}</p>",
        "</div>",
        "</form>",
        f'<p class="expiry" id="expiry">This link expires in {_minutes(expires_in)}.</p>',
    ]
    page_scripts = (
        ("fingerprint.js", "seal.js", "page.js") if remote else ("fingerprint.js", "page.js")
    )
    scripts = f'<script type="application/json" id="emoji-table">{_script_json(EMOJI)}</script>\n'
    scripts += "\n".join(
        f'<script nonce="{_esc(csp_nonce)}">{_asset(name)}</script>' for name in page_scripts
    )
    return _document(
        f"offprompt: {', '.join(names)}", "\n".join(parts), csp_nonce=csp_nonce, scripts=scripts
    )


_REMOTE_ATTR: Final = ' data-remote="1"'
# A remote page seals in the browser (DESIGN §5); web/page.js replaces this text once it knows
# whether it can. Without script it stays, and the button stays off.
_SEAL_STATUS: Final = (
    '<p class="seal-status warn" id="seal-status" role="status">This page encrypts what you '
    "type in this browser before sending it, so it needs JavaScript: turn it on and reload."
    "</p>"
)


def _destination(request: Request, target: Target | None, dest: str, problem: str | None) -> str:
    parts = [
        '<section class="dest" aria-labelledby="dest-h">',
        '<h2 id="dest-h">Destination</h2>',
        f'<p class="dest-path"><code dir="ltr">{_esc(dest)}</code> in '
        f'<code dir="ltr" class="muted">{_esc(visible(str(request.project)))}</code></p>',
    ]
    if target is not None:
        if not target.exists:
            state = "A new file, created readable by you only."
        elif request.sink.kind == "file":
            state = "The file exists; its whole content will be replaced."
        elif target.present:
            n = len(target.present)
            state = (
                f"The file exists; {_plural(n, 'key')} asked for here "
                f"{'is' if n == 1 else 'are'} already set in it."
            )
        else:
            state = "The file exists; the keys are added to it and every other line is kept."
        parts.append(f'<p class="dest-state">{_esc(state)}</p>')
        if target.in_git_repo and not target.ignored and not target.tracked:
            parts.append(
                f'<p class="warn">{_esc(dest)} is not ignored by git: add it to .gitignore so '
                "these values are never committed.</p>"
            )
        if not target.writable:
            parts.append(f'<p class="warn">{_esc(dest)} does not look writable right now.</p>')
        problem = problem or target.problem
    if problem:
        parts.append(f'<p class="warn">{_esc(problem)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _field(
    secret: SecretSpec,
    *,
    errors: Sequence[str],
    present: bool,
    dest: str,
    single_line: bool,
) -> str:
    name = _esc(secret.name)
    vid, cid, nid, eid = (f"{p}-{name}" for p in ("v", "c", "n", "e"))
    described = [eid]
    caption = ""
    if secret.caption:
        caption = f'<p class="caption" id="{cid}">{_prose(secret.caption)}</p>'
        described.insert(0, cid)
    note = _note(secret, present=present, dest=dest)
    if note:
        described.insert(-1, nid)
        note = f'<p class="note" id="{nid}">{note}</p>'
    attrs = [
        f'id="{vid}"',
        f'name="{name}"',
        f'rows="{1 if single_line else 8}"',
        'autocomplete="off"',
        'autocapitalize="off"',
        'autocorrect="off"',
        'spellcheck="false"',
        'translate="no"',
        f'aria-describedby="{" ".join(described)}"',
        f'class="value{" masked" if secret.secret else ""}"',
    ]
    if single_line:
        attrs.append("data-single-line")
    if secret.generate is None:
        attrs += ["required", 'aria-required="true"']
    elif not present:
        # Filled by the page's script; left empty without it so the server generates the value.
        # A key the file already holds is never pre-filled: empty means "keep it".
        attrs += [
            f'data-generate-bytes="{secret.generate.bytes}"',
            f'data-generate-encoding="{_esc(secret.generate.encoding)}"',
        ]
    if errors:
        attrs.append('aria-invalid="true"')
    error_items = "".join(f"<li>{_esc(e)}</li>" for e in errors)
    reveal = (
        f'<button type="button" class="reveal" aria-controls="{vid}" aria-pressed="false" '
        "hidden>Show</button>"
        if secret.secret
        else ""
    )
    return "\n".join(
        [
            f'<div class="field{" invalid" if errors else ""}" id="field-{name}">',
            f'<div class="field-head"><label for="{vid}" class="mono">{name}</label>{reveal}</div>',
            f"<textarea {' '.join(attrs)}></textarea>",
            caption,
            note,
            f'<ul class="errors" id="{eid}"{"" if errors else " hidden"}>{error_items}</ul>',
            "</div>",
        ]
    )


def _note(secret: SecretSpec, *, present: bool, dest: str) -> str:
    where = f'<span class="mono">{_esc(dest)}</span>'
    if secret.generate is not None:
        if present:
            return f"Already set in {where}: leave empty to keep it, or type a new value."
        return (
            '<span class="js-only">Generated in this browser; replace it if you already have '
            "one.</span>"
            '<span class="nojs-only">Leave empty and offprompt generates it.</span>'
        )
    if present:
        return f"Already set in {where}: what you type replaces it."
    return ""


def _tracked(dest: str, *, show: bool) -> str:
    return (
        f'<div class="tracked warn" id="tracked"{"" if show else " hidden"}>'
        f"<p><strong>{_esc(dest)} is tracked by git.</strong> Anything written to it can end "
        "up in a commit and be pushed.</p>"
        '<label class="check"><input type="checkbox" name="allow_tracked" value="1" '
        'id="allow-tracked"> Write to it anyway</label>'
        "</div>"
    )


def fingerprint_emoji(fingerprint: str | None) -> list[tuple[str, str]]:
    """`[(emoji, name), ...]` for a fingerprint string; empty for None."""
    if not fingerprint:
        return []
    return [(e, _EMOJI_NAME.get(e, "?")) for e in fingerprint.split(" ")]


def outcome_json(outcome: Outcome) -> dict[str, Any]:
    """The JSON body of a successful submit: names, file and fingerprint, no value."""
    return {
        "status": "written",
        "file": outcome.file,
        "names": list(outcome.names),
        "added": list(outcome.added),
        "replaced": list(outcome.replaced),
        "generated": list(outcome.generated),
        "kept": list(outcome.kept),
        "fingerprint": outcome.fingerprint,
        "emoji": [list(pair) for pair in fingerprint_emoji(outcome.fingerprint)],
    }


def render_written(outcome: Outcome, *, csp_nonce: str) -> str:
    """The Written view: what was written where, and the server's four emoji."""
    dest = _esc(visible(outcome.file))
    written = len(outcome.names) - len(outcome.kept)
    if written:
        summary = f'Wrote {_plural(written, "value")} to <code dir="ltr">{dest}</code>.'
    else:
        summary = (
            f'<code dir="ltr">{dest}</code> already held {_esc(", ".join(outcome.kept))}; '
            "nothing was changed."
        )
    items = []
    for name in outcome.names:
        tags = [
            tag
            for tag, group in (
                ("generated", outcome.generated),
                ("added", outcome.added),
                ("replaced", outcome.replaced),
                ("kept", outcome.kept),
            )
            if name in group
        ]
        items.append(
            f'<li><span class="mono">{_esc(name)}</span> '
            + " ".join(f'<span class="tag">{t}</span>' for t in tags)
            + "</li>"
        )
    pairs = fingerprint_emoji(outcome.fingerprint)
    if pairs:
        emoji = " ".join(_esc(e) for e, _ in pairs)
        label = _esc(", ".join(n for _, n in pairs))
        fp = (
            '<div class="fp" id="fp">'
            '<h2 id="fp-h">Fingerprint</h2>'
            f'<p class="fp-emoji" id="fp-server" role="img" aria-label="{label}">{emoji}</p>'
            f'<p class="fp-names">{_esc(" · ".join(n for _, n in pairs))}</p>'
            "</div>"
            "<p>Your agent reports these same four emoji. If it reports others, the write it "
            "describes is not the one you made: tell it so.</p>"
        )
    else:
        fp = (
            "<p>No fingerprint: offprompt generated or kept every value, so nothing typed here "
            "needs checking.</p>"
        )
    main = "\n".join(
        [
            '<section class="written" id="written" aria-labelledby="written-h">',
            '<h1 id="written-h"><span aria-hidden="true">✓</span> Written</h1>',
            f"<p>{summary}</p>",
            f'<ul class="results">{"".join(items)}</ul>',
            fp,
            '<p class="muted">You can close this tab.</p>',
            "</section>",
        ]
    )
    return _document("offprompt: written", main, csp_nonce=csp_nonce)


def render_message(title: str, text: str, *, csp_nonce: str) -> str:
    """A short page for a refusal or a closed request; says nothing about any value."""
    main = f'<h1>{_esc(title)}</h1>\n<p class="message">{_esc(text)}</p>'
    return _document(f"offprompt: {title}", main, csp_nonce=csp_nonce)
