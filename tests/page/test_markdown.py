"""The agent's reason as a safe Markdown subset: escaped first, lists, emphasis, code, no links."""

import re

import pytest

from offprompt.page.markdown import render_markdown


def test_html_in_the_reason_is_shown_as_text() -> None:
    """A <script> element and an event-handler attribute come out as escaped text."""
    html = render_markdown('<script>alert(1)</script> <img src=x onerror="y()">')
    assert "<script" not in html
    assert "<img" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_escaping_happens_before_markdown() -> None:
    """Markup made of escaped text stays text: `**<b>**` is bold around an escaped tag."""
    assert render_markdown("**<b>x</b>**") == "<p><strong>&lt;b&gt;x&lt;/b&gt;</strong></p>"


@pytest.mark.parametrize(
    "link",
    [
        "[click me](javascript:alert(1))",
        "[docs](https://evil.example/login)",
        "<https://evil.example>",
        "![img](https://evil.example/x.png)",
    ],
)
def test_links_are_shown_as_text_never_clickable(link: str) -> None:
    """No link form becomes an <a> or an <img>; the address is shown for the person to read."""
    html = render_markdown(f"See {link} now")
    assert re.search(r"<(a|img)\b", html) is None
    assert "href" not in html


@pytest.mark.parametrize(
    "text",
    [
        "[x](data:text/html;base64,PHNjcmlwdD4=)",
        "[x](JaVaScRiPt:alert(1))",
        "[x](vbscript:msgbox(1))",
        "<javascript:alert(1)>",
        "[![logo](https://evil.example/x.png)](https://evil.example)",
        "![x](data:image/png;base64,iVBORw0KGgo=)",
        "[x][1]\n\n[1]: javascript:alert(1)",
        "[mail](mailto:ops@example.com)",
    ],
)
def test_no_scheme_or_image_becomes_markup_without_the_csp(text: str) -> None:
    """DESIGN §6/THREAT_MODEL: the reason's links stay text (http(s) and mailto at most, and
    those too are text), and no image renders, whatever the CSP does."""
    html = render_markdown(text)
    assert re.search(r"<(a|img|iframe|object|embed|svg)\b", html, re.IGNORECASE) is None
    assert re.search(r"\b(href|src)\s*=", html, re.IGNORECASE) is None


def test_javascript_link_shows_its_text_and_address() -> None:
    """`[x](javascript:…)` reads as `x (javascript:…)`, with the address set apart."""
    html = render_markdown("[click me](javascript:alert(1))")
    assert html == '<p>click me (<span class="md-url">javascript:alert(1)</span>)</p>'


def test_bullet_and_numbered_lists() -> None:
    """`-` and `1.` lines become <ul> and <ol> items; a numbered list keeps its start."""
    html = render_markdown("- one\n- two\n\n3. three\n4. four")
    assert html == (
        '<ul><li>one</li><li>two</li></ul>\n<ol start="3"><li>three</li><li>four</li></ol>'
    )


def test_emphasis_and_strong() -> None:
    """`*em*`, `_em_`, `**strong**` and `__strong__` render as <em> and <strong>."""
    html = render_markdown("*a* _b_ **c** __d__")
    assert html == "<p><em>a</em> <em>b</em> <strong>c</strong> <strong>d</strong></p>"


def test_underscores_inside_names_are_not_emphasis() -> None:
    """STRIPE_SECRET_KEY and RESEND_API_KEY keep their underscores; 2*3*4 keeps its stars."""
    text = "needs STRIPE_SECRET_KEY and RESEND_API_KEY, 2*3*4"
    assert render_markdown(text) == f"<p>{text}</p>"


def test_code_spans_are_literal() -> None:
    """Inside backticks nothing else applies, and the content stays escaped."""
    html = render_markdown("use `**not bold** <x>` here")
    assert html == "<p>use <code>**not bold** &lt;x&gt;</code> here</p>"


def test_fenced_code_block() -> None:
    """A ``` fence becomes <pre><code> with its lines as they are, escaped."""
    html = render_markdown("```\nA=1\n<b>\n```")
    assert html == "<pre><code>A=1\n&lt;b&gt;</code></pre>"


def test_paragraphs_and_line_breaks() -> None:
    """Blank lines split paragraphs; a single line break is kept as <br>."""
    assert render_markdown("one\ntwo\n\nthree") == "<p>one<br>two</p>\n<p>three</p>"


def test_headings_are_bold_paragraphs() -> None:
    """A `#` heading becomes emphasised text, not a heading that outranks the page's own."""
    assert render_markdown("## Setup") == '<p class="md-h">Setup</p>'


def test_bidi_overrides_are_spelled_out() -> None:
    """A right-to-left override in the reason is shown as \\u202e, not applied."""
    assert "\\u202e" in render_markdown("ok \u202egnp.exe")
