"""Does a name, as an agent wrote it, name a protected file? One event's context (where relative
names start, what is protected) and the naming rules: relative or absolute, `~`, a glob that
matches, a link to a written file, a name inside code or an option (`--env-file=.env`).
"""

from __future__ import annotations

import os

from offprompt import rx
from offprompt.guard import expand
from offprompt.guard.protected import SAMPLES, Protected, glob_hits, in_staging, is_dotenv

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

__all__ = ["BUDGET", "GLOB_LOOKS", "UNCHECKED", "Check", "expand_glob"]

# Splits code and option words into the names inside them: `open('.env')`, `--env-file=.env`.
_FRAGMENT_SPLIT = rx.compile(r"[@\s'\"`(){},;=<>|&:+\\\0]+")

# DESIGN §14: the guard's time is bounded for any input. One event may ask this many file system
# looks (a folder a name is tried in: its realpath, a glob's expansion) and no more; past them,
# every name still to check that could be a file is blocked (it may be a link to a protected
# file), so a long command fails closed, never open. Everyday calls use a handful.
BUDGET = 16_384
# The name a blocked call is said to expose when the guard could not check all of it.
UNCHECKED = "a file the guard could not check (the command is too long or too deeply nested)"
# What expanding a glob costs, in looks, per folder part with a wildcard: a listing of a folder
# for `*.md`, of every folder in a folder for `*/*.md`... (`*/*/*/x` is blocked unexpanded).
GLOB_LOOKS = (64, 1024, BUDGET)
# A name longer than this cannot be opened (the kernel's PATH_MAX), so no look is spent on it.
_PATH_MAX = 4096


class Check:
    """One event's context: where relative names start, and what is protected; `dirs` holds
    the cwd and the folders a `cd` in the command names."""

    __slots__ = (
        "budget", "cwd", "dirs", "globs", "home", "inodes", "left", "listed", "protected", "seen",
        "steps", "variables",
    )  # fmt: skip

    def __init__(
        self, cwd: str, home: str, protected: Protected, dirs: list[str], budget: int = BUDGET
    ) -> None:
        self.cwd = cwd
        self.home = home
        self.protected = protected
        self.dirs = dirs
        self.budget = budget
        self.seen: dict[tuple[str, bool, bool, int], str | None] = {}
        self.steps = [0]  # the bash reader's steps over every scan of this event
        self.variables: dict[str, list[str]] = {}  # what those scans saw assigned (bash.scan)
        # The glob options the command may set (`shopt -s dotglob`, `GLOBIGNORE=`): its globs
        # are matched as bash would with them on (commands.py finds them).
        self.globs: frozenset[str] = frozenset()
        # A protected file that a listing in the command (`ls -A`, `find .`) may print into a
        # substitution or a pipe, where a word made only of that output may name it.
        self.listed: str | None = None
        # Files left to the mask (real paths; decide.py): a masked project's sandboxed command
        # reads stand-ins there, so a name that leads only to them is not a hit.
        self.left: frozenset[str] = frozenset()
        # The device and inode of each written file, looked up once a name with a second hard
        # link turns up: such a name is the written file under another name.
        self.inodes: frozenset[tuple[int, int]] | None = None

    def spend(self, looks: int) -> bool:
        """Take `looks` file system looks from the event's budget; False when it is spent."""
        self.budget -= looks
        return self.budget >= 0

    def path(self, text: str, glob: bool = False, dynamic: bool = False) -> str | None:
        """The protected file `text` names (as the agent wrote it, for the message), or None."""
        key = (text, glob, dynamic, len(self.dirs) + 1000 * len(self.globs))
        if key in self.seen:
            return self.seen[key]  # a name repeated costs no second look
        hit = self.seen[key] = self._path(text, glob, dynamic)
        return hit

    def _path(self, text: str, glob: bool, dynamic: bool) -> str | None:
        text = text.strip()
        if self.left and not glob and not dynamic and self.masked(text):
            return None
        if text.startswith("file://"):
            text = text[len("file://") :]
        if not text or text.endswith("/") or "\n" in text or "://" in text:
            return None  # a folder, prose, or a remote URL: not a local file's name
        base = text.rsplit("/", 1)[-1]
        if is_dotenv(base):
            return base
        if len(text) > _PATH_MAX:
            return self._unopenable(text, base, glob)
        # A realpath's cost grows with the name's parts (an lstat each): `a/a/…/a` costs more.
        if not self.spend(len(self.dirs) * (1 + text.count("/"))):
            return UNCHECKED  # the budget is spent: this name is not looked at, so it blocks
        if not dynamic and self._staged(text):
            return text
        if glob:
            hit = glob_hits(base, self.globs)
            if hit is not None:
                return hit
        if glob and not dynamic:
            cost = _glob_looks(text)
            for folder in self.dirs:
                if cost is None or not self.spend(cost):
                    return UNCHECKED  # too costly a walk to make: blocked, not let through
                pattern = os.path.join(folder, os.path.expanduser(text))
                for found in _expand(pattern, self.globs):
                    if not self.spend(1):
                        return UNCHECKED
                    name = os.path.basename(found)
                    if is_dotenv(name) or self._written(found) or _staged_file(found):
                        return text
        if not self.protected.written:
            return None
        if dynamic or "\0" in text or "$" in text:
            return base if base in self.protected.written_names else None
        if glob:
            return text if self._written_glob(text) else None
        for folder in self.dirs:
            if self._written(os.path.join(folder, os.path.expanduser(text))):
                return text
        return None

    def masked(self, text: str) -> bool:
        """Every file `text` may lead to, from the cwd or a folder the command entered, is one
        left to the mask (and one at least exists)."""
        found = []
        for folder in self.dirs:
            path = os.path.join(folder, os.path.expanduser(text))
            if os.path.lexists(path):
                found.append(os.path.realpath(path))
        return bool(found) and all(f in self.left for f in found)

    def _unopenable(self, text: str, base: str, glob: bool) -> str | None:
        """A name too long to open is checked by what it says alone: blocked when its last part
        is a written file's name, it names a staging folder, or it is a glob (`[.][e]…` may
        match any name)."""
        if glob or in_staging(text) or base in self.protected.written_names:
            return text
        return None

    def _staged(self, text: str) -> bool:
        """`text` names (the inside of) a staging folder, from the cwd or a folder `cd` named,
        as written or through a link (`ln -s .offprompt-… l; cat l/.env.new`), or is a link to
        a dotenv file whatever its own name (`docker.env` → `.env`)."""
        if in_staging(text):
            return True
        if "\0" in text:
            return False  # a substitution's output: no file has that name (fragments splits it)
        for folder in self.dirs:
            joined = os.path.join(folder, os.path.expanduser(text))
            if in_staging(os.path.normpath(joined)):
                return True
            try:
                real = os.path.realpath(joined)
                if in_staging(real) or (real != joined and is_dotenv(os.path.basename(real))):
                    return True
            except (OSError, ValueError):
                return True  # a name the file system cannot resolve: closed, not open
        return False

    def _written(self, path: str) -> bool:
        written = self.protected.written
        if os.path.normpath(path) in written:
            return True
        try:
            if os.path.realpath(path) in written:
                return True
            st = os.stat(path)
        except (OSError, ValueError):
            return False
        # A hard link (`ln .env build/cache.txt`, made where no mask covered `.env` yet) is the
        # same file under a name no rule above knows, and outside the mask's path.
        return st.st_nlink > 1 and (st.st_dev, st.st_ino) in self.linked()

    def linked(self) -> frozenset[tuple[int, int]]:
        """The device and inode of each written file that has another name (a second hard
        link); empty, as it nearly always is, when none has."""
        if self.inodes is None:
            found = set()
            for path in self.protected.written:
                try:
                    st = os.stat(path)
                except (OSError, ValueError):
                    continue
                if st.st_nlink > 1:
                    found.add((st.st_dev, st.st_ino))
            self.inodes = frozenset(found)
        return self.inodes

    def _written_glob(self, pattern: str) -> bool:
        for folder in self.dirs:
            full = os.path.normpath(os.path.join(folder, os.path.expanduser(pattern)))
            # Part by part, as bash matches a glob: `*` never crosses a `/` (but `**` does,
            # with globstar), so `cat *` is not `cat config/service.json`.
            deep = "**" in full and "globstar" in self.globs
            parts = full.count(os.sep)
            for p in self.protected.written:
                if (deep or p.count(os.sep) == parts) and rx.fnmatchcase(p, full):
                    return True
        return False

    def could_be(self, pattern: str) -> str | None:
        """The protected name a brace-free pattern with parts only known at run time could
        become, when the rest of its last part is some text (`$UNSET.env`, `${f}nv`: the
        unknown may be empty or anything), or None. A word that is all unknown names what a
        listing in the command printed (`cat $(ls -A)`); otherwise it says nothing of its name
        and is let through (THREAT_MODEL: a name hidden from the command)."""
        last, has_text = expand.as_fnmatch(pattern)
        if not has_text:
            # All unknown: it names what a listing in the command printed, if one did.
            return self.listed if last.strip("*") == "" else None
        names = (*SAMPLES, *sorted(self.protected.written_names))
        if "nocaseglob" in self.globs:
            last = last.lower()
        for name in names:
            candidate = name.lower() if "nocaseglob" in self.globs else name
            if rx.fnmatchcase(candidate, last):
                return name
        return None

    def inside(self, values: list[str]) -> str | None:
        """A protected name inside one of `values` (patterns), in any case: what cutting or
        changing the value (`${f#x}`, `${f,,}`) may leave."""
        names = (*SAMPLES, *sorted(self.protected.written_names))
        for value in values:
            text = expand.literal(value)[0].lower()
            for name in names:
                if name.lower() in text:
                    return name
        return None

    def fragments(self, text: str) -> str | None:
        """A protected file named anywhere inside `text` (code, `--opt=FILE`, a patch)."""
        hit = self.path(text)
        if hit is not None:
            return hit
        for part in dict.fromkeys(_FRAGMENT_SPLIT.split(text)):  # each part once
            if part and part != text:
                hit = self.path(part, glob=any(c in part for c in "*?["))
                if hit is not None:
                    return hit
        return None


def _glob_looks(pattern: str) -> int | None:
    """What expanding `pattern` costs (GLOB_LOOKS), or None when it is too costly to try."""
    wild = sum(1 for part in pattern.split("/")[:-1] if any(c in part for c in "*?["))
    return GLOB_LOOKS[wild] if wild < len(GLOB_LOOKS) else None


def _expand(pattern: str, options: frozenset[str] = frozenset()) -> Iterator[str]:
    """What bash makes of the glob `pattern` with `options` on: dotglob lets `*` match a
    leading dot, globstar makes `**` recursive, nocaseglob ignores case."""
    if "nocaseglob" in options:
        pattern = rx.sub("[A-Za-z]", lambda m: f"[{m.group().lower()}{m.group().upper()}]", pattern)
    try:
        yield from rx.iglob(
            pattern, recursive="globstar" in options, include_hidden="dotglob" in options
        )
    except (OSError, ValueError, RecursionError):
        return


def expand_glob(pattern: str, options: frozenset[str]) -> list[str]:
    """The first GLOB_LOOKS[0] names the glob `pattern` matches, as bash would with `options`."""
    import itertools

    return list(itertools.islice(_expand(pattern, options), GLOB_LOOKS[0]))


def _staged_file(path: str) -> bool:
    """`path` (a file a glob found) is inside a staging folder, as named or where it leads."""
    return in_staging(path) or in_staging(os.path.realpath(path))
