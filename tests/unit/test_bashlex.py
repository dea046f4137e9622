"""The bash lexing both readers share (offprompt/bashlex.py), table by table."""

import pytest

from offprompt import bashlex


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [("'a'", 0, 3), ("x'a\\'b", 1, 5), ("''", 0, 2)],
)
def test_a_single_quote_ends_at_the_next_quote(text: str, start: int, end: int) -> None:
    """Nothing inside '…' is special, a backslash included."""
    assert end == bashlex.single_quote_end(text, start)


@pytest.mark.parametrize(
    ("text", "quote", "end"),
    [("$'a'", 1, 4), ("$'it\\'s' x", 1, 8), ("$'\\\\'", 1, 5)],
)
def test_an_ansi_c_quote_skips_escaped_characters(text: str, quote: int, end: int) -> None:
    """In $'…' a backslash escapes the next character, a quote included."""
    assert end == bashlex.ansi_c_end(text, quote)


@pytest.mark.parametrize(
    ("text", "opened"),
    [("'open", 0), ("$'open\\'", 1)],
)
def test_an_open_quote_says_where_it_opened(text: str, opened: int) -> None:
    """Unclosed carries the offset of the quote that has no end."""
    finder = bashlex.single_quote_end if text[0] == "'" else bashlex.ansi_c_end
    with pytest.raises(bashlex.Unclosed) as raised:
        finder(text, opened)
    assert opened == raised.value.offset


@pytest.mark.parametrize(
    ("text", "escaped"),
    [('\\"', '"'), ("\\$", "$"), ("\\`", "`"), ("\\\\", "\\"), ("\\\n", ""), ("\\x", None)],
)
def test_a_backslash_in_double_quotes(text: str, escaped: str | None) -> None:
    """Only $ ` " \\ and a newline lose their backslash inside double quotes."""
    assert escaped == bashlex.double_quoted_escape(text, 0)


def test_line_continuations_are_skipped() -> None:
    """`$\\<newline>(` is `$(`: continuations go before anything else is read."""
    assert 5 == bashlex.continued("$\\\n\\\n(", 1)


@pytest.mark.parametrize(
    ("text", "end"),
    [("NAME rest", 4), ("_a1=", 3), ("1A", 0), ("é", 0), ("", 0)],
)
def test_a_name_is_ascii_letters_digits_and_underscore(text: str, end: int) -> None:
    """Bash's names: no digit first, nothing outside ASCII."""
    assert end == bashlex.name_end(text, 0)
