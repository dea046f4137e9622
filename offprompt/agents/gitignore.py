"""Keeping a personal file init writes inside the project (Claude Code's settings.local.json) out of
git: a line in the repository's own `.git/info/exclude`, never committed, that remove takes out.

Claude Code itself, when it writes that file, adds `**/.claude/settings.local.json` to the
person's global gitignore; offprompt touches only this repository, and only when git would add
the file otherwise.
"""

from __future__ import annotations

import locale
import os
from pathlib import Path

from offprompt.agents import files
from offprompt.disk import git as runner
from offprompt.errors import ConfigError

__all__ = ["MARK", "ensure_ignored", "exclude_line", "release", "tracked"]

# The comment above our line: what remove looks for, so a line the person wrote stays theirs.
MARK = "# offprompt init: personal settings git must not add (offprompt remove takes this out)"
# The same, after a line break init added because the file did not end with one.
_MARK_AFTER_BREAK = MARK.replace("(offprompt remove", "(and the line break above; offprompt remove")
_GIT_TIMEOUT_S = 10


def exclude_line(rel: str) -> str:
    """The info/exclude pattern naming exactly `rel` (a `/`-path from the top of the tree)."""
    escaped = "".join("\\" + c if c in "\\*?[" else c for c in rel)
    return "/" + escaped


def _git(top: Path, *args: str) -> runner.Answer | None:
    try:
        # keep_locale: git's own words (stderr) reach the person in a ConfigError.
        return runner.run(("-C", str(top), *args), timeout=_GIT_TIMEOUT_S, keep_locale=True)
    except runner.GitError:
        return None


def _text(data: bytes) -> str:
    """git's output as text, as subprocess's text mode reads it: the locale's encoding, and
    universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _in_a_repository(folder: Path) -> bool:
    return any((p / ".git").exists() for p in (folder, *folder.parents))


def _not_a_repository(project: Path) -> bool:
    """Whether git itself says `project` is in no repository, whatever `.git` folder lies above
    it (an empty one is the mount point a host's sandbox leaves in /tmp). Asked in git's own C
    locale, so its words can be read."""
    try:
        done = runner.run(("-C", str(project), "rev-parse", "--git-dir"), timeout=_GIT_TIMEOUT_S)
    except runner.GitError:
        return False
    return done.returncode != 0 and b"not a git repository" in done.stderr


def _where(project: Path, file: Path, shown: str) -> tuple[Path, str, Path] | None:
    """The top of the working tree, `file` relative to it, and its info/exclude; None when the
    project is in no git repository."""
    found = _git(project, "rev-parse", "--show-toplevel", "--git-path", "info/exclude")
    if found is None:
        if not _in_a_repository(project):
            return None
        raise ConfigError(
            f"git could not be run here, so offprompt cannot make sure git never adds {shown}"
            " (it names this machine's paths); install git, or use --shared or --global."
            " Nothing was changed."
        )
    if found.returncode != 0:
        if _in_a_repository(project) and not _not_a_repository(project):
            raise ConfigError(
                f"git could not read this repository ({_text(found.stderr).strip()}), so offprompt"
                f" cannot make sure git never adds {shown}. Nothing was changed."
            )
        return None
    top_text, exclude_text = _text(found.stdout).splitlines()[:2]
    top = Path(top_text)
    exclude = Path(exclude_text)
    if not exclude.is_absolute():
        exclude = project / exclude
    rel = Path(os.path.realpath(file)).relative_to(Path(os.path.realpath(top)))
    return top, rel.as_posix(), exclude


def _ignored(top: Path, rel: str) -> bool:
    done = _git(top, "check-ignore", "-q", "--no-index", "--", rel)
    return done is not None and done.returncode == 0


def _tracked(top: Path, rel: str) -> bool:
    done = _git(top, "ls-files", "--error-unmatch", "--", rel)
    return done is not None and done.returncode == 0


def tracked(project: Path, paths: list[Path]) -> list[Path]:
    """Those of `paths` (files inside `project`) that git tracks: a team's files, committed,
    which belong to the team rather than to this machine (DESIGN §9). [] when the project is in
    no repository or git cannot answer (nothing is then known to be the team's)."""
    here = [p for p in paths if p.exists()]
    if not here:
        return []
    done = _git(project, "ls-files", "-z", "--full-name", "--", *(str(p) for p in here))
    if done is None or done.returncode != 0:
        return []
    top = _git(project, "rev-parse", "--show-toplevel")
    if top is None or top.returncode != 0:
        return []
    root = Path(os.path.realpath(_text(top.stdout).strip()))
    names = {n for n in _text(done.stdout).split("\0") if n}
    real = {p: Path(os.path.realpath(p)) for p in here}
    return [p for p in here if real[p].is_relative_to(root) and _rel(real[p], root) in names]


def _rel(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix()


def ensure_ignored(project: Path, file: Path, shown: str) -> Path | None:
    """Make git ignore `file`: nothing when it is in no repository or already ignored, else our
    line in info/exclude (its path is returned). ConfigError when git tracks the file already
    or the line cannot be made to work; then nothing was changed."""
    found = _where(project, file, shown)
    if found is None:
        return None
    top, rel, exclude = found
    if _tracked(top, rel):
        raise ConfigError(
            f"git tracks {shown}, so what offprompt writes there (this machine's paths) would be"
            f" committed; take it out of git (`git rm --cached {rel}`) and run this again, or"
            " use --shared. Nothing was changed."
        )
    if _ignored(top, rel):
        return None
    block = f"{MARK}\n{exclude_line(rel)}\n"
    exclude_shown = str(exclude)

    def add(text: str | None) -> files.Edit:
        if text and any(b in text for b in _blocks(rel)):
            return files.Edit(text, "unchanged")
        if not text or text.endswith("\n"):
            return files.Edit((text or "") + block, "added")
        return files.Edit(f"{text}\n{_MARK_AFTER_BREAK}\n{exclude_line(rel)}\n", "added")

    files.update(exclude, exclude_shown, add)
    if not _ignored(top, rel):
        release(project, file, shown)
        raise ConfigError(
            f"git still would add {shown} after offprompt named it in {exclude_shown}; add it to"
            " your .gitignore, or use --shared. Nothing was changed."
        )
    return exclude


def _blocks(rel: str) -> tuple[str, str]:
    line = exclude_line(rel)
    return f"{MARK}\n{line}\n", f"{_MARK_AFTER_BREAK}\n{line}\n"


def release(project: Path, file: Path, shown: str) -> Path | None:
    """Take our line for `file` out of info/exclude again (its path is returned; None when it
    was not there). ConfigError when the file cannot be edited."""
    try:
        found = _where(project, file, shown)
    except ConfigError:
        return None
    if found is None:
        return None
    _, rel, exclude = found
    plain, after_break = _blocks(rel)

    def take(text: str | None) -> files.Edit:
        if text is not None and plain in text:
            at = text.rindex(plain)
            rest = text[:at] + text[at + len(plain) :]
        elif text is not None and after_break in text:
            at = text.rindex(after_break)
            rest = text[:at] + text[at + len(after_break) :]
            if at > 0 and rest[at - 1 : at] == "\n":
                rest = rest[: at - 1] + rest[at:]
        else:
            return files.Edit(text, "absent")
        return files.Edit(rest or None, "removed")

    outcome = files.update(exclude, str(exclude), take)
    return exclude if outcome == "removed" else None
