"""The last check before a .env is written: every written name reads back as its value for
python-dotenv, Node and bash, whatever the other lines do; else a reason naming the line to fix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property

from offprompt.sinks import dotenv, nodeenv, shell

__all__ = ["hidden"]

# Each reader is asked in its own terms: python-dotenv itself (its parser and `${}` resolution,
# as `dotenv_values` runs them), Node 22/24 through a port of their parser (fuzzed against the
# official binaries), bash through a sound reading of every command it would run.
# Existing lines are never rewritten to make room: the person is told which line to fix.
# Each reader reads the new text once, whatever the number of names: a check per name looks
# its name up in what that one reading found.


class _Texts:
    """The text about to be written and the file as it is, each read by each reader at most
    once, and only when a check asks."""

    def __init__(
        self,
        new_text: str,
        old_text: str,
        new: dotenv.Parsed | None = None,
        old: dotenv.Parsed | None = None,
    ) -> None:
        if (new is not None and new.text != new_text) or (old is not None and old.text != old_text):
            raise ValueError("a given parse is not a parse of its text")
        self.new_text = new_text
        self.old_text = old_text
        if new is not None:
            self.new = new
        if old is not None:
            self.old = old

    @cached_property
    def new(self) -> dotenv.Parsed:
        return dotenv.Parsed(self.new_text)

    @cached_property
    def old(self) -> dotenv.Parsed:
        return dotenv.Parsed(self.old_text)

    @cached_property
    def node(self) -> list[nodeenv.Assignment]:
        return nodeenv.assignments(self.new_text)

    @cached_property
    def script(self) -> shell.Script:
        return shell.analyze(self.new_text)


def hidden(
    new_text: str,
    old_text: str,
    written: Mapping[str, str],
    shown: str,
    *,
    new: dotenv.Parsed | None = None,
    old: dotenv.Parsed | None = None,
) -> str | None:
    """Why some name in `written` would not read back from `new_text`, or None when all do.

    The reason names keys and line numbers of `old_text` (unchanged, since nothing is written
    then), never a value. `new`, `old`: the texts already parsed (`dotenv.Parsed`), so they are
    not parsed again.
    """
    texts = _Texts(new_text, old_text, new, old)
    for check in (_python_dotenv, _node, _bash, _bash_others):
        why = check(texts, written, shown)
        if why is not None:
            return why
    return None


def _python_dotenv(texts: _Texts, written: Mapping[str, str], shown: str) -> str | None:
    # python-dotenv as an app calls it (defaults, interpolation on), on the text about to be
    # written as `dotenv_values(path)` reads it (universal newlines).
    read = texts.new.read_by_python_dotenv
    for name, value in written.items():
        if read.get(name) != value:
            bad = texts.old.bad_lines
            where = f" (look at line {_lines(bad)})" if bad else ""
            return (
                f"A line of {shown} that python-dotenv cannot read would hide {name} from"
                f" it{where}; fix that line and try again."
            )
    return None


def _node(texts: _Texts, written: Mapping[str, str], shown: str) -> str | None:
    node = {a.key: a.value for a in texts.node}  # as nodeenv.parse: the last one wins
    for name, value in written.items():
        if node.get(name) != value:
            return _node_reason(name, texts, shown)
    return None


def _node_reason(name: str, texts: _Texts, shown: str) -> str:
    """Which line makes Node miss `name`, found by reading the new text as Node does."""
    new_text, old_text = texts.new_text, texts.old_text
    ours = [e.start for e in texts.new.by_key.get(name, [])]
    at = ours[0] if ours else len(new_text)
    seen = texts.node
    over = [a for a in seen if a.start < at < a.end]
    if over:
        line = _old_line(over[-1].start, new_text, old_text)
        where = f"line {line} of {shown}" if line else f"a line above it in {shown}"
        if over[-1].reaches_on:
            return (
                f"Node's --env-file would not see {name}: {where} has nothing but blanks after"
                " its '=', so Node takes the next line as that value. Remove the blanks after"
                " the '=' (or put '' there) and try again."
            )
        return (
            f"Node's --env-file would not see {name}: {where} opens a quote or backtick that"
            " it does not close, so Node reads on into the new line. Close it and try again."
        )
    later = [a for a in seen if a.key == name and a.start >= at]
    line = _old_line(later[-1].start, new_text, old_text) if later else None
    if line:
        return (
            f"Node's --env-file would not see {name} as written: line {line} of {shown} sets"
            " it again when Node reads the file (inside a value the other readers see as"
            " several lines?). Fix or remove that line and try again."
        )
    return (
        f"Node's --env-file would not see {name} as written: another line of {shown} (an"
        " unclosed quote or backtick?) runs into it. Fix that line and try again."
    )


def _old_line(offset: int, new_text: str, old_text: str) -> int | None:
    """The line of `old_text` holding `new_text[offset]`, when that part was not rewritten."""
    size = min(len(new_text), len(old_text))
    head = 0
    while head < size and new_text[head] == old_text[head]:
        head += 1
    if offset < head:
        return old_text.count("\n", 0, offset) + 1
    tail = 0
    while tail < size - head and new_text[-1 - tail] == old_text[-1 - tail]:
        tail += 1
    if offset >= len(new_text) - tail:
        return old_text.count("\n", 0, offset - len(new_text) + len(old_text)) + 1
    return None


def _bash(texts: _Texts, written: Mapping[str, str], shown: str) -> str | None:
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
    script = texts.script
    # Every assignment bash makes to a written name, in the order it runs them: one pass over
    # the script for all the names.
    assigned: dict[str, list[tuple[shell.Command, shell.Assignment]]] = {}
    for command in script.commands:
        for a in command.assignments:
            if a.name in written:
                assigned.setdefault(a.name, []).append((command, a))
    for name, value in written.items():
        mine = texts.new.by_key.get(name, [])
        why = _bash_reason(name, value, script, mine, assigned.get(name, []), texts, written, shown)
        if why is not None:
            return why
    return None


def _bash_others(texts: _Texts, written: Mapping[str, str], shown: str) -> str | None:
    """Why the write would change what bash reads for a key it does not write, or None.

    python-dotenv reads `API_KEY=old;X=5` as one statement of API_KEY, and a line ending in a
    backslash as a statement of its own where bash joins the next line to it: rewriting or
    removing such a statement changes the other assignments bash runs. They must be the same,
    in the same order and joined the same way, before and after. A file bash runs something
    offprompt does not follow in is compared by nothing: if the write removes that, it stops.
    """
    if not _may_touch_others(texts, written):
        return None
    before = shell.analyze(texts.old_text)
    after = texts.script
    if before.problem is not None:
        if after.problem is not None:
            return None  # the same file bash cannot be followed in: `_bash` vouches for nothing
        line = texts.old_text.count("\n", 0, before.problem.offset) + 1
        return (
            f"line {line} of {shown} holds {before.problem.what}, which the write would rewrite "
            "away, so offprompt cannot tell what bash reads there for the other keys. Put each "
            "assignment on a line of its own, then try again."
        )
    old = _other_assignments(before, written)
    new = _other_assignments(after, written)
    if [a[:4] for a in old] == [a[:4] for a in new]:
        return None
    at = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a[:4] != b[:4]), None)
    if at is None:
        at = min(len(old), len(new))
    if at < len(old):
        name, line = old[at][0], texts.old_text.count("\n", 0, old[at][4]) + 1
    else:
        name = new[at][0]
        line = _old_line(new[at][4], texts.new_text, texts.old_text) or 1
    return (
        f"line {line} of {shown} also sets {name} for bash (or bash reads it joined to the line "
        f"after it), and rewriting {', '.join(written)} there would change what bash reads for "
        f"{name}. Put each assignment on a line of its own, then try again."
    )


# A statement bash reads as this one assignment and nothing else: a plain or single-quoted word,
# blanks, a comment. Rewriting or removing it changes no other key.
_PLAIN = re.compile(
    r"[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*="
    r"(?:[A-Za-z0-9_@%+=:,./-]*|'[^'\r\n]*')(?:[ \t]+#[^\r\n]*|[ \t]*)(?:\r?\n|\r)?"
)
_CONTINUED = re.compile(r"\\(?:\r?\n|\r)?\Z")


def _may_touch_others(texts: _Texts, written: Mapping[str, str]) -> bool:
    """Whether the write could change another key for bash: it rewrites or removes a statement
    that is not `_PLAIN`, or one (or the end it appends at) right after a line bash continues.
    Else the old text needs no reading of its own."""
    old = texts.old_text
    if _CONTINUED.search(old):
        return True
    for name in written:
        for e in texts.old.by_key.get(name, []):
            if not _PLAIN.fullmatch(old, e.start, e.end) or _CONTINUED.search(old, 0, e.start):
                return True
    return False


def _other_assignments(
    script: shell.Script, written: Mapping[str, str]
) -> list[tuple[str, bool, str | None, str, int]]:
    """(name, append, value, join, offset) of every assignment bash runs to a name not written,
    in order; `join` is how its command follows the one before ("", "&&" or "||")."""
    return [
        (a.name, a.append, a.value, c.after, a.offset)
        for c in script.commands
        for a in c.assignments
        if a.name not in written
    ]


def _bash_reason(
    name: str,
    value: str,
    script: shell.Script,
    mine: list[dotenv.Entry],
    assigned: list[tuple[shell.Command, shell.Assignment]],
    texts: _Texts,
    written: Mapping[str, str],
    shown: str,
) -> str | None:
    """Why bash would not end with `value` in `name` after sourcing the new text (`mine`: the
    statements python-dotenv reads for it there; `assigned`: the assignments bash makes to it,
    with their commands, in the order it runs them), naming a line of the old text; None when
    it certainly does. Sound, not complete: the whole file must be understood, our statement
    must run on its own, and nothing bash runs after it may assign the name."""

    def line(offset: int) -> int:
        return _bash_line(texts, written, offset)

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
    for command, a in assigned:
        if a.offset > key_at:
            return (
                f"bash would end with another value in {name}: line {line(a.offset)} of"
                f" {shown} assigns {name} again, and bash runs it after the line offprompt"
                " writes. Remove that assignment and try again."
            )
        if a.offset == key_at:
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


def _bash_line(texts: _Texts, written: Mapping[str, str], offset: int) -> int:
    """The line of the old text that `offset` of the new text came from. The upsert swaps the
    first statement of each written name for ours, drops its later ones and appends the rest, so
    the text between those statements is the same in both."""
    new_text, old_text = texts.new_text, texts.old_text
    olds = [e for e in texts.old.entries if e.key in written]
    news: dict[str, dotenv.Entry] = {}
    for e in texts.new.entries:
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
