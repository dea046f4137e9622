"""What every `offprompt` command shares: help laid out the same everywhere, and `fatal`, the
one way a command says what went wrong and exits 1.
"""

from __future__ import annotations

from typing import NoReturn

import click

__all__ = ["CONTEXT", "fatal"]

# Help is laid out for 80 columns whatever the terminal, so it reads the same everywhere and
# README's copy of it can be checked word for word (tests/cli/test_cli_readme.py).
CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 80, "terminal_width": 80}


def fatal(message: str) -> NoReturn:
    """Say what went wrong and what to do, on stderr, and exit 1."""
    click.echo(f"offprompt: {message}", err=True)
    raise SystemExit(1)
