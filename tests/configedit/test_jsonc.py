"""The JSONC editor: parse with offsets, splice one member in or out, keep every other byte."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from offprompt.configedit import jsonc, jsonc_edit

ENTRY = {"command": "/opt/offprompt", "args": ["serve"]}
PATH = ("mcpServers", "offprompt")


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "{}\n",
        '{"a": 1}',
        '{"a":1}\n',
        '{\n  "a": 1\n}\n',
        '{\n  "a": 1,\n}\n',
        '{\n  "a": 1 // note\n}\n',
        '{\n  "a": 1, // note\n}\n',
        '{\n  "a": 1 /* note */\n}\n',
        "// header\n{\n  // only a comment\n}\n",
        '{\r\n  "a": 1\r\n}\r\n',
        '\ufeff{\n  "a": 1\n}\n',
        '{\n\t"mcpServers": {\n\t\t"x": {"command": "y"}\n\t}\n}',
        '{"mcpServers": {"x": {"command": "y"}}, "z": [1, 2]}',
        '{\n  "mcpServers": {"x": 1},\n  "z": 2\n}\n',
        '{\n  "mcpServers": {\n    "x": 1,\n  },\n}\n',
        '{\n  "mcpServers": {\n    // servers\n  }\n}\n',
        '{\n  "a": "}\\" // not a comment",\n  "b": "/* nor this */"\n}\n',
    ],
)
def test_set_then_remove_gives_back_the_same_bytes(text: str) -> None:
    """What set_value adds, remove takes out again to the byte."""
    added = jsonc_edit.set_value(text, PATH, ENTRY)

    assert jsonc.same(ENTRY, jsonc.parse(added).root.value["mcpServers"]["offprompt"])  # type: ignore[index]
    assert text == jsonc_edit.remove(added, PATH)


def test_remove_drops_an_empty_section_too() -> None:
    """An emptied section without comments goes: it means the same as no section."""
    assert '{"z": 1}' == jsonc_edit.remove('{"mcpServers": {"offprompt": {}}, "z": 1}', PATH)


def test_remove_keeps_a_section_holding_comments() -> None:
    """Comments are never deleted, so a section with one stays (empty)."""
    text = '{\n  "mcpServers": {\n    // keep me\n    "offprompt": {}\n  }\n}\n'

    assert '{\n  "mcpServers": {\n    // keep me\n  }\n}\n' == jsonc_edit.remove(text, PATH)


def test_remove_takes_out_every_duplicate_key() -> None:
    """JSON readers use the last of two equal keys; both are ours, both go."""
    text = '{"mcpServers": {"offprompt": 1, "a": 2, "offprompt": 3}}'

    assert '{"mcpServers": {"a": 2}}' == jsonc_edit.remove(text, PATH)


def test_set_replaces_the_member_readers_use() -> None:
    """With a repeated key, the last one (the one readers see) is replaced."""
    text = '{"mcpServers": {"offprompt": 1, "offprompt": 2}}'

    got = jsonc_edit.set_value(text, PATH, 3)

    assert '{"mcpServers": {"offprompt": 1, "offprompt": 3}}' == got


def test_set_replaces_a_value_in_place_keeping_its_neighbours() -> None:
    """Changing one key of an entry touches only that value's text."""
    text = '{\n  "s": {\n    "offprompt": {"command": "old", "env": {"A": "1"}} // mine\n  }\n}\n'

    got = jsonc_edit.set_value(text, ("s", "offprompt", "command"), "new")

    assert text.replace('"old"', '"new"') == got


def test_new_members_follow_the_files_indentation() -> None:
    """Four-space files get four-space entries; tab files get tabs."""
    four = jsonc_edit.set_value('{\n    "a": 1\n}\n', ("b",), {"c": 1})
    tabs = jsonc_edit.set_value('{\n\t"a": 1\n}\n', ("b",), {"c": 1})

    assert '{\n    "a": 1,\n    "b": {\n        "c": 1\n    }\n}\n' == four
    assert '{\n\t"a": 1,\n\t"b": {\n\t\t"c": 1\n\t}\n}\n' == tabs


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "unexpected end of file at line 1"),
        ('{"a": 1', "expected , or } at line 1"),
        ('{\n"a": 1,,\n}', 'expected a "key" or } at line 2'),
        ('{"a": tru}', "unexpected 't' at line 1"),
        ('{"a": 1} x', "more text after the end at line 1"),
        ('{"a": /* open', "an unclosed /* comment at line 1"),
        ('{"a": "open}', "an unclosed string at line 1"),
        ("{'a': 1}", 'expected a "key" or } at line 1'),
    ],
)
def test_parse_errors_say_what_and_where(text: str, says: str) -> None:
    """A person can find the mistake from the message."""
    with pytest.raises(jsonc.JsoncError) as caught:
        jsonc.parse(text)

    assert says == str(caught.value)


def test_set_refuses_a_section_that_is_not_an_object() -> None:
    """Never replace someone's non-object section with ours."""
    with pytest.raises(jsonc.JsoncError, match="mcpServers is not an object"):
        jsonc_edit.set_value('{"mcpServers": [1]}', (*PATH, "command"), "x")


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1, 1, True),
        (1, 1.0, False),
        (True, 1, False),
        ({"a": [1, {"b": None}]}, {"a": [1, {"b": None}]}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
        ([1, 2], [2, 1], False),
    ],
)
def test_same_compares_as_json_not_as_python(a: object, b: object, expected: bool) -> None:
    """`true` is not `1`, so a verification cannot pass by accident."""
    assert expected == jsonc.same(a, b)


def test_is_empty_only_for_a_bare_object() -> None:
    """Only `{}` and whitespace count as empty; a comment is content."""
    assert (True, True, False, False) == (
        jsonc.is_empty("{}"),
        jsonc.is_empty(" {}\n"),
        jsonc.is_empty("// mine\n{}"),
        jsonc.is_empty('{"a": 1}'),
    )


scalars = st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.text(max_size=8)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
documents = st.dictionaries(
    st.text(max_size=8).filter(lambda k: k != "mcpServers"), values, max_size=4
)
layouts = st.sampled_from([None, 1, 2, 4, "\t"])


@settings(max_examples=200, deadline=None)
@given(
    doc=documents,
    others=st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k != "offprompt"), values, max_size=3
    ),
    indent=layouts,
    crlf=st.booleans(),
)
def test_any_json_file_round_trips(
    doc: dict[str, object], others: dict[str, object], indent: int | str | None, crlf: bool
) -> None:
    """For any JSON layout: adding reads back as the original plus our entry, stays plain JSON,
    and removing gives the original bytes back."""
    if others:
        doc = {**doc, "mcpServers": others}
    text = json.dumps(doc, indent=indent, ensure_ascii=False) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")

    added = jsonc_edit.set_value(text, PATH, ENTRY)

    expected = json.loads(text)
    expected.setdefault("mcpServers", {})["offprompt"] = ENTRY
    assert jsonc.same(expected, json.loads(added))
    assert text == jsonc_edit.remove(added, PATH)
