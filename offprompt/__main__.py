"""`offprompt` and `python -m offprompt`: the command line.

`serve` skips click on purpose: hosts spawn the server at the start of every session and drop
one that answers `initialize` late, so its start-up path imports as little as possible. `guard`
skips it too: hosts run it before every tool call (DESIGN §14), for an installed offprompt
through `python -I -S` (agents/guard_start.py).
"""

import sys


def main() -> None:
    if sys.argv[1:] == ["serve"]:
        from offprompt.mcp.stdio import run
        from offprompt.tools.app import make_app

        raise SystemExit(run(make_app))
    if sys.argv[1:] == ["guard"]:
        raise SystemExit(_guard())
    if sys.flags.no_site:
        # Started as the guard's hook starts it (`python -I -S`, agents/guard_start.py) for
        # another command (`offprompt agents` checks that program with `--version`): the rest
        # of the CLI needs the environment's packages.
        import site

        site.main()
    from offprompt.cli import main as cli_main

    cli_main()


def _guard() -> int:
    try:
        from offprompt.guard.hook import main as guard_main
    except BaseException:
        # A broken install must not let a read of .env through: block what names it (exit 2,
        # which hosts treat as "blocked"), let the rest pass.
        try:
            raw = sys.stdin.buffer.read(4 * 1024 * 1024)
        except BaseException:
            raw = b""
        # `\u00…` too: a JSON escape can spell the name (`\u002eenv`) without its bytes.
        if b".env" in raw or b".offprompt-" in raw or b"\\u00" in raw.lower():
            sys.stderr.write(
                "offprompt guard: blocked: offprompt is broken and cannot check this"
                " call, which names .env or a staging folder; run `offprompt keys` instead.\n"
            )
            return 2
        return 0
    return guard_main()


if __name__ == "__main__":
    main()
