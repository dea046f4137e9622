"""How the guard's hook starts an installed offprompt (DESIGN §14: it runs before every tool
call, so its start-up is most of its cost; issue 45).

The console script pip writes starts Python with `site` (every `.pth` file of the environment,
setuptools' among them) and imports `re` before offprompt does anything. For an install whose
console script sits beside its interpreter (a venv, pipx, uv tool, pyenv), the hook instead
runs that interpreter isolated and without site (`python -I -S`: no PYTHON* variables, no
project folder on sys.path) with a few words of code that take offprompt straight from the
environment's site-packages, found from the interpreter's own path and version, so that a venv
rebuilt on another Python still finds it. Where that folder does not hold offprompt (rebuilt
as an editable install, say), the code runs the console script, named in the command, as
before. Any other command (uvx, --command, a team's shared hook, an editable install) is left as
it is.

The code holds no `'` and no backslash (fish reads those differently inside single quotes:
agents/hook_wrapper.py); `offprompt.__main__` loads site itself for anything but `guard`
(`offprompt agents` checks the hook's program with `… --version`).
"""

from __future__ import annotations

import os
import sys

from offprompt.agents.interface import ServerCommand

__all__ = ["CODE", "argv", "shown"]

# argv[1] is the console script; the rest is offprompt's own arguments (`guard`).
CODE = (
    "import sys,os;v=sys.version_info;"
    'd=os.path.dirname(os.path.dirname(sys.executable))+f"/lib/python{v[0]}.{v[1]}/site-packages";'
    "s=sys.argv.pop(1);"
    'os.path.isfile(d+"/offprompt/__main__.py")or os.execv(s,[s,*sys.argv[1:]]);'
    "sys.path.append(d);from offprompt.__main__ import main;main()"
)


def _site_packages(python: str) -> str:
    """Where CODE, run by `python`, looks for offprompt (the same sum, done here)."""
    v = sys.version_info
    return os.path.dirname(os.path.dirname(python)) + f"/lib/python{v[0]}.{v[1]}/site-packages"


def argv(server: ServerCommand, executable: str | None = sys.executable) -> tuple[str, ...]:
    """The guard's argv for `server` (init's server command): the fast start where `server`
    is the console script beside `executable` (the Python running init) and its
    site-packages holds offprompt, else (or `executable` None) `server` with `guard` for
    `serve`."""
    args = list(server.args)
    if args and args[-1] == "serve":
        args[-1] = "guard"
    else:
        args.append("guard")
    plain = (server.command, *args)
    if executable is None:
        return plain
    python = os.path.abspath(executable)
    if (
        os.name != "posix"
        or tuple(server.args) != ("serve",)
        or not os.path.isabs(server.command)
        or os.path.dirname(server.command) != os.path.dirname(python)
        or not os.path.isfile(_site_packages(python) + "/offprompt/__main__.py")
    ):
        return plain
    return (python, "-I", "-S", "-c", CODE, server.command, "guard")


def shown(words: tuple[str, ...]) -> tuple[tuple[str, ...], bool]:
    """The guard's argv as a person reads it: the console script and `guard` for the fast
    start (True), else `words` as they are (False)."""
    if len(words) == 7 and words[1:5] == ("-I", "-S", "-c", CODE):
        return words[5:], True
    return words, False
