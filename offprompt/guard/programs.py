"""What some programs do with their words, beyond naming files (DESIGN §14): archives, copies and
`find -exec` that take in every file under a folder they are given (a protected one among them),
and the words that are text no program opens (a commit message, a PR title, jq's filter).
"""

from __future__ import annotations

import itertools
import os

from offprompt import rx
from offprompt.guard import disk
from offprompt.guard.bash import Word
from offprompt.guard.check import UNCHECKED, Check
from offprompt.guard.protected import is_dotenv

__all__ = [
    "carried",
    "directories_recurse",
    "env_split_string",
    "git_runs_code",
    "git_subcommand",
    "listing",
    "names_in",
    "recursive",
    "texts_left_out",
    "xargs_arg_file",
]

# A program with one of these options (or a short cluster holding the letter) copies folders
# whole: cp's `-r`/`-R`/`-a`, rsync's and scp's.
_COPIERS = {
    "cp": ("rRa", ("--recursive", "--archive")),
    "rsync": ("ra", ("--recursive", "--archive")),
    "scp": ("r", ()),
    "zip": ("rR", ("--recurse-paths",)),
}
_TAR_CREATE = ("--create", "--append", "--update", "--concatenate")
# find's actions that run a program on what it finds.
_FIND_RUNS = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
# Programs find may run on a file that only print its name or facts about it.
_FIND_NAMING = frozenset({"echo", "ls", "stat", "basename", "dirname", "realpath", "test", "["})
_FIND_NAMES = ("-name", "-iname")
# find's tests of the whole path it prints (`./src/main.py`), its `*` crossing `/` as fnmatch's.
_FIND_PATHS = ("-path", "-wholename", "-ipath", "-iwholename")
_JQ_LIKE = frozenset({"jq", "yq", "gojq", "jaq"})
# jq's options that take values that are not files: (option, how many words follow).
_JQ_VALUES = {"--arg": 2, "--argjson": 2, "--indent": 1, "-L": 1, "--library-path": 1}
_JQ_FILES = {"--slurpfile": 2, "--rawfile": 2}
# The git and gh subcommands whose message options take text, and those options.
_GIT_MESSAGE = frozenset({"commit", "tag", "notes", "stash", "merge", "revert"})
_GIT_MESSAGE_OPTIONS = ("-m", "--message")
# git log's searches of messages and authors: `git log --grep=.env` opens no file.
_GIT_LOG = frozenset({"log", "show", "shortlog", "rev-list", "whatchanged"})
_GIT_LOG_OPTIONS = ("--grep", "--author", "--committer")
_GH_TEXT_OPTIONS = ("-t", "--title", "-b", "--body", "-n", "--notes", "--subject")


def recursive(check: Check, program: str, args: list[Word]) -> str | None:
    """A protected file under a folder that `tar c`, `zip -r`, `cp -r`, `rsync -a`, `scp -r`
    or `find … -exec` would take in, or None."""
    texts = [a.text for a in args]
    excludes: list[str] = []
    if program in _COPIERS:
        letters, longs = _COPIERS[program]
        if not any(_flag(t, letters, longs) for t in texts):
            return None
        sources = _operands(args, excludes, zip_style=program == "zip")
        sources = sources[1:] if program == "zip" else sources[:-1]  # the archive; the target
        return _takes_in(check, sources, excludes, zip_style=program == "zip")
    elif program in ("tar", "bsdtar", "gtar"):
        first = texts[0] if texts else ""
        old_style = first[:1] != "-" and any(c in first for c in "cru")
        if not old_style and not any(_flag(t, "cruA", _TAR_CREATE) for t in texts):
            return None
        sources = _operands(args[1:] if old_style else args, excludes)
    elif program in ("7z", "7za", "7zz") and texts[:1] == ["a"]:
        sources = _operands(args[1:], excludes)[1:]
    elif program == "find":
        return _find(check, args)
    elif program == "diff" and any(_flag(t, "r", ("--recursive",)) for t in texts):
        sources = _operands(args, excludes)  # both sides are read
    elif program == "git" and "--no-index" in texts and _sub(texts) == "diff":
        sources = _operands(args, excludes)[1:]  # a folder is compared file by file
    elif program == "git" and _sub(texts) == "stash":
        return _stash(check, args)
    else:
        return None
    return _takes_in(check, sources, excludes)


def _sub(texts: list[str]) -> str | None:
    """git's subcommand among `texts` (its words after `git`)."""
    i = 0
    while i < len(texts):
        if texts[i] in ("-C", "-c", "--git-dir", "--work-tree"):
            i += 2
        elif texts[i].startswith("-"):
            i += 1
        else:
            return texts[i]
    return None


def _stash(check: Check, args: list[Word]) -> str | None:
    """`git stash -a|-u` (`push`, `save`) copies untracked files into the stash, and `git stash
    show -u` prints them: a protected file in the work tree is taken in (`-u`: one git does not
    ignore)."""
    texts = [a.text for a in args]
    after = texts[texts.index("stash") + 1 :]
    action = next((t for t in after if not t.startswith("-")), "push")
    if action not in ("push", "save", "show", "create", "store"):
        return None
    every = any(_flag(t, "a", ("--all",)) for t in after)
    untracked = ("--include-untracked", "--only-untracked")
    if not every and not any(_flag(t, "u", untracked) for t in after):
        return None
    from offprompt.guard import search  # a search's module, for the calls that run one

    roots = [os.path.normpath(check.dirs[-1])]
    found = [f for root in roots for f in search.under(check, root)]
    if found and not every and action != "show":
        found = disk.not_ignored(roots[0], found)
    return os.path.relpath(found[0], check.cwd) if found else None


def _flag(text: str, letters: str, longs: tuple[str, ...]) -> bool:
    if text.startswith("--"):
        return text.split("=", 1)[0] in longs
    return text.startswith("-") and any(c in letters for c in text[1:])


def _operands(args: list[Word], excludes: list[str], zip_style: bool = False) -> list[Word]:
    """The words that are not options, and the `--exclude` patterns (zip's `-x PATTERN…`) into
    `excludes`."""
    out: list[Word] = []
    skip = listing_excludes = False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if listing_excludes and not a.text.startswith("-"):
            excludes.append(a.text)
            continue
        listing_excludes = False
        if a.text.startswith("--exclude="):
            excludes.append(a.text.partition("=")[2])
        elif a.text == "--exclude" and i + 1 < len(args) and not zip_style:
            excludes.append(args[i + 1].text)
            skip = True
        elif zip_style and a.text in ("-x", "--exclude"):
            listing_excludes = True
        elif not a.text.startswith("-"):
            out.append(a)
    return out


def _takes_in(
    check: Check,
    sources: list[Word],
    excludes: list[str],
    names: list[str] | None = None,
    zip_style: bool = False,
) -> str | None:
    """A protected file under one of the folders `sources` name, that no `excludes` pattern
    leaves out (matched as tar and rsync do, against any part of its path below the folder, or
    as zip does, against its whole path) and, given `names`, whose name matches one of them."""
    from offprompt.guard import search  # a search's module, for the calls that run one

    roots = search.folders(check, sources)
    if roots is None:
        return UNCHECKED
    for folder in roots:
        if not os.path.isdir(folder):
            continue
        if not check.spend(search.SEARCH_LOOKS):
            return UNCHECKED
        for found in search.under(check, folder):
            base = os.path.basename(found)
            if names is not None and not any(
                rx.fnmatchcase(b, n) for n in names for b in (base, base.lower())
            ):
                continue
            if not _excluded(os.path.relpath(found, folder), excludes, zip_style):
                return os.path.relpath(found, check.cwd)
    return None


def _excluded(rel: str, excludes: list[str], zip_style: bool) -> bool:
    if zip_style:
        return any(rx.fnmatchcase(rel, g.removeprefix("./")) for g in excludes)
    parts = rel.split(os.sep)
    tails = ["/".join(parts[i:]) for i in range(len(parts))]
    return any(rx.fnmatchcase(p, g) for g in excludes for p in (*parts, *tails))


def listing(check: Check, program: str, args: list[Word]) -> str | None:
    """A protected file whose name this command prints among others, when its output goes on
    (into a pipe or a substitution): `ls -a`/`-A`, `find` (its `-name` tests honoured), `git
    ls-files -o`. None for any other command."""
    texts = [a.text for a in args]
    if program == "ls":
        if not any(_flag(t, "aA", ("--all", "--almost-all")) for t in texts):
            return None
        return _takes_in(check, _operands(args, []) or [Word(".")], [])
    if program == "find":
        return _found(check, args)
    if program == "git" and texts[:1] == ["ls-files"]:
        others = any(_flag(t, "o", ("--others",)) for t in texts)
        if others and "--exclude-standard" not in texts:
            return _takes_in(check, [Word(".")], [])
    return None


# How much of a file is read to see whether it lists a protected name, at what cost in looks.
_NAMES_BYTES = 16_384
_NAMES_LOOKS = 64
_TOKENS = r"[\s'\"`,;=()\[\]{}<>|&]+"


def carried(
    check: Check, words: list[Word], inputs: list[Word], said: dict[str, str]
) -> str | None:
    """A protected name that a command whose output goes on (`cat list | xargs cat`,
    `$(cat list)`) may carry from a file it reads: one of `words` (its arguments) or `inputs`
    (its `<` redirections) that holds the name, as the command wrote it earlier (`said`) or
    as the file holds it now."""
    for word in [*inputs, *(w for w in words if not w.text.startswith("-"))]:
        hit = names_in(check, word.text, said)
        if hit is not None:
            return hit
    return None


def names_in(check: Check, name: str, said: dict[str, str]) -> str | None:
    """A protected name the file `name` lists (a word of its first _NAMES_BYTES), or that the
    command wrote into it (`said`: path to name)."""
    path = os.path.normpath(os.path.join(check.dirs[-1], os.path.expanduser(name)))
    if path in said:
        return said[path]
    if "\0" in name or not os.path.isfile(path):
        return None
    if not check.spend(_NAMES_LOOKS):
        return UNCHECKED
    try:
        with open(path, "rb") as f:
            text = f.read(_NAMES_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    for token in rx.split(_TOKENS, text):
        last = token.rsplit("/", 1)[-1]
        if last and (is_dotenv(last) or last in check.protected.written_names):
            return last
    return None


def _find(check: Check, args: list[Word]) -> str | None:
    """`find DIR … -exec PROGRAM {} …`: the files it finds are opened by PROGRAM."""
    texts = [a.text for a in args]
    runs = [i for i, t in enumerate(texts) if t in _FIND_RUNS]
    if not runs or all(i + 1 < len(texts) and texts[i + 1] in _FIND_NAMING for i in runs):
        return None
    return _found(check, args)


def _found(check: Check, args: list[Word]) -> str | None:
    """A protected file `find` would find. Its `-name` tests are honoured only in an
    expression with no `-o`, `!` or `-not`."""
    texts = [a.text for a in args]
    starts = []
    for a in args:
        if a.text.startswith(("-", "(", "!")):
            break
        starts.append(a)
    names: list[str] | None = None
    if not any(t in ("-o", "-or", "!", "-not", ",") for t in texts):
        tests = list(itertools.pairwise(texts))
        if ("-type", "d") in tests:
            return None  # folders only: no file is opened
        # -iname's case is dropped on both sides: `*.ENV` finds `.env`.
        names = [n.lower() if t == "-iname" else n for t, n in tests if t in _FIND_NAMES] or None
        if any(t == "-iname" for t, _ in tests) and names is not None:
            names = [*names, *(n.lower() for n in names)]
        paths = [n.lower() if t.startswith("-i") else n for t, n in tests if t in _FIND_PATHS]
        if paths and not any(w.dynamic or w.glob or w.braced for w in starts):
            return _found_paths(check, starts or [Word(".")], paths, names)
    return _takes_in(check, starts or [Word(".")], [], names)


def _found_paths(
    check: Check, starts: list[Word], paths: list[str], names: list[str] | None
) -> str | None:
    """A protected file under `starts` (folders as written) whose path as find prints it
    (the start, then the path below it) matches every `-path` pattern (cased or not: both
    sides lowered), and its name one of `names` when given."""
    from offprompt.guard import search  # a search's module, for the calls that run one

    for start in starts:
        root = os.path.normpath(os.path.join(check.dirs[-1], os.path.expanduser(start.text)))
        if not os.path.isdir(root):
            continue
        if not check.spend(search.SEARCH_LOOKS):
            return UNCHECKED
        for found in search.under(check, root):
            shown = os.path.join(start.text, os.path.relpath(found, root))
            base = os.path.basename(found)
            if names is not None and not any(
                rx.fnmatchcase(b, n) for n in names for b in (base, base.lower())
            ):
                continue
            # Lowered too, for `-ipath` (a cased test that matches only so is taken: closed).
            if all(any(rx.fnmatchcase(x, p) for x in (shown, shown.lower())) for p in paths):
                return os.path.relpath(found, check.cwd)
    return None


def texts_left_out(program: str, args: list[Word]) -> list[Word]:
    """`args` without the words that are text no program opens: git's commit and tag messages
    (`-m`), gh's titles and bodies, jq's filter."""
    if program == "git":
        sub = next((i for i, a in enumerate(args) if not a.text.startswith("-")), None)
        if sub is not None and args[sub].text in _GIT_MESSAGE:
            return args[: sub + 1] + _without(args[sub + 1 :], _GIT_MESSAGE_OPTIONS, "-m")
        if sub is not None and args[sub].text in _GIT_LOG:
            return args[: sub + 1] + _without(args[sub + 1 :], _GIT_LOG_OPTIONS, "")
    elif program == "gh":
        return _without(args, _GH_TEXT_OPTIONS, "")
    elif program in _JQ_LIKE:
        return _jq_files(args)
    elif program in ("tar", "bsdtar", "gtar", "rsync", "zip"):
        # `--exclude=.env` (zip's `-x .env`) keeps the file out; recursive() honours it.
        kept = _operands(args, [], zip_style=program == "zip")
        return [a for a in args if a in kept or _option(a.text)]
    return args


def _option(text: str) -> bool:
    """An option word other than an exclusion (which names what is kept out, not read)."""
    return text.startswith("-") and not text.startswith("--exclude") and text != "-x"


def _without(args: list[Word], options: tuple[str, ...], short: str) -> list[Word]:
    """`args` without each option in `options` and its value (`-m MSG`, `--title=T`, `-mMSG`)."""
    out: list[Word] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        name = a.text.split("=", 1)[0]
        if a.text in options:
            skip = True
        elif name in options and "=" in a.text and name.startswith("--"):
            continue
        elif short and a.text.startswith(short) and len(a.text) > len(short):
            continue
        elif short and a.text[:1] == "-" and a.text[1:2] != "-" and a.text.endswith(short[1:]):
            out.append(a)  # `-am MSG`: the cluster's last option takes the next word
            skip = True
        else:
            out.append(a)
    return out


def _jq_files(args: list[Word]) -> list[Word]:
    """jq's words that may name a file it opens: its inputs, `--rawfile`'s and `--slurpfile`'s
    files, `-f`'s program; the filter (the first operand, when no `-f`) left out."""
    out: list[Word] = []
    from_file = any(a.text in ("-f", "--from-file") for a in args)
    filter_seen = from_file
    i = 0
    while i < len(args):
        text = args[i].text
        if text in _JQ_VALUES:
            i += 1 + _JQ_VALUES[text]
            continue
        if text in _JQ_FILES:
            out.extend(args[i + 2 : i + 3])
            i += 3
            continue
        if text in ("--args", "--jsonargs"):
            out.extend(args[i + 1 :])  # positional values, checked as names to be safe
            break
        if not text.startswith("-") and not filter_seen:
            filter_seen = True
        else:
            out.append(args[i])
        i += 1
    return out


def xargs_arg_file(words: list[Word]) -> str | None:
    """The file `xargs -a FILE` (`--arg-file`) reads its names from, or None."""
    for i, w in enumerate(words[:4]):
        if _base(w.text) != "xargs":
            continue
        for j in range(i + 1, len(words)):
            text = words[j].text
            if text in ("-a", "--arg-file") and j + 1 < len(words):
                return words[j + 1].text
            if text.startswith("--arg-file="):
                return text.partition("=")[2]
            if text.startswith("-a") and len(text) > 2:
                return text[2:]
            if not text.startswith("-"):
                break
    return None


def git_runs_code(words: list[Word]) -> bool:
    """git is given configuration or an environment that may run a command of its own
    (`-c core.fsmonitor=…`, `--config-env`, `GIT_*=…` before it): not a naming-only call."""
    for w in words:
        if w.text in ("-c", "--config-env") or w.text.startswith(("-c", "--config-env=")):
            return True
        if w.text.startswith("GIT_") and "=" in w.text:
            return True
    return False


def env_split_string(words: list[Word]) -> str | None:
    """`env -S 'cat .env'` (`--split-string`): the string env splits and runs, with the words
    after it."""
    for i, w in enumerate(words):
        if _base(w.text) != "env":
            continue
        for j in range(i + 1, len(words)):
            text = words[j].text
            rest = " ".join(x.text for x in words[j + 1 :])
            if text in ("-S", "--split-string"):
                return rest
            if text.startswith("--split-string="):
                return text.partition("=")[2] + " " + rest
            if text.startswith("-S"):
                return text[2:] + " " + rest
            if not text.startswith("-"):
                break
        break
    return None


def directories_recurse(args: list[Word]) -> list[Word]:
    """grep's `--directories=recurse` (and `--directories recurse`) as the `-r` it is."""
    out: list[Word] = []
    for i, w in enumerate(args):
        nxt = args[i + 1].text if i + 1 < len(args) else ""
        if w.text == "--directories=recurse" or (w.text == "--directories" and nxt == "recurse"):
            out.append(Word("-r"))
        elif w.text == "recurse" and i and args[i - 1].text == "--directories":
            continue
        else:
            out.append(w)
    return out


def git_subcommand(args: list[Word]) -> str | None:
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("-C", "-c", "--git-dir", "--work-tree"):
            i += 2
        elif text.startswith("-"):
            i += 1
        else:
            return text
    return None


def _base(program: str) -> str:
    return program.rsplit("/", 1)[-1]
