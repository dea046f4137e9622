"""The TOML table editor: set one table's keys or take the table out, keeping every other byte."""

import tomllib

import pytest

from offprompt.configedit import tomltable

TABLE = ("mcp_servers", "offprompt")
VALUES = [("command", "/opt/offprompt"), ("args", ["serve"]), ("tool_timeout_sec", 600)]
ENTRY = {"command": "/opt/offprompt", "args": ["serve"], "tool_timeout_sec": 600}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "\n",
        'model = "gpt-5"\n',
        "# only a comment\n",
        '[mcp_servers.other]\ncommand = "x"\n',
        '[mcp_servers]\nother = { command = "x" }\n',
        'a = [\n  1, # one\n  [2, 3],\n]\n[b]\nc = """\n[mcp_servers.offprompt]\n"""\n',
        "a = '''\n[not.a.header]\n'''\n[[fruits]]\nname = 'apple'\n",
        "[ \"quoted\" . 'key' ]  # comment after a header\nv = 1\n",
        'a = 1\r\n[b]\r\nc = "d"\r\n',
        's = "a # not a comment [x]"\n',
        "dt = 1979-05-27 07:32:00Z\n",
        "t = { a = 1, b = [1, 2] }\n",
        'e = "quote \\" and backslash \\\\"\n',
    ],
)
def test_set_then_remove_gives_back_the_same_bytes(text: str) -> None:
    """The appended table reads back as ours, and removing it restores the file."""
    added = tomltable.set_keys(text, TABLE, VALUES)

    assert ENTRY == tomllib.loads(added)["mcp_servers"]["offprompt"]
    assert text == tomltable.remove_table(added, TABLE)


def test_existing_table_keeps_its_other_keys_comments_and_order() -> None:
    """Our keys change in place; missing ones follow the table's last key."""
    text = (
        "[mcp_servers.offprompt]\n"
        "# my note\n"
        'command = "old"  # keep this comment\n'
        'env = { A = "1" }\n'
        "\n"
        "# about the next table\n"
        "[next]\n"
        "x = 1\n"
    )

    got = tomltable.set_keys(text, TABLE, VALUES)

    assert (
        "[mcp_servers.offprompt]\n"
        "# my note\n"
        'command = "/opt/offprompt"  # keep this comment\n'
        'env = { A = "1" }\n'
        'args = ["serve"]\n'
        "tool_timeout_sec = 600\n"
        "\n"
        "# about the next table\n"
        "[next]\n"
        "x = 1\n"
    ) == got


def test_remove_takes_sub_tables_and_keeps_what_follows() -> None:
    """[mcp_servers.offprompt.env] is part of our entry; the next table's comment is not."""
    text = (
        "a = 1\n"
        "\n"
        "[mcp_servers.offprompt]\n"
        'command = "x"\n'
        "\n"
        "[mcp_servers.offprompt.env]\n"
        'A = "1"\n'
        "\n"
        "# the other one\n"
        "[mcp_servers.other]\n"
        'command = "y"\n'
    )

    got = tomltable.remove_table(text, TABLE)

    assert 'a = 1\n\n# the other one\n[mcp_servers.other]\ncommand = "y"\n' == got
    assert {"a": 1, "mcp_servers": {"other": {"command": "y"}}} == tomllib.loads(got)


def test_remove_without_the_table_changes_nothing() -> None:
    """No table, no change."""
    text = '# c\n[mcp_servers.other]\ncommand = "y"\n'

    assert text == tomltable.remove_table(text, TABLE)


def test_a_new_table_carries_its_comments() -> None:
    """Comments passed in go under the header, so a person reading the file knows who wrote it."""
    got = tomltable.set_keys("", TABLE, [("command", "x")], ["Added by offprompt."])

    assert '[mcp_servers.offprompt]\n# Added by offprompt.\ncommand = "x"\n' == got


@pytest.mark.parametrize(
    ("value", "toml"),
    [
        ("plain", '"plain"'),
        ('q"b\\', '"q\\"b\\\\"'),
        ("tab\there\x7f", '"tab\\u0009here\\u007f"'),
        ("é", '"é"'),
        (True, "true"),
        (600, "600"),
        (1.5, "1.5"),
        (["a", "b"], '["a", "b"]'),
    ],
)
def test_values_are_written_as_toml_reads_them(value: object, toml: str) -> None:
    """Strings are escaped for TOML (DEL and controls too), and read back unchanged."""
    assert toml == tomltable.dumps(value)
    assert value == tomllib.loads(f"v = {toml}")["v"]


def test_long_lists_go_one_item_a_line() -> None:
    """A long env_vars list stays readable."""
    names = [f"NAME_{i:02d}" for i in range(12)]

    text = tomltable.dumps(names)

    assert text.startswith("[\n  ")
    assert text.endswith(",\n]")
    assert names == tomllib.loads(f"v = {text}")["v"]


@pytest.mark.parametrize(
    "text",
    ['a = "open\n', "a = [1, 2\n", "[table\n", "a = \n", "= 1\n", "a = 1 ]\n"],
)
def test_scanner_reports_what_it_cannot_follow(text: str) -> None:
    """The scanner stops with a line number instead of guessing (callers then refuse)."""
    with pytest.raises(tomltable.TomlScanError, match="at line"):
        tomltable.scan(text)
