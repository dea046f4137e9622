"""Who is asking: the host's clientInfo name shown as the product people know, never the model's."""

from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient

from offprompt.page.clients import UNKNOWN, display_name, known_hosts
from offprompt.spec import SecretSpec, SinkSpec
from offprompt.store import RequestStore

from .conftest import path_of


@pytest.mark.parametrize(
    ("client", "shown"),
    [
        ("claude-code", "Claude Code"),
        ("codex-mcp-client", "Codex"),
        ("cursor-vscode", "Cursor"),
        ("Visual Studio Code", "VS Code"),
        ("gemini-cli-mcp-client", "Gemini CLI"),
        ("windsurf-client", "Windsurf"),
        ("Zed", "Zed"),
        ("offprompt-cli", "A command in your terminal"),
    ],
)
def test_known_hosts_get_their_product_names(client: str, shown: str) -> None:
    """Each host's clientInfo name maps to the name people know it by."""
    assert display_name(client) == shown


def test_unknown_host_is_shown_by_the_name_it_gave() -> None:
    """A name the table lacks is shown as given."""
    assert display_name("my-own-agent") == "my-own-agent"


@pytest.mark.parametrize("client", [None, "", "   "])
def test_no_name_is_an_agent(client: str | None) -> None:
    """A host that sent no name is "An agent"."""
    assert display_name(client) == UNKNOWN == "An agent"


def test_control_characters_in_a_name_are_spelled_out_and_long_names_cut() -> None:
    """A newline or bidi control is shown as \\uXXXX, and a long name ends in an ellipsis."""
    assert display_name("a\nb\u202ec") == "a\\u000ab\\u202ec"
    assert display_name("x" * 200) == "x" * 59 + "…"


def test_table_names_are_plain_words() -> None:
    """Every product name is short plain text (nothing to escape)."""
    assert all(len(v) < 40 and "<" not in v and "&" not in v for v in known_hosts().values())


@pytest.mark.parametrize(
    ("host", "heading"),
    [
        ("claude-code", "Claude Code is asking for two values"),
        (None, "An agent is asking for two values"),
        ("<b>x</b>", "&lt;b&gt;x&lt;/b&gt; is asking for two values"),
    ],
)
async def test_page_heading_names_the_host_and_counts_the_values(
    client: TestClient, store: RequestStore, project: Path, host: str | None, heading: str
) -> None:
    """The page's h1 says who is asking and how many values, the host's name escaped."""
    secrets = [SecretSpec("A_KEY"), SecretSpec("B_KEY")]
    req = store.create(secrets, SinkSpec(), project, "r", ttl=300, client=host)
    body = await (await client.get(path_of(req))).text()
    assert f'<h1 id="title">{heading}</h1>' in body
