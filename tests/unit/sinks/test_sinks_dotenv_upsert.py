"""offprompt.sinks.dotenv.upsert and dotenv_quoting.serialize_value: exact bytes in and out."""

import io
from pathlib import Path

import pytest
from dotenv import dotenv_values
from dotenv_texts import dotenv_texts
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from offprompt.errors import RefusedRequest, UnsafeValue
from offprompt.sinks import dotenv, dotenv_quoting, verify

# (id, before, values, keep_if_present, after, added, replaced, kept)
CASES = [
    ("empty file", "", {"A": "1"}, (), "A=1\n", ("A",), (), ()),
    ("missing final newline", "X=1", {"A": "1"}, (), "X=1\nA=1\n", ("A",), (), ()),
    ("comment without newline", "# c", {"A": "1"}, (), "# c\nA=1\n", ("A",), (), ()),
    ("request order", "", {"B": "2", "A": "1"}, (), "B=2\nA=1\n", ("B", "A"), (), ()),
    (
        "export and indent kept",
        "  export A=old\nB=1\n",
        {"A": "new"},
        (),
        "  export A=new\nB=1\n",
        (),
        ("A",),
        (),
    ),
    ("duplicates removed", "A=1\nB=2\nA=3\n", {"A": "n"}, (), "A=n\nB=2\n", (), ("A",), ()),
    (
        "comments and blanks untouched",
        "# top\n\nA=1 # why\n\n# end\n",
        {"A": "n"},
        (),
        "# top\n\nA=n # why\n\n# end\n",
        (),
        ("A",),
        (),
    ),
    (
        "comment after an unquoted value kept",
        "A=old value # note\n",
        {"A": "n w"},
        (),
        "A='n w' # note\n",
        (),
        ("A",),
        (),
    ),
    ("glued comment dropped", "A='x'#c\n", {"A": "n"}, (), "A=n\n", (), ("A",), ()),
    (
        "CRLF lines kept, new line CRLF",
        "# c\r\nX=1\r\n",
        {"A": "v"},
        (),
        "# c\r\nX=1\r\nA=v #\r\n",
        ("A",),
        (),
        (),
    ),
    ("CRLF line replaced", "A=1\r\nX=2\r\n", {"A": "v"}, (), "A=v #\r\nX=2\r\n", (), ("A",), ()),
    ("CRLF comment kept", "A=1 # c\r\n", {"A": "v"}, (), "A=v # c\r\n", (), ("A",), ()),
    (
        "LF dominant in a mixed file",
        "X=1\r\nY=2\nZ=3\n",
        {"A": "v"},
        (),
        "X=1\r\nY=2\nZ=3\nA=v\n",
        ("A",),
        (),
        (),
    ),
    (
        "multi-line value replaced whole",
        "A='l1\nl2\nl3'\nB=2\n",
        {"A": "n"},
        (),
        "A=n\nB=2\n",
        (),
        ("A",),
        (),
    ),
    (
        "multi-line duplicate removed whole",
        'X=0\nA=1\nA="l1\nl2"\nB=2\n',
        {"A": "n"},
        (),
        "X=0\nA=n\nB=2\n",
        (),
        ("A",),
        (),
    ),
    ("last line without newline", "X=1\nA=old", {"A": "n"}, (), "X=1\nA=n", (), ("A",), ()),
    (
        "replace last and append",
        "A=old",
        {"A": "n", "B": "m"},
        (),
        "A=n\nB=m\n",
        ("B",),
        ("A",),
        (),
    ),
    (
        "last CRLF-file line gets its ending and bash guard",
        "X=1\r\nA=old",
        {"A": "", "B": "b"},
        (),
        "X=1\r\nA='' #\r\nB=b #\r\n",
        ("B",),
        ("A",),
        (),
    ),
    ("kept when set", "A=old\n", {"A": "gen"}, ("A",), "A=old\n", (), (), ("A",)),
    ("empty placeholder filled", "A=\n", {"A": "gen"}, ("A",), "A=gen\n", (), ("A",), ()),
    ("last assignment decides keep", "A=x\nA=\n", {"A": "g"}, ("A",), "A=g\n", (), ("A",), ()),
    ("bare KEY line filled in place", "A\nB=1\n", {"A": "v"}, (), "A=v\nB=1\n", ("A",), (), ()),
    ("tab indent dropped for Node", "\tA=1\n", {"A": "v"}, (), "A=v\n", (), ("A",), ()),
    ("quoted key unquoted", "'A'=1\n", {"A": "v"}, (), "A=v\n", (), ("A",), ()),
    ("export tab normalized", "export\tA=1\n", {"A": "v"}, (), "export A=v\n", (), ("A",), ()),
    (
        "unreadable lines untouched",
        "garbage line\nA=1\n=x\n",
        {"A": "v"},
        (),
        "garbage line\nA=v\n=x\n",
        (),
        ("A",),
        (),
    ),
    (
        "other keys byte-identical",
        "B = spaced\nC='q'  \n",
        {"A": "v"},
        (),
        "B = spaced\nC='q'  \nA=v\n",
        ("A",),
        (),
        (),
    ),
]


@pytest.mark.parametrize(
    ("before", "values", "keep", "after", "added", "replaced", "kept"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_upsert_rewrites_only_the_named_statements(
    before: str,
    values: dict[str, str],
    keep: tuple[str, ...],
    after: str,
    added: tuple[str, ...],
    replaced: tuple[str, ...],
    kept: tuple[str, ...],
) -> None:
    """Exact text and name lists for each case of the table."""
    result = dotenv.upsert(before, values, frozenset(keep))
    assert (after, added, replaced, kept) == (
        result.text,
        result.added,
        result.replaced,
        result.kept,
    )


FORMS = [
    ("plain", "plain"),
    ("sk_live_51H-x.y/z+w=:,@%", "sk_live_51H-x.y/z+w=:,@%"),
    ("", "''"),
    ("a b", "'a b'"),
    ("$HOME", "'$HOME'"),
    ("a\nb", "'a\nb'"),
    ('say "hi"', "'say \"hi\"'"),
    ("C:\\dir", "'C:\\dir'"),
    ("it's", '"it\'s"'),
    ("it's\nfine!", '"it\'s\nfine!"'),
    ("~", "'~'"),
]


@pytest.mark.parametrize(("value", "form"), FORMS)
def test_serialize_value_picks_bare_then_single_then_double_quotes(value: str, form: str) -> None:
    """The form each kind of value gets."""
    assert form == dotenv_quoting.serialize_value(value)


REFUSED = [
    "both ' and \"",
    "it's $5",
    "it's `x`",
    "it's C:\\dir",
    "double \\\\ backslash",
    "ends in \\",
    "${HOME}",
    "a${X:-d}b",
    "${}",
    "carriage\rreturn",
    "nul\0byte",
    "broken \ud800 surrogate",
]


@pytest.mark.parametrize("value", REFUSED)
def test_serialize_value_refuses_what_no_form_carries(value: str) -> None:
    """UnsafeValue for values a reader would change."""
    with pytest.raises(UnsafeValue):
        dotenv_quoting.serialize_value(value)


def test_upsert_refuses_before_building_anything() -> None:
    """One unsafe value fails the whole upsert."""
    with pytest.raises(UnsafeValue):
        dotenv.upsert("", {"A": "fine", "B": "${X}"})


def test_upsert_refuses_a_name_bash_cannot_assign() -> None:
    """Names must be shell identifiers."""
    with pytest.raises(RefusedRequest):
        dotenv.upsert("", {"A-B": "v"})


def test_upserted_repr_holds_no_value(canary: str) -> None:
    """The new text stays out of repr."""
    assert canary not in repr(dotenv.upsert("", {"A": canary}))


# --- Property: untouched statements stay byte-identical, python-dotenv reads the result -----

STATEMENTS = [
    "X=1",
    "export Y='two words'",
    '  Z="it\'s"',
    "# comment",
    "",
    "W='l1\nl2'",
    "V=a # note",
    "A=old",
    "export B=old",
    "C='old\nmulti'",
    "A=dup",
]
SAFE_VALUES = st.one_of(
    st.sampled_from(["", "v", "two words", "it's", "l1\nl2", "#x", " pad ", "😀"]),
    st.text(alphabet="ab '\n#=$\"`\\😀", max_size=8).filter(
        lambda v: dotenv_quoting.unsafe_reason(v) is None
    ),
)


def _strip(text: str, names: set[str]) -> str:
    out, pos = [], 0
    for e in dotenv.parse(text):
        if e.key in names:
            out.append(text[pos : e.start])
            pos = e.end
    return "".join(out) + text[pos:]


@settings(max_examples=400, deadline=None, database=None)
@given(
    lines=st.lists(
        st.tuples(st.sampled_from(STATEMENTS), st.sampled_from(["\n", "\r\n"])), max_size=10
    ),
    values=st.dictionaries(st.sampled_from(["A", "B", "C", "D"]), SAFE_VALUES, min_size=1),
    keep=st.frozensets(st.sampled_from(["A", "B", "C", "D"])),
    final_newline=st.booleans(),
)
def test_upsert_changes_nothing_but_the_named_statements(
    lines: list[tuple[str, str]],
    values: dict[str, str],
    keep: frozenset[str],
    final_newline: bool,
) -> None:
    """Other statements keep their bytes and values; named ones read back as written."""
    before = "".join(line + eol for line, eol in lines)
    if not final_newline:
        before = before.rstrip("\r\n")
    result = dotenv.upsert(before, values, keep)
    touched = set(values)
    old_rest, new_rest = _strip(before, touched), _strip(result.text, touched)
    assert new_rest in (old_rest, old_rest + "\n", old_rest + "\r\n")
    read = dotenv_values(stream=io.StringIO(result.text.replace("\r\n", "\n")))
    old = dotenv_values(stream=io.StringIO(before.replace("\r\n", "\n")))
    for name in touched:
        expected = old[name] if name in result.kept else values[name]
        assert expected == read[name]
    assert {k: v for k, v in old.items() if k not in touched} == {
        k: v for k, v in read.items() if k not in touched
    }


def test_upserted_unpacks_as_text_and_name_lists() -> None:
    """`new_text, added, replaced, kept = upsert(...)` works."""
    new_text, added, replaced, kept = dotenv.upsert(
        "B=1\nC=2\n", {"A": "a", "B": "b", "C": "c"}, {"C"}
    )
    assert ("B=b\nC=2\nA=a\n", ("A",), ("B",), ("C",)) == (new_text, added, replaced, kept)


# Names the generated text also holds, in every kind of statement (see dotenv_texts.LINES).
NAMES = ["A", "B", "E", "F", "G", "M", "O", "U", "OP"]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("upsert")


def _as_file(text: str, path: Path) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


@settings(
    max_examples=400,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    before=dotenv_texts(),
    values=st.dictionaries(st.sampled_from(NAMES), SAFE_VALUES, min_size=1),
    keep=st.frozensets(st.sampled_from(NAMES)),
)
def test_python_dotenv_reads_new_values_exactly_and_every_other_key_unchanged(
    before: str, values: dict[str, str], keep: frozenset[str], folder: Path
) -> None:
    """On any text, python-dotenv reads each written name as its new value and every other
    key (kept ones included) as before; only an unreadable line can hide a written name."""
    result = dotenv.upsert(before, values, keep)
    # Kept exactly when python-dotenv holds a non-empty value (before interpolation).
    old_raw = dotenv_values(_as_file(before, folder / "old.env"), interpolate=False)
    assert tuple(n for n in values if n in keep and old_raw.get(n)) == result.kept
    new_path = _as_file(result.text, folder / "new.env")
    read = dotenv_values(new_path)  # what an app gets: defaults, interpolation on
    written = {n: v for n, v in values.items() if n not in result.kept}
    if any(read.get(n) != v for n, v in written.items()):
        assert dotenv.bad_lines(before)
        # ...and the write is refused, naming a line.
        assert verify.hidden(result.text, before, written, ".env") is not None
        return
    # Uninterpolated, since `M=${A}` rightly changes with A.
    new_raw = dotenv_values(new_path, interpolate=False)
    assert {k: v for k, v in old_raw.items() if k not in written} == {
        k: v for k, v in new_raw.items() if k not in written
    }
