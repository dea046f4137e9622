"""Arbitrary .env-like text for property tests: statements that steer python-dotenv's grammar,
grammar characters (quotes, backslashes, `#`, `$`, blanks Python and JavaScript class apart), and
any text, joined by LF, CRLF or CR, with or without a final line ending."""

from hypothesis import strategies as st

LINES = [
    "A=1",
    "export B=2",
    "  C = 3 ",
    "'D'=4",
    "E",
    "# comment = not",
    "",
    "   ",
    "F='x",
    "y'",
    'G="a\\"b"',
    "H=a # c",
    "I=a#b",
    "=bad",
    "J='q' junk",
    'K="m',
    'n"',
    "\tL=\t'v'\t#x",
    "M=${A}",
    "N='\\\\ \\' \\n'",
    'O="\\t\\x\\\\"',
    "P=' spaced '",
    "export",
    "export Q",
    "R=é😀",
    "S='#'",
    'T="it\'s"',
    "U= #c",
    "V='a\\\\'",
    "\ufeffW=1",
]
GRAMMAR = "AB_=x'\"#\\ \t\n\r$\x0b\x1c\x85\xa0\ufeff\u2028é😀"


@st.composite
def dotenv_texts(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.tuples(
                st.one_of(
                    st.sampled_from(LINES),
                    st.text(alphabet=GRAMMAR, max_size=10),
                    st.text(max_size=6),
                ),
                st.sampled_from(["\n", "\r\n", "\r"]),
            ),
            max_size=12,
        )
    )
    text = "".join(line + eol for line, eol in parts)
    if draw(st.booleans()) and text:
        text = text.rstrip("\r\n")
    return text
