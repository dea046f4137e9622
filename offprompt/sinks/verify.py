"""The last check before a .env is written: every written name reads back as its value for
python-dotenv, Node and bash, whatever the other lines do; else a reason naming the line to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from offprompt.sinks import dotenv, nodeenv, shell

__all__ = ["hidden"]

# Each reader is asked in its own terms: python-dotenv through our port of its grammar, Node
# through a port of its parser, bash through a sound reading of every command it would run.
# Existing lines are never rewritten to make room: the person is told which line to fix.


def hidden(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    """Why some name in `written` would not read back from `new_text`, or None when all do.

    The reason names keys and line numbers of `old_text` (unchanged, since nothing is written
    then), never a value.
    """
    for check in (_python_dotenv, _node, _bash):
        why = check(new_text, old_text, written, shown)
        if why is not None:
            return why
    return None


def _python_dotenv(
    new_text: str, old_text: str, written: Mapping[str, str], shown: str
) -> str | None:
    entries = dotenv.parse(new_text)
    for name, value in written.items():
        mine = [e for e in entries if e.key == name]
        if len(mine) != 1 or mine[0].value != value:
            bad = dotenv.bad_lines(old_text)
            where = f" (look at line {_lines(bad)})" if bad else ""
            return (
                f"A line of {shown} that python-dotenv cannot read would hide {name} from"
                f" it{where}; fix that line and try again."
            )
    return None


def _node(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    node = nodeenv.parse(new_text)
    for name, value in written.items():
        if node.get(name) != value:
            gluers = _node_gluers(old_text)
            if gluers:
                which = (
                    f"line {_lines(gluers)} of {shown} has"
                    if len(gluers) == 1
                    else (f"lines {_lines(gluers)} of {shown} have")
                )
                return (
                    f"Node's --env-file would not see {name}: {which} no '=' and no '#' at the"
                    " start (a line holding only spaces, or an indented comment, counts), so"
                    " Node reads it as part of the next name. Remove or fix it and try again."
                )
            return (
                f"Node's --env-file would not see {name}: an earlier line of {shown} (an"
                " unclosed quote or backtick?) runs into it. Fix that line and try again."
            )
    return None


def _bash(new_text: str, old_text: str, written: Mapping[str, str], shown: str) -> str | None:
    for name in written:
        if name in shell.BASH_OWN:
            return (
                f"bash keeps a value of its own in {name} (the shell sets that variable itself),"
                " so it would not read the one written. Choose another name."
            )
        if name in shell.BASH_RUNS:
            return (
                f"bash runs the value of {name} as code or lets it change how it reads the rest"
                " of the file, so offprompt does not write a secret there. Choose another name."
            )
    script = shell.analyze(new_text)
    entries = [e for e in dotenv.parse(new_text) if e.key in written]
    for name, value in written.items():
        mine = [e for e in entries if e.key == name]
        why = _bash_reason(name, value, script, mine, new_text, old_text, written, shown)
        if why is not None:
            return why
    return None


def _bash_reason(
    name: str,
    value: str,
    script: shell.Script,
    mine: list[dotenv.Entry],
    new_text: str,
    old_text: str,
    written: Mapping[str, str],
    shown: str,
) -> str | None:
    """Why bash would not end with `value` in `name` after sourcing `new_text` (`mine`: the
    statements python-dotenv reads for it there), naming a line of `old_text`; None when it
    certainly does. Sound, not complete: the whole file must be understood,
    our statement must run on its own, and nothing bash runs after it may assign the name."""

    def line(offset: int) -> int:
        return _bash_line(new_text, old_text, written, offset)

    if script.problem is not None:
        return (
            f"bash might not read {name} as written: line {line(script.problem.offset)} of"
            f" {shown} holds {script.problem.what}. offprompt vouches for a .env only when bash"
            " runs nothing in it but comments, assignments and 'export'; fix or remove that line"
            " and try again."
        )
    if len(mine) != 1:
        return f"bash might not read {name} as written in {shown}; nothing there says which line."
    entry = mine[0]
    key_at = entry.start + len(entry.prefix)
    ours: tuple[shell.Command, shell.Assignment] | None = None
    for command in script.commands:
        for a in command.assignments:
            if a.name == name and a.offset > key_at:
                return (
                    f"bash would end with another value in {name}: line {line(a.offset)} of"
                    f" {shown} assigns {name} again, and bash runs it after the line offprompt"
                    " writes. Remove that assignment and try again."
                )
            if a.name == name and a.offset == key_at:
                ours = (command, a)
    if ours is not None:
        command, a = ours
        if not command.after and command.start >= entry.start and not a.append:
            if a.value == value:
                return None
    holder = next((c for c in script.commands if c.start <= key_at < c.end), None)
    if holder is not None and holder.after:
        when = "succeeds" if holder.after == "&&" else "fails"
        return (
            f"bash would run the line offprompt writes for {name} only if the command before it"
            f" {when}: line {line(holder.after_at)} of {shown} ends with '{holder.after}'. Remove"
            " it and try again."
        )
    if holder is not None and holder.start < entry.start:
        return (
            f"bash would not see {name}: line {line(holder.start)} of {shown} ends with a"
            " backslash, which joins the next line onto it. Remove the backslash and try again."
        )
    return f"bash would not read {name} back exactly from {shown} (line {line(key_at)})."


def _bash_line(new_text: str, old_text: str, written: Mapping[str, str], offset: int) -> int:
    """The line of `old_text` that `offset` of `new_text` came from. The upsert swaps the first
    statement of each written name for ours, drops its later ones and appends the rest, so the
    text between those statements is the same in both."""
    olds = [e for e in dotenv.parse(old_text) if e.key in written]
    news: dict[str, dotenv.Entry] = {}
    for e in dotenv.parse(new_text):
        if e.key in written:
            news.setdefault(e.key, e)
    old_pos = new_pos = 0
    replaced: set[str] = set()
    for o in olds:
        gap = o.start - old_pos
        if offset < new_pos + gap:
            break
        new_pos, old_pos = new_pos + gap, o.start
        if o.key not in replaced:
            replaced.add(o.key)
            ours = news.get(o.key)
            if ours is None or ours.start != new_pos:
                return new_text.count("\n", 0, offset) + 1  # not an upsert of old_text
            if offset < ours.end:
                return old_text.count("\n", 0, o.start) + 1
            new_pos = ours.end
        old_pos = o.end
    return old_text.count("\n", 0, min(old_pos + offset - new_pos, len(old_text))) + 1


def _lines(numbers: tuple[int, ...]) -> str:
    shown = ", ".join(map(str, numbers[:5]))
    return shown + (" …" if len(numbers) > 5 else "")


def _node_gluers(text: str) -> tuple[int, ...]:
    """Lines Node 20 glues onto the next key: not blank, not starting with `#`, without `=`,
    and not inside a multi-line value."""
    inside: list[tuple[int, int]] = []
    for e in dotenv.parse(text):
        if e.value is not None:
            first_line_end = text.find("\n", e.start)
            inside.append((first_line_end + 1 if first_line_end != -1 else e.end, e.end))
    found: list[int] = []
    pos = 0
    # Lines as Node sees them: split at LF only (it deletes every CR first).
    for number, line in enumerate(re.findall(r"[^\n]*\n|[^\n]+\Z", text), start=1):
        start, pos = pos, pos + len(line)
        if any(lo <= start < hi for lo, hi in inside):
            continue
        bare = line.replace("\r", "").rstrip("\n")
        if number == 1:
            bare = bare.lstrip(" ")  # Node trims spaces at the start of the file
        if bare and not bare.startswith("#") and "=" not in bare:
            found.append(number)
    return tuple(found)
