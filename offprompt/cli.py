"""The `offprompt` command line: click commands that glue the other modules together."""

import click

from offprompt import __version__


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="offprompt")
def cli() -> None:
    """Collect secrets from a person for a coding agent, without the model seeing them."""


@cli.command()
def serve() -> None:
    """Run the MCP server on stdin/stdout (agent hosts start this)."""
    raise SystemExit(_serve())


def _serve() -> int:
    from offprompt.mcp.stdio import run
    from offprompt.server_app import make_app

    return run(make_app)


def main() -> None:
    cli(prog_name="offprompt")
