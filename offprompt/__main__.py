"""`offprompt` and `python -m offprompt`: the command line.

`serve` skips click on purpose: hosts spawn the server at the start of every session and drop
one that answers `initialize` late, so its start-up path imports as little as possible.
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["serve"]:
        from offprompt.mcp.stdio import run
        from offprompt.server_app import make_app

        raise SystemExit(run(make_app))
    from offprompt.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
