"""The page's HTML: the collection form, the Written view and the short pages for refusals.

Everything inserted is escaped here or in the modules it uses; no typed value reaches a template.
"""

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from offprompt.crypto.confirm import shown as shown_code
from offprompt.crypto.fingerprint import EMOJI
from offprompt.page import assets
from offprompt.page.clients import display_name
from offprompt.page.fields import FieldView, field_html, field_view, page_data
from offprompt.page.markdown import render_markdown
from offprompt.page.text import counted, esc, minutes, visible
from offprompt.page.written import fingerprint_emoji, outcome_json, written_section
from offprompt.sinks import Target
from offprompt.spec import ReasonAuthor, WriteOutcome
from offprompt.store import RequestRecord

if TYPE_CHECKING:
    from offprompt.sinks.destinations import Planned

__all__ = [
    "ELSEWHERE",
    "Anyway",
    "FormState",
    "confirm_section",
    "fingerprint_emoji",
    "outcome_json",
    "render_confirm",
    "render_elsewhere",
    "render_form",
    "render_message",
    "render_written",
    "visible",
]

# In this order: fields.js reads rules.js and defines what fill.js and page.js use.
_REMOTE_SCRIPTS: Final = (
    "fingerprint.js",
    "rules.js",
    "paste.js",
    "seal.js",
    "fields.js",
    "fill.js",
    "page.js",
)
_LOCAL_SCRIPTS: Final = tuple(name for name in _REMOTE_SCRIPTS if name != "seal.js")
_REMOTE_ATTR: Final = ' data-remote="1"'


def _scripts(remote: bool, keyring: bool) -> tuple[str, ...]:
    """The page's scripts; keyring.js (after fields.js) only where a keyring box is offered."""
    names = _REMOTE_SCRIPTS if remote else _LOCAL_SCRIPTS
    if not keyring:
        return names
    at = names.index("fields.js") + 1
    return (*names[:at], "keyring.js", *names[at:])


# A remote page seals in the browser (DESIGN §5); web/page.js replaces this text once it knows
# whether it can. Without script it stays, and the button stays off.
_SEAL_STATUS: Final = (
    '<p class="seal-status warn" id="seal-status" role="status">This page encrypts what you '
    "type in this browser before sending it, so it needs JavaScript: turn it on and reload."
    "</p>"
)


_REOPENED_ATTR: Final = ' data-reopened="1"'
# The page of a request this browser claimed earlier: web/page.js takes this away when the tab
# still holds the nonce it was given (a reload); without script, or in another tab, it stays.
_REOPENED: Final = (
    '<p class="notice warn" id="reopened" role="status">This page is already open in this '
    "browser: continue in the tab or window where you first opened it. If you closed it, ask "
    "the agent for a new link.</p>"
)


@dataclass(frozen=True)
class Anyway:
    """The "Write anyway" form of a submit a provider refused (DESIGN §16): the fresh nonce and
    the choices the refused post made; the values stay in the process."""

    nonce: str = field(repr=False)
    allow_tracked: bool = False
    also: tuple[int, ...] = ()


@dataclass(frozen=True)
class FormState:
    """What a re-rendered form says after a refused POST; never holds a value. `verdicts`:
    each checked name's `(status, text)` from its provider (DESIGN §16)."""

    errors: Mapping[str, Sequence[str]] = field(default_factory=dict)
    form_error: str | None = None
    tracked: bool = False
    retype: bool = False
    verdicts: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    anyway: Anyway | None = None


def _home_relative(path: Path) -> str:
    home = os.environ.get("HOME")
    text = str(path)
    if home and home != "/" and (text == home or text.startswith(home.rstrip("/") + "/")):
        return "~" + text[len(home.rstrip("/")) :]
    return text


# Who wrote the reason, said above and below it: (heading, the line after it).
_REASON_BY: Final[Mapping[ReasonAuthor, tuple[str, str]]] = {
    "agent": ("Why, in the agent's words", "The agent wrote this, not offprompt."),
    "person": (
        "Why, as given at the terminal",
        "Given with offprompt collect --reason: by you, or by a program or agent that ran it.",
    ),
    "offprompt": (
        "Why",
        "offprompt wrote this: offprompt collect ran in a terminal without --reason.",
    ),
}


def _header(request: RequestRecord) -> str:
    heading, hint = _REASON_BY[request.reason_by]
    who = display_name(request.client)
    asking = counted(len(request.secrets), "value")
    folder = visible(str(request.project))
    return (
        f'<h1 id="title">{esc(who)} is asking for {asking}</h1>'
        f'<p class="project">Project folder <code dir="ltr" title="{esc(folder)}">'
        f"{esc(visible(_home_relative(request.project)))}</code></p>"
        '<section class="reason" aria-labelledby="reason-h">'
        f'<h2 id="reason-h">{heading}</h2>'
        f'<div class="reason-text">{render_markdown(request.reason)}</div>'
        f'<p class="hint">{hint} Fill these in only if it makes sense to you.</p></section>'
    )


def _also(request: RequestRecord) -> str:
    """One ticked checkbox per `also` destination (DESIGN §13), with the program and target it
    will use, and a missing program said now, before the submit. `form="collect"` puts the
    boxes in the form from here, so a plain post carries `also.<i>=1` for each ticked one."""
    if not request.also:
        return ""
    rows = []
    for i, planned in enumerate(request.also):
        kind = planned.label
        missing = planned.missing
        note = (
            f'<p class="also-missing warn" id="also-{i}-missing">{esc(visible(missing))}: it '
            "will be skipped unless it is installed before you submit.</p>"
            if missing
            else ""
        )
        if not planned.runs_program:
            rows.append(_no_program_row(i, planned))
            continue
        rows.append(
            f'<li class="also-item" data-kind="{esc(planned.kind)}">'
            f'<label class="check"><input type="checkbox" form="collect" name="also.{i}" '
            f'value="1" id="also-{i}" checked> {esc(kind)} in '
            f'<strong dir="ltr">{esc(visible(planned.link.target))}</strong></label>'
            f'<p class="also-command">Runs <code dir="ltr">{esc(visible(planned.command))}</code>'
            ", the value on its input only.</p>"
            f"{note}</li>"
        )
    return (
        '<h3 id="also-h">Also sent to</h3>'
        '<p class="hint">Each place this project is already linked to. Untick any the values '
        "should not go to; a failure there never undoes the write above.</p>"
        f'<ul class="also-list" id="also-list">{"".join(rows)}</ul>'
    )


def _no_program_row(i: int, planned: "Planned") -> str:
    """The row of a kind that runs no program (the keyring, DESIGN §13.2): what it is called,
    the exact names it keeps the values as, and its own note on where (the target in bold)."""
    before, marked, after = planned.page_note.partition("{target}")
    target = f"<strong>{esc(visible(planned.link.target))}</strong>" if marked else ""
    return (
        f'<li class="also-item" data-kind="{esc(planned.kind)}">'
        f'<label class="check"><input type="checkbox" form="collect" name="also.{i}" '
        f'value="1" id="also-{i}" checked> {esc(planned.label)} as '
        f'<strong dir="ltr">{esc(visible(planned.command))}</strong></label>'
        f'<p class="also-command">{esc(before)}{target}{esc(after)}</p></li>'
    )


def _destination(
    request: RequestRecord, target: Target | None, dest: str, problem: str | None
) -> str:
    if request.sink.kind == "none":
        return (
            '<section class="dest" aria-labelledby="dest-h"><h2 id="dest-h">Where it goes</h2>'
            '<p class="dest-path">No file in the project folder is written.</p>'
            f"{_also(request)}</section>"
        )
    full = esc(visible(str(target.path))) if target else esc(dest)
    items: list[tuple[str, str]] = []
    if target is not None:
        n = len(target.present)
        if not target.exists:
            kind = "ok" if target.writable else "info"
            items.append((kind, "New file, readable and writable by you only."))
        elif request.sink.kind == "file":
            items.append(("info", "The file exists: its whole content will be replaced."))
        elif n:
            held = ", ".join(name for name in request.names if name in target.present)
            total = len(request.secrets)
            set_there = f"{n} of these {total} ({held})" if total > 1 else "It"
            items.append(
                (
                    "info",
                    f"Exists. {set_there} {'is' if n == 1 else 'are'} already set there "
                    f"and will be replaced; every other line is kept.",
                )
            )
        else:
            items.append(("ok", "Exists. The keys are added to it; every other line is kept."))
        if target.tracked:
            items.append(("bad", "Tracked by git: what is written could be committed."))
        elif target.in_git_repo and not target.ignored:
            items.append(
                ("warn", f"Not ignored by git: add {dest} to .gitignore so it is never committed.")
            )
        problem = problem or target.problem
    if problem:
        items.append(("bad", problem))
    states = "".join(f'<li class="{kind}">{esc(text)}</li>' for kind, text in items)
    return (
        '<section class="dest" aria-labelledby="dest-h"><h2 id="dest-h">Where it goes</h2>'
        f'<p class="dest-path">Writes to <code dir="ltr" title="{full}">{esc(dest)}</code> '
        "in the project folder</p>"
        f'<ul class="dest-state" id="dest-state">{states}</ul>{_also(request)}</section>'
    )


def _fill_bar() -> str:
    return (
        '<div class="fill js-only" id="fill"><p>Paste a block of <code>NAME=value</code> lines '
        "into any field to fill every key it names, or "
        '<button type="button" class="linkish" id="choose">choose a .env file</button> or drop '
        "one on this page. It is read here, never uploaded.</p>"
        '<input type="file" id="env-file" hidden>'
        '<button type="button" id="reveal-all" aria-pressed="false" hidden>Show all</button>'
        "</div>"
        '<div class="banner" id="banner" role="status" hidden><p id="banner-text"></p>'
        '<button type="button" id="undo">Undo</button></div>'
    )


def _tracked(dest: str, *, show: bool) -> str:
    return (
        f'<div class="tracked warn" id="tracked"{"" if show else " hidden"}>'
        f"<p><strong>{esc(dest)} is tracked by git.</strong> Anything written to it can end "
        "up in a commit and be pushed.</p>"
        '<label class="check"><input type="checkbox" name="allow_tracked" value="1" '
        'id="allow-tracked"> Write to it anyway</label>'
        "</div>"
    )


def _check_box(views: Sequence[FieldView], file_sink: bool) -> str:
    """ "Check with the provider first" (DESIGN §16), ticked, when a field's provider has a check;
    a post without `check=1` checks nothing."""
    from offprompt.write import provider

    if file_sink or not any(provider.checkable(v.field) for v in views):
        return ""
    return (
        '<div class="provider-check" id="provider-check"><label class="check">'
        '<input type="checkbox" name="check" value="1" id="check" checked> Check with the '
        "provider first</label>"
        '<p class="hint">Each key goes once to its own provider\'s API to see that it works, '
        "before anything is written.</p></div>"
    )


def _anyway(request: RequestRecord, state: FormState) -> str:
    """The second form of a 409: the same choices, the fresh nonce, `anyway=1`; no value."""
    held = state.anyway
    if held is None:
        return ""
    refused = [(n, text) for n, (status, text) in state.verdicts.items() if status == "rejected"]
    items = "".join(
        f'<li><span class="key">{esc(n)}</span>: {esc(visible(text))}</li>' for n, text in refused
    )
    hidden = [
        f'<input type="hidden" name="nonce" value="{esc(held.nonce)}">',
        '<input type="hidden" name="anyway" value="1">',
        '<input type="hidden" name="check" value="1">',
    ]
    if held.allow_tracked:
        hidden.append('<input type="hidden" name="allow_tracked" value="1">')
    hidden += [f'<input type="hidden" name="also.{i}" value="1">' for i in held.also]
    return (
        f'<form method="post" action="/r/{esc(request.token)}" id="anyway-form" '
        'class="anyway warn" accept-charset="utf-8">'
        '<h2 id="anyway-h">The provider refused a key</h2>'
        f'<ul class="refused" id="refused">{items}</ul>'
        "<p>Nothing was written. Put in the right key above, or, if you are sure this one is "
        "right (a key made a moment ago, a provider having trouble), write what you sent:</p>"
        f'{"".join(hidden)}<button type="submit" id="write-anyway">Write anyway</button></form>'
    )


def _submit_text(request: RequestRecord, dest: str) -> str:
    if request.sink.kind == "none":
        return "Send"
    also = " and send" if request.also else ""
    return f'Write to <span class="mono">{esc(dest)}</span>{also}'


def render_form(
    request: RequestRecord,
    target: Target | None,
    *,
    csp_nonce: str,
    expires_in: float,
    target_problem: str | None = None,
    state: FormState | None = None,
    checks: bool = True,
    handed: bool = True,
    keyring: frozenset[str] = frozenset(),
) -> str:
    """The collection page for an open request; `checks`: provider checks are on for this
    process (no "Check with the provider first" box under `OFFPROMPT_CHECK=off`); `handed`:
    the page carries the request's nonce (else an empty one: the browser that claimed it
    opens it again, and only the tab it first opened in holds the nonce, DESIGN §17);
    `keyring`: the names the OS's keyring can fill (DESIGN §13.2), each offered by an unticked
    box."""
    state = state or FormState()
    dest = visible(target.display if target else request.display)
    present = target.present if target else frozenset()
    file_sink = request.sink.kind == "file"
    views: list[FieldView] = [
        field_view(s, present=s.name in present, file_sink=file_sink, keyring=s.name in keyring)
        for s in request.secrets
    ]
    tracked = bool(target and target.tracked) or state.tracked
    remote = request.remote
    error = state.form_error or ""
    parts = [
        _header(request),
        _destination(request, target, dest, target_problem),
        f'<form method="post" action="/r/{esc(request.token)}" id="collect"'
        f"{_REMOTE_ATTR if remote else ''}{'' if handed else _REOPENED_ATTR}"
        ' accept-charset="utf-8" aria-labelledby="title">',
        f'<input type="hidden" name="nonce" value="{esc(request.nonce) if handed else ""}">',
    ]
    if not handed:
        parts.append(_REOPENED)
    if state.retype:
        parts.append(
            '<p class="notice" role="status">Nothing was written. For your safety the page '
            "never sends values back: put them in again.</p>"
        )
    parts.append(_fill_bar())
    parts += [
        field_html(
            v,
            errors=state.errors.get(v.spec.name, ()),
            dest=dest,
            verdict=state.verdicts.get(v.spec.name),
        )
        for v in views
    ]
    parts.append(_tracked(dest, show=tracked))
    if checks:
        parts.append(_check_box(views, file_sink))
    if remote:
        parts.append(_SEAL_STATUS)
    parts += [
        '<div class="actions">',
        f'<button type="submit" id="submit"{" disabled" if remote or not handed else ""}>'
        f'<span id="submit-text">{_submit_text(request, dest)}</span></button>',
        '<button type="button" id="anyway" hidden>Write anyway</button>',
        '<span class="kbd js-only" id="kbd">or <kbd>Ctrl</kbd>+<kbd>Enter</kbd></span>',
        f'<p class="form-error" id="form-error" role="alert"{"" if error else " hidden"}>'
        f"{esc(error)}</p>",
        "</div>",
        "</form>",
        _anyway(request, state),
        f'<p class="expiry" id="expiry">This link expires in {minutes(expires_in)}.</p>',
    ]
    data = page_data(views, file_sink=file_sink, dest=dest)
    data["sends"] = bool(request.also)  # the button says "and send" (web/fields.js)
    tail = "\n".join(
        [
            assets.json_block("emoji-table", EMOJI),
            assets.json_block("page-data", data),
            assets.scripts(_scripts(remote, bool(keyring)), csp_nonce=csp_nonce),
        ]
    )
    title = f"offprompt: {', '.join(request.names)}"
    return assets.document(title, "\n".join(parts), csp_nonce=csp_nonce, tail=tail)


def render_written(
    outcome: WriteOutcome,
    *,
    csp_nonce: str,
    dialog_host: str | None = None,
    verdicts: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The Written page (no script needed): receipts per key, each provider's verdict (DESIGN
    §16) and the server's four emoji."""
    section = written_section(outcome, dialog_host=dialog_host, verdicts=verdicts)
    return assets.document("offprompt: written", section, csp_nonce=csp_nonce)


def render_message(title: str, text: str, *, csp_nonce: str) -> str:
    """A short page for a refusal or a closed request; says nothing about any value."""
    main = f'<h1>{esc(title)}</h1>\n<p class="message">{esc(text)}</p>'
    return assets.document(f"offprompt: {title}", main, csp_nonce=csp_nonce)


ELSEWHERE: Final = (
    "This request was opened in another browser, so it can only be filled in there. Continue "
    "in that browser, or, if that was not you, ask the agent for a new link."
)
"""What a second browser is told (DESIGN §17), on its page and in a refused POST."""


def render_elsewhere(request: RequestRecord, *, csp_nonce: str) -> str:
    """The page a second browser gets (DESIGN §17): the names asked for and where to go on; no
    form, no field, no reason and no destination."""
    names = "".join(f'<li class="key">{esc(n)}</li>' for n in request.names)
    main = (
        '<section class="closed" id="elsewhere"><h1>Opened in another browser</h1>'
        f'<p class="message">{esc(ELSEWHERE)}</p>'
        f'<p>Asked for:</p><ul class="names" id="names">{names}</ul></section>'
    )
    return assets.document("offprompt: opened in another browser", main, csp_nonce=csp_nonce)


CONFIRM_HOW: Final = (
    "Nothing is written yet. Type this code where your agent asks for it (in its dialog, or "
    "tell it in the chat). It shows the write was sent from your browser; it is not a secret "
    "value and works only once."
)
"""What the page says beside a held submit's code (DESIGN §17)."""


def confirm_section(
    request: RequestRecord, code: str, verdicts: Mapping[str, tuple[str, str]] | None = None
) -> str:
    """The held remote submit's section (DESIGN §17): the confirmation code, in the element
    with id `confirm-code`, and the names waiting for it; no value."""
    verdicts = verdicts or {}
    items = "".join(
        f'<li><span class="key">{esc(n)}</span>'
        + (
            f' <span class="why">{esc(visible(verdicts[n][1]))}</span>'
            if n in verdicts and verdicts[n][0] != "skipped"
            else ""
        )
        + "</li>"
        for n in request.names
    )
    return (
        '<section class="confirm" id="confirm"><h1>One more step: the code</h1>'
        f'<p class="message">{esc(CONFIRM_HOW)}</p>'
        f'<p class="fp-emoji code" id="confirm-code">{esc(shown_code(code))}</p>'
        f'<ul class="receipt" id="names">{items}</ul></section>'
    )


def render_confirm(
    request: RequestRecord,
    code: str,
    *,
    csp_nonce: str,
    verdicts: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """The page a held remote submit answers (a post without script)."""
    main = confirm_section(request, code, verdicts)
    return assets.document("offprompt: confirm", main, csp_nonce=csp_nonce)
