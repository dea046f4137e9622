"""One field of the form: its textarea, provider tile, "Get it" link, caption, note and rule lines.

What a field shows comes from the request's entry and the registry; never from a typed value.
"""

import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

from offprompt.page.text import esc, prose, visible
from offprompt.spec import SecretSpec

if TYPE_CHECKING:
    from offprompt.registry import Field

__all__ = ["FieldView", "field_html", "field_view", "page_data"]

TILE_COLOURS: Final = 8
"""How many tile colours page.css defines (`.t0` … `.t7`)."""


@dataclass(frozen=True)
class FieldView:
    """How one requested key is shown: registry field (or None), and the choices made from it.

    `enforced`: the agent named a provider or format, so the server refuses a value that fails
    the rules; a field found from its name alone only advises (offprompt/submit.py).
    """

    spec: SecretSpec
    field: "Field | None"
    enforced: bool
    multiline: bool
    masked: bool
    present: bool
    keyring: bool = False
    """The OS's keyring holds a value for it: an unticked box offers to fill it (§13.2)."""


def _resolve(spec: SecretSpec) -> "Field | None":
    if spec.generate is not None:
        return None  # offprompt makes these values; rules are for values people copy
    from offprompt import registry

    try:
        return registry.resolve(spec.name, spec.provider, spec.format)
    except registry.RegistryError:  # the tools layer refused these already; show plain text
        return None


def field_view(
    spec: SecretSpec, *, present: bool, file_sink: bool, keyring: bool = False
) -> FieldView:
    """The view of `spec`: registry field, whether its rules are enforced, masking and height."""
    field = _resolve(spec)
    multiline = file_sink or bool(field and field.multiline)
    secret = spec.secret and (field is None or field.secret)
    return FieldView(
        spec=spec,
        field=field,
        enforced=field is not None and spec.enforced,
        multiline=multiline,
        masked=secret and not multiline,
        present=present,
        keyring=keyring,
    )


_SCRIPT_KEYS: Final = ("ref", "provider", "provider_name", "credential", "noun", "url", "rules")


def page_data(views: Sequence[FieldView], *, file_sink: bool, dest: str) -> dict[str, Any]:
    """What the page's script reads: registry fields and hints, enforced names, sink kind, dest."""
    from offprompt import registry

    data = registry.page_data({v.spec.name: v.field for v in views})
    # rules.js reads only these of a field; the label, placeholder and format are in the HTML.
    data["fields"] = {
        name: None if f is None else {k: f[k] for k in _SCRIPT_KEYS}
        for name, f in data["fields"].items()
    }
    # rules.js reads a hint's link (its last column) only for a field of the same provider;
    # blanking the others changes no verdict and keeps the page small.
    mine = {v.field.provider_id for v in views if v.field is not None}
    data["hints"] = [h if h[1] in mine else [*h[:5], ""] for h in data["hints"]]
    data["enforced"] = [v.spec.name for v in views if v.enforced]
    data["file_sink"] = file_sink
    data["dest"] = dest
    return data


def initials(name: str) -> str:
    """The letters on a provider's tile: `S` for Stripe, `GC` for Google Cloud, `1P`."""
    words = name.split("(")[0].split()
    if not words:
        return "?"
    if len(words) == 1:
        word = words[0]
        return word[:2].upper() if word[0].isdigit() else word[0].upper()
    return (words[0][0] + words[1][0]).upper()


def tile_colour(provider_id: str) -> int:
    """A stable colour index for a provider's tile."""
    return zlib.crc32(provider_id.encode("utf-8")) % TILE_COLOURS


def _link(field: "Field") -> str:
    url = field.url or ""
    host = urlsplit(url).hostname if url.startswith("https://") else None
    if not host:
        return ""
    # The only links on the page: from the registry, to the provider's own dashboard.
    where = field.provider_name or host
    return (
        f'<a class="get" href="{esc(url)}" target="_blank" rel="noopener noreferrer">Get it'
        f'<span class="vh"> from {esc(where)} ({esc(host)}, opens a new tab)</span></a>'
    )


def _head(view: FieldView, vid: str) -> str:
    name = esc(view.spec.name)
    field = view.field
    tile = what = link = ""
    if field is not None:
        if field.provider_id and field.provider_name:
            tile = (
                f'<span class="tile t{tile_colour(field.provider_id)}" aria-hidden="true">'
                f"{esc(initials(field.provider_name))}</span>"
            )
            what = f"{field.provider_name} {field.noun}"
        else:
            what = field.label
        what = f'<span class="what">{esc(what)}</span>'
        link = _link(field)
    return (
        f'<div class="field-head">{tile}<div class="field-title">'
        f'<label for="{vid}" class="key">{name}</label>{what}</div>{link}</div>'
    )


def _note(view: FieldView, dest: str) -> str:
    where = f'<span class="mono">{esc(dest)}</span>'
    if view.spec.generate is not None:
        if view.present:
            return f"Already set in {where}: leave it empty to keep it, or put a new value."
        return (
            '<span class="js-only">Generated in this browser. Replace it if you already have '
            "one.</span>"
            '<span class="nojs-only">Leave it empty and offprompt generates it.</span>'
        )
    if view.present:
        return f"Already set in {where}: what you put here will replace it."
    return ""


def _rules(view: FieldView, rid: str) -> str:
    field = view.field
    if field is None or not field.rules:
        return ""
    kind = "enforced" if view.enforced else "advice"
    head = (
        "Checked before writing:"
        if view.enforced
        else "What these usually look like (advice: it is written either way):"
    )
    items = "".join(
        f'<li class="rule" data-rule="{esc(rule.id)}"><span class="vh state"></span>'
        f'{esc(rule.text)}<span class="detail"></span></li>'
        for rule in field.rules
    )
    return (
        f'<div class="rules {kind}" id="{rid}"><p class="rules-h">{head}</p>'
        f'<ul aria-live="polite">{items}</ul><p class="wrong-key" hidden></p></div>'
    )


def _blanks(vid: str, bid: str, name: str) -> str:
    # Filled and shown by the script when the value starts or ends with blanks: they are
    # written as sent (DESIGN §8), so the person sees them and removes them only if they choose.
    return (
        f'<p class="blanks" id="{bid}" aria-live="polite" hidden><span class="blanks-why"></span>'
        f'<button type="button" class="trim" aria-controls="{vid}"><span class="blanks-do">'
        f'Remove them</span><span class="vh"> around {name}</span></button></p>'
    )


def _keyring_box(name: str) -> str:
    # Unticked: only the person's tick fills it; the page never receives the value (§13.2).
    return (
        f'<p class="keyring-fill"><label class="check"><input type="checkbox" '
        f'name="keyring.{name}" value="1" id="kr-{name}" class="keyring-box"> Use the value '
        f'saved in your keyring</label> <span class="hint">(leave {name} empty)</span></p>'
    )


def _verdict(kid: str, verdict: tuple[str, str] | None) -> str:
    if verdict is None or verdict[0] == "skipped":
        return ""  # web/page.js adds it when a verdict arrives
    status, text = verdict
    return (
        f'<p class="verdict {status}" id="{kid}" role="status" data-check="{status}">'
        f"{esc(visible(text))}</p>"
    )


def field_html(
    view: FieldView,
    *,
    errors: Sequence[str],
    dest: str,
    verdict: tuple[str, str] | None = None,
) -> str:
    """The markup of one field: label row, textarea, tools, caption, note, rules, errors and
    the provider's `(status, text)` verdict (DESIGN §16; the script fills it too)."""
    spec = view.spec
    name = esc(spec.name)
    vid, cid, nid, bid, rid, eid = (f"{p}-{name}" for p in ("v", "c", "n", "b", "r", "e"))
    described: list[str] = []
    caption = ""
    if spec.caption:
        caption = f'<p class="caption" id="{cid}">{prose(spec.caption)}</p>'
        described.append(cid)
    note = _note(view, dest)
    if note:
        note = f'<p class="note" id="{nid}">{note}</p>'
        described.append(nid)
    described.append(bid)
    rules = _rules(view, rid)
    if rules:
        described.append(rid)
    described.append(eid)
    kid = f"k-{name}"  # a role=status line: read out when the verdict arrives
    classes = "value" + (" masked" if view.masked else "")
    attrs = [
        f'id="{vid}"',
        f'name="{name}"',
        f'rows="{8 if view.multiline else 1}"',
        'autocomplete="off"',
        'autocapitalize="off"',
        'autocorrect="off"',
        'spellcheck="false"',
        'translate="no"',
        "data-1p-ignore",
        'data-lpignore="true"',
        f'aria-describedby="{" ".join(described)}"',
        f'class="{classes}"',
    ]
    if view.field is not None and view.field.placeholder:
        attrs.append(f'placeholder="{esc(view.field.placeholder)}"')
    if not view.multiline:
        attrs.append("data-single-line")
    if spec.generate is None:
        if not view.keyring:  # empty with the keyring's box ticked is filled on the server
            attrs += ["required", 'aria-required="true"']
    elif not view.present:
        # Filled by the page's script; left empty without it so the server generates the value.
        # A key the file already holds is never pre-filled: empty means "keep it".
        attrs += [
            f'data-generate-bytes="{spec.generate.bytes}"',
            f'data-generate-encoding="{esc(spec.generate.encoding)}"',
        ]
    else:
        # Already set: empty keeps it, and the script generates a new one only when asked.
        attrs += [
            f'data-regen-bytes="{spec.generate.bytes}"',
            f'data-regen-encoding="{esc(spec.generate.encoding)}"',
        ]
    if errors:
        attrs.append('aria-invalid="true"')
    tools = [
        f'<button type="button" class="reveal" aria-controls="{vid}" aria-pressed="false" '
        "hidden>Show</button>"
        if view.masked
        else "",
    ]
    if spec.generate is not None:
        label = "Generate" if view.present else "Regenerate"
        tools.append(
            f'<button type="button" class="regen" aria-controls="{vid}" hidden>{label}</button>'
        )
    error_items = "".join(f"<li>{esc(e)}</li>" for e in errors)
    return "".join(
        [
            f'<div class="field{" invalid" if errors else ""}" id="field-{name}">',
            _head(view, vid),
            caption,
            f"<textarea {' '.join(attrs)}></textarea>",
            _keyring_box(name) if view.keyring else "",
            f'<div class="tools">{"".join(tools)}</div>',
            _blanks(vid, bid, name),
            note,
            rules,
            f'<ul class="errors" id="{eid}"{"" if errors else " hidden"}>{error_items}</ul>',
            _verdict(kid, verdict),
            "</div>",
        ]
    )
