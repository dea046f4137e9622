"""The page's files from web/, read once and trimmed, and the HTML document they are inlined into.

No asset routes: styles and scripts go inline under the response's CSP nonce.
"""

import functools
import json
import re
from pathlib import Path
from typing import Any, Final

from offprompt.page.text import esc

_SLOT: Final = re.compile(r"\{\{([a-z_]+)\}\}")
_CSS_COMMENT: Final = re.compile(r"/\*.*?\*/", re.DOTALL)
_CSS_SPACE: Final = re.compile(r"\s*([{};])\s*")
_CSS_STRING: Final = re.compile(r"(\"[^\"]*\"|'[^']*')")
_CSS_AFTER: Final = re.compile(r"(?<=:) +| *(,) *")


@functools.cache
def _web_dir() -> Path:
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "_web", here.parent / "web"):
        if (candidate / "page.html").is_file():
            return candidate
    raise FileNotFoundError("offprompt's web assets (page.html) are missing from the install")


_OPENS: Final = ("{", "(", "[", ",")
_CLOSES: Final = ("}", ")", "]")


def _trim_js(text: str) -> str:
    # Line-preserving, so no statement boundary moves: indentation, blank lines and whole-line
    # comments go. The scripts hold no multi-line strings or template literals.
    out: list[str] = []
    in_comment = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_comment:
            in_comment = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_comment = "*/" not in stripped
            continue
        if not stripped or stripped.startswith("//"):
            continue
        # A line break after an opening bracket or a comma, or before a closing bracket, ends
        # no statement (no line holds a comment after its code): the lines are joined there.
        if out and (out[-1].endswith(_OPENS) or stripped.startswith(_CLOSES)):
            out[-1] += stripped
        else:
            out.append(stripped)
    return "\n".join(out)


def _trim_css(text: str) -> str:
    text = _CSS_COMMENT.sub("", text)
    text = _CSS_SPACE.sub(r"\1", text)
    text = re.sub(r"\s+", " ", text).strip()
    # Blanks after `:` and around `,` say nothing outside a quoted string (a `content` text).
    parts = _CSS_STRING.split(text)
    parts[::2] = [_CSS_AFTER.sub(r"\1", part) for part in parts[::2]]
    return "".join(parts)


@functools.cache
def asset(name: str) -> str:
    """web/`name`, trimmed of comments and indentation for .js and .css."""
    text = (_web_dir() / name).read_text(encoding="utf-8")
    if name.endswith(".js"):
        return _trim_js(text)
    if name.endswith(".css"):
        return _trim_css(text)
    return text


def script_json(data: Any) -> str:
    """`data` as JSON that is safe inside a `<script type="application/json">` element."""
    # Inside <script>, "<" must never start "</script" or "<!--": escape every one.
    return (
        json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
    )


def scripts(names: tuple[str, ...], *, csp_nonce: str) -> str:
    """Inline `<script>` elements for web/`names`, each under the CSP nonce."""
    return "\n".join(f'<script nonce="{esc(csp_nonce)}">{asset(name)}</script>' for name in names)


def json_block(element_id: str, data: Any) -> str:
    """A `<script type="application/json">` element the page's script reads by id."""
    return f'<script type="application/json" id="{esc(element_id)}">{script_json(data)}</script>'


def document(title: str, main: str, *, csp_nonce: str, tail: str = "") -> str:
    """The whole page: web/page.html with the title, styles, main content and scripts filled in."""
    slots = {
        "title": esc(title),
        "csp_nonce": esc(csp_nonce),
        "css": asset("page.css"),
        "main": main,
        "scripts": tail,
    }
    # One pass, so text inside a slot is never read as another slot.
    return _SLOT.sub(lambda m: slots[m.group(1)], asset("page.html"))
