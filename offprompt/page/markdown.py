"""The safe Markdown subset the agent's reason is shown in: paragraphs, lists, emphasis, code.

Everything is escaped first; links are shown as their text and address, never as a link.
"""

import re
from collections.abc import Callable
from typing import Final

from offprompt.page.text import prose

_FENCE: Final = re.compile(r" {0,3}(```|~~~)")
_BULLET: Final = re.compile(r" {0,3}[-*+][ \t]+(.*)")
_NUMBER: Final = re.compile(r" {0,3}(\d{1,9})[.)][ \t]+(.*)")
_HEADING: Final = re.compile(r" {0,3}#{1,6}[ \t]+(.*?)[ \t#]*")
_RULE: Final = re.compile(r" {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*")
_QUOTE: Final = re.compile(r" {0,3}&gt; ?(.*)")
_CODE: Final = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_LINK: Final = re.compile(r"!?\[([^\]\n]*)\]\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)\)")
# Emphasis opens after a start, blank or punctuation and closes before one, so the underscores
# of STRIPE_SECRET_KEY and the stars of 2*3*4 stay as they are.
_STRONG: Final = re.compile(
    r"(?<![\w*])\*\*(?=\S)(.+?)(?<=\S)\*\*(?![\w*])|(?<!\w)__(?=\S)(.+?)(?<=\S)__(?!\w)"
)
_EM: Final = re.compile(
    r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])|(?<!\w)_(?=[^\s_])(.+?)(?<=[^\s_])_(?!\w)"
)
_SLOT: Final = re.compile("\x00(\\d+)\x00")


def render_markdown(text: str) -> str:
    """HTML for `text` read as the subset; safe to insert anywhere in a page's body."""
    lines = prose(text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
        elif _FENCE.match(line):
            i = _fenced(lines, i, out)
        elif _BULLET.fullmatch(line) or _NUMBER.fullmatch(line):
            i = _list(lines, i, out)
        elif m := _HEADING.fullmatch(line):
            out.append(f'<p class="md-h">{_inline(m.group(1))}</p>')
            i += 1
        elif _RULE.fullmatch(line):
            out.append("<hr>")
            i += 1
        elif _QUOTE.match(line):
            quoted: list[str] = []
            while i < len(lines) and (q := _QUOTE.match(lines[i])):
                quoted.append(q.group(1))
                i += 1
            out.append(f"<blockquote>{_inline(chr(10).join(quoted))}</blockquote>")
        else:
            para: list[str] = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                para.append(lines[i].strip())
                i += 1
            out.append(f"<p>{_inline(chr(10).join(para))}</p>")
    return "\n".join(out)


def _starts_block(line: str) -> bool:
    return bool(
        _FENCE.match(line)
        or _BULLET.fullmatch(line)
        or _NUMBER.fullmatch(line)
        or _HEADING.fullmatch(line)
        or _QUOTE.match(line)
    )


def _fenced(lines: list[str], i: int, out: list[str]) -> int:
    m = _FENCE.match(lines[i])
    fence = m.group(1) if m else "```"
    body: list[str] = []
    i += 1
    while i < len(lines) and not lines[i].lstrip().startswith(fence):
        body.append(lines[i])
        i += 1
    out.append(f"<pre><code>{chr(10).join(body)}</code></pre>")
    return i + 1


def _list(lines: list[str], i: int, out: list[str]) -> int:
    ordered = _NUMBER.fullmatch(lines[i]) is not None
    items: list[list[str]] = []
    start = 1
    while i < len(lines):
        line = lines[i]
        bullet = _BULLET.fullmatch(line)
        number = _NUMBER.fullmatch(line)
        found = number if ordered else bullet
        if found is not None:
            if ordered and not items:
                start = int(found.group(1))
            items.append([found.group(found.lastindex or 1)])
        elif items and line.strip() and (line[:1] in " \t") and not _starts_block(line):
            items[-1].append(line.strip())  # a continuation line of the item above
        else:
            break
        i += 1
    tag = "ol" if ordered else "ul"
    first = f' start="{start}"' if ordered and start != 1 else ""
    body = "".join(f"<li>{_inline(chr(10).join(item))}</li>" for item in items)
    out.append(f"<{tag}{first}>{body}</{tag}>")
    return i


def _inline(text: str) -> str:
    """Code spans, links as text, then emphasis; line breaks kept. `text` is already escaped."""
    kept: list[str] = []

    def keep(html: str) -> str:
        kept.append(html)
        return f"\x00{len(kept) - 1}\x00"

    text = _CODE.sub(lambda m: keep(f"<code>{m.group(2).strip() or m.group(2)}</code>"), text)
    text = _LINK.sub(lambda m: _link(m, keep), text)
    text = _STRONG.sub(lambda m: f"<strong>{m.group(1) or m.group(2)}</strong>", text)
    text = _EM.sub(lambda m: f"<em>{m.group(1) or m.group(2)}</em>", text)
    text = text.replace("\n", "<br>")
    while _SLOT.search(text):
        text = _SLOT.sub(lambda m: kept[int(m.group(1))], text)
    return text


def _link(m: re.Match[str], keep: Callable[[str], str]) -> str:
    # Shown, never followed: the person reads where the agent points, and nothing is clickable.
    label, url = m.group(1).strip(), m.group(2)
    address = keep(f'<span class="md-url">{url}</span>') if url else ""
    if not label:
        return f"({address})" if address else ""
    return f"{label} ({address})" if address and url != label else label
