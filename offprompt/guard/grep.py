"""grep's and rg's words, read once: the options that decide what a recursive search opens
(search.py), and the words the guard checks as names of files the program may open (commands.py).
"""

from __future__ import annotations

from offprompt.guard.bash import Word

__all__ = ["GrepArgs", "parse"]

# grep's short options that take an argument: the rest of their cluster is that argument.
_GREP_ARGUMENT = frozenset("efmABCdD")
# `--match` is ack's `--regexp`.
_LONG_ARGUMENT = (
    "--include",
    "--exclude",
    "--exclude-dir",
    "--glob",
    "--regexp",
    "--match",
    "--file",
)


class GrepArgs:
    """`recursive`, the `--include`/`--exclude`/`--exclude-dir` globs (rg's `-g` among them),
    rg's `hidden` and `no_ignore`, and `operands`: the words after the pattern. `dynamic` when an
    option is only known at run time (the search rules then decide nothing). `files`: every word
    that may name a file the program opens (pattern files first), the pattern left out only when
    it is certain which word it is."""

    __slots__ = (
        "dynamic",
        "excluded_dirs",
        "excludes",
        "files",
        "hidden",
        "includes",
        "no_ignore",
        "operands",
        "recursive",
    )

    def __init__(self) -> None:
        self.recursive = self.hidden = self.no_ignore = self.dynamic = False
        self.includes: list[str] = []
        self.excludes: list[str] = []
        self.excluded_dirs: list[str] = []
        self.operands: list[Word] = []
        self.files: list[Word] = []

    def glob(self, given: str) -> None:
        """rg's `-g GLOB` lets in what it matches; `-g '!GLOB'` leaves out files and folders."""
        if given.startswith("!"):
            self.excludes.append(given[1:])
            self.excluded_dirs.append(given[1:])
        else:
            self.includes.append(given)


def parse(args: list[Word]) -> GrepArgs:
    """The words after grep's (egrep's, rg's, ag's…) program name, read as grep reads them."""
    out = GrepArgs()
    operands: list[Word] = []  # the pattern first, unless `-e` or `-f` gave one
    pattern_files: list[Word] = []
    # The other words that may name a file, in order: option arguments and operands. An option
    # argument before the first operand (`-m 5 KEY .env`, or an option of another program that
    # takes none) leaves unsure which word is the pattern: then none is left out.
    others: list[Word] = []
    first_operand: Word | None = None
    unsure = False
    pattern_given = False

    def argument(word: Word | None) -> None:
        nonlocal unsure
        if word is not None:
            others.append(word)
            unsure = unsure or first_operand is None

    i = 0
    while i < len(args):
        text = args[i].text
        nxt = args[i + 1] if i + 1 < len(args) else None
        value = nxt.text if nxt is not None else ""
        long, _, attached = text.partition("=")
        taken = 0 if attached or "=" in text else 1
        if text == "--":
            for word in args[i + 1 :]:
                operands.append(word)
                others.append(word)
                first_operand = first_operand or word
            break
        if long in _LONG_ARGUMENT:
            given = attached if "=" in text else value
            if long == "--include":
                out.includes.append(given)
            elif long == "--exclude":
                out.excludes.append(given)
            elif long == "--exclude-dir":
                out.excluded_dirs.append(given)
            elif long == "--glob":
                out.glob(given)
            else:
                pattern_given = True
            if long == "--file":
                file = Word(attached) if "=" in text else nxt
                if file is not None:
                    pattern_files.append(file)
            elif long not in ("--regexp", "--match") and taken:
                argument(nxt)
            i += 1 + taken
            continue
        if text in ("-r", "-R", "--recursive", "--dereference-recursive"):
            out.recursive = True
        elif text in ("--hidden", "-."):
            out.hidden = True
        elif text in ("--no-ignore", "-u"):
            out.no_ignore = True
        elif text in ("-uu", "-uuu"):
            out.hidden = out.no_ignore = True
        elif text in ("-g", "-e", "-f"):
            if text == "-g":
                out.glob(value)
                argument(nxt)
            else:
                pattern_given = True
                if text == "-f" and nxt is not None:
                    pattern_files.append(nxt)
            i += 2
            continue
        elif text.startswith("-") and not text.startswith("--") and len(text) > 1:
            for j, c in enumerate(text[1:]):
                if c in "rR":
                    out.recursive = True
                if c in _GREP_ARGUMENT:
                    if c in "ef":
                        pattern_given = True
                    if c == "d" and (text[j + 2 :] or value) == "recurse":
                        out.recursive = True
                    rest = text[j + 2 :]
                    if rest:
                        if c == "f":
                            pattern_files.append(Word(rest))
                    else:
                        i += 1  # its argument is the next word
                        if c == "f" and nxt is not None:
                            pattern_files.append(nxt)
                        else:
                            argument(nxt)
                    break
        elif text == "-":
            argument(args[i])  # standard input, or a pattern: which is unsure
        elif not text.startswith("-"):
            operands.append(args[i])
            others.append(args[i])
            first_operand = first_operand or args[i]
        i += 1
    out.dynamic = any(a.dynamic for a in args if a.text.startswith("-"))
    out.operands = operands if pattern_given else operands[1:]
    # `-e`/`-f` taken above as another option's argument (`-m -f FILE`) may still be one.
    unsure = unsure or any(_gives_pattern(a.text) for a in args[:i])
    if not pattern_given and not unsure and first_operand is not None:
        others = [w for w in others if w is not first_operand]
    out.files = pattern_files + others
    return out


def _gives_pattern(text: str) -> bool:
    """`text` reads as an option giving the pattern (`-e`, `-f`, `--regexp=…`, `-eKEY`)."""
    if text in ("-e", "-f", "--regexp", "--match", "--file"):
        return True
    if text.startswith(("--regexp=", "--match=", "--file=")):
        return True
    return text.startswith(("-e", "-f")) and not text.startswith("--")
