"""The tool listing's source: titles, descriptions and annotations, joined with `schemas`.

`offprompt serve` never imports this module: it reads `listing.json`, which this one writes
(`python -m offprompt.tools.listing`; `--check` says whether the file is current). A test keeps
the two equal, so a schema, registry or description change without regenerating fails.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from offprompt.disk import paths
from offprompt.tools import LISTING, schemas

REGENERATE = "python -m offprompt.tools.listing"

COLLECT_DESCRIPTION = """\
Ask the person for secrets (API keys, tokens, passwords, database URLs) and write them into the \
project's .env (or one file) without the values passing through you. Call secret_status first \
and ask only for the keys it lists as missing. List every key the task needs in ONE call, with a \
short reason. A page opens for the person on their machine; you get back only key names and a \
four-emoji fingerprint. The call waits until the person submits; while it is open (even moved to \
the background), do not call collect_secret again for the same keys. When the result has \
tell_user, say it to the person right away so they can match it with their page. Never ask for a \
secret in the chat, and never open, print or read the .env file, before or after: secret_status \
says which keys it holds. If the result has a url, show it to the person on its own line and \
call await_secret. If a result has status confirm, ask the person for the code their page shows \
and pass it to await_secret as confirm. Use generate for values you may invent (session \
secrets, signing keys)."""

AWAIT_DESCRIPTION = """\
Wait (up to a minute per call) for the person to submit a page that collect_secret opened, and \
get the same result shape: awaiting, confirm, written (with the fingerprint to tell the person), \
expired or cancelled. Status confirm means the person submitted a remote page that now shows \
them a confirmation code: ask the person to type that code to you, then call await_secret again \
with request_id and confirm set to the code as they typed it. Never guess the code; five wrong \
codes cancel the request."""

STATUS_DESCRIPTION = """\
Which of the project's keys are set, empty, missing or still a placeholder in its .env (or \
another dotenv file), without any value reaching you. Call it instead of opening, printing or \
grepping the file, and before collect_secret, so you ask only for what is missing. Names \
default to the keys of the example file beside it (.env.example, .env.sample, .env.template, \
.env.dist), else the file's own keys. A set key offprompt knows by name also gets check ok or \
mismatch, with a hint naming the credential it looks like."""

CANCEL_DESCRIPTION = """\
Close a collect_secret request the person no longer needs to answer; anything typed on its page \
is discarded and nothing is written."""


def _tool(
    name: str,
    title: str,
    description: str,
    input_schema: dict[str, Any],
    output_schema: dict[str, Any],
    hints: dict[str, bool],
) -> dict[str, Any]:
    # The key order is the one `tools/list` has always sent (`Tool.describe`).
    return {
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": input_schema,
        "annotations": {"title": title, **hints},
        "outputSchema": output_schema,
    }


def generate() -> list[dict[str, Any]]:
    """The four tools as `tools/list` describes them, computed from the schemas and registry."""
    output = schemas.result_output()
    return [
        _tool(
            "collect_secret",
            "Collect secrets from the person",
            COLLECT_DESCRIPTION,
            schemas.collect_input(),
            output,
            {
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": False,
                "openWorldHint": False,
            },
        ),
        _tool(
            "await_secret",
            "Wait for a secret page",
            AWAIT_DESCRIPTION,
            schemas.await_input(),
            output,
            {"readOnlyHint": True, "openWorldHint": False},
        ),
        _tool(
            "cancel_secret",
            "Cancel a secret request",
            CANCEL_DESCRIPTION,
            schemas.request_id_input(),
            output,
            {
                "readOnlyHint": False,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        ),
        _tool(
            "secret_status",
            "Which secrets are set",
            STATUS_DESCRIPTION,
            schemas.status_input(),
            schemas.status_output(),
            {
                "readOnlyHint": True,
                "destructiveHint": False,
                "idempotentHint": True,
                "openWorldHint": False,
            },
        ),
    ]


def render(listing: list[dict[str, Any]]) -> str:
    """The file's text: stable, readable in a diff, UTF-8 as written."""
    return json.dumps(listing, indent=1, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write `listing.json`; with `--check`, only say whether it is current (exit 1 if not)."""
    args = sys.argv[1:] if argv is None else argv
    path = Path(LISTING)
    text = render(generate())
    if args == ["--check"]:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current == text:
            return 0
        sys.stderr.write(f"{path} is out of date: run `{REGENERATE}`\n")
        return 1
    if args:
        sys.stderr.write(f"usage: {REGENERATE} [--check]\n")
        return 2
    paths.replace_file(path, text.encode("utf-8"), mode=None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
