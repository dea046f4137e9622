"""The whole page, HTML, script, styles and icons inlined, stays under 100 KB uncompressed.

The page carries the project's path (sealed, in a remote page), so its size follows the path's
length: measured with a path of one fixed length, 64 characters, whatever folder pytest (or
pytest-xdist, whose folders are longer) gives the test."""

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient
from helpers import node_or_skip

from offprompt.spec import GenerateSpec, SecretSpec, SinkSpec
from offprompt.store import RequestStore

from .conftest import path_of

LIMIT = 100_000
ROOT = Path(__file__).resolve().parents[2]
PATH_LENGTH = 64


@pytest.fixture
def project() -> Iterator[Path]:
    """A project folder whose absolute path is PATH_LENGTH characters long."""
    base = Path(tempfile.mkdtemp(prefix="size-", dir="/tmp"))
    folder = base / ("p" * (PATH_LENGTH - len(str(base)) - 1))
    folder.mkdir()
    assert PATH_LENGTH == len(str(folder))
    yield folder
    shutil.rmtree(base)


TYPICAL = (
    SecretSpec("STRIPE_SECRET_KEY", caption="Developers → API keys"),
    SecretSpec("STRIPE_WEBHOOK_SECRET"),
    SecretSpec("RESEND_API_KEY", provider="resend"),
    SecretSpec("DATABASE_URL", format="postgres_url"),
    SecretSpec("OPENAI_API_KEY"),
    SecretSpec("SESSION_SECRET", generate=GenerateSpec()),
)
LARGEST = tuple(
    SecretSpec(name, caption="Find it in the dashboard under Settings → API keys → Secret")
    for name in (
        "STRIPE_SECRET_KEY",
        "STRIPE_WEBHOOK_SECRET",
        "RESEND_API_KEY",
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "SUPABASE_SERVICE_ROLE_KEY",
        "NEXT_PUBLIC_SUPABASE_URL",
        "GITHUB_TOKEN",
        "SENTRY_DSN",
        "TWILIO_AUTH_TOKEN",
        "CLERK_SECRET_KEY",
        "APPLE_PRIVATE_KEY",
    )
)


async def served_size(
    client: TestClient,
    store: RequestStore,
    project: Path,
    secrets: tuple[SecretSpec, ...],
    reason: str,
    *,
    remote: bool = False,
) -> int:
    req = store.create(
        secrets, SinkSpec(), project, reason, ttl=300, client="claude-code", remote=remote
    )
    return len(await (await client.get(path_of(req))).read())


async def test_typical_page_is_under_100_kb(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """Six fields (registry keys, a format, a generated one) serve in under 100 KB."""
    size = await served_size(client, store, project, TYPICAL, "Billing needs these.")
    assert size < LIMIT


async def test_largest_page_is_under_100_kb(
    client: TestClient, store: RequestStore, project: Path
) -> None:
    """Twelve registry keys with captions, a 2,000-character reason, sealed: still under 100 KB."""
    size = await served_size(client, store, project, LARGEST, "x" * 2000, remote=True)
    assert size < LIMIT


def test_styles_are_trimmed_outside_their_strings_only() -> None:
    """The inlined CSS loses the blanks after `:` and around `,` (room in the page), while a
    quoted `content` text keeps every character."""
    from offprompt.page.assets import _trim_css

    css = 'a , b { font: 1px ui-monospace, "A B"; }\n.d::after { content: "x: y, z"; }'
    assert 'a,b{font:1px ui-monospace,"A B";}.d::after{content:"x: y, z";}' == _trim_css(css)


def test_scripts_are_joined_only_where_no_statement_ends() -> None:
    """A script's lines are joined after an opening bracket or a comma and before a closing
    one, where no statement can end; every other line break stays."""
    from offprompt.page.assets import _trim_js

    js = "f(\n  a,\n  b\n);\nif (x) {\n  g()\n  // note\n}\nreturn\n[1]\n"
    assert "f(a,b);\nif (x) {g()}\nreturn\n[1]" == _trim_js(js)


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "web").glob("*.js")))
def test_every_trimmed_script_still_parses(name: str) -> None:
    """Each script, as the page inlines it, is JavaScript node accepts (`node --check`)."""
    from offprompt.page.assets import asset

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_text(asset(name), encoding="utf-8")
        done = subprocess.run(
            [node_or_skip(), "--check", str(path)], capture_output=True, text=True, check=False
        )
    assert 0 == done.returncode, done.stderr
