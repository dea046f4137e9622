"""A differential fuzzer for the guard (issue 45): commands made from bash's grammar around reads
and everyday calls, each run by the real bash under strace in a scratch project while the files
it opens are recorded, and each decided by the guard in this process. The comparison: a command
under which bash opened a protected file must be blocked; an everyday command under which it
opened none must pass. A case no rule covers (an attack bash did not carry out) claims nothing.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from offprompt.guard import hook
from offprompt.write.journal import Journal, JournalEntry

__all__ = ["STRACE", "Case", "Finding", "Scratch", "generate", "guard_code"]

# The project's protected files (a dotenv at the root and in a folder, a file the journal says
# offprompt wrote) and the decoys beside them; an everyday case names only decoys.
PROTECTED = (".env", "sub/.env", "config/service.json")
DECOYS = ("README.md", "notes.txt", ".env.example", "src/main.py", "config/notes.md", "sub/a.txt")
# The machine's programs, whatever PATH a test has set (the guard's tests fake theirs).
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
STRACE = shutil.which("strace", path=SYSTEM_PATH)
# Long enough for a slow machine; a case that takes longer is killed with its process group.
CASE_TIMEOUT = 5.0

# --- the generator -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One generated command; `everyday` when it names no protected file for reading."""

    command: str
    everyday: bool


def _dq(text: str) -> str:
    """`text` inside double quotes, as bash gives it back."""
    return '"' + re.sub(r'([\\"$`])', r"\\\1", text) + '"'


def _sq(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _cut(name: str, r: random.Random) -> int:
    """A place inside the file-name part of `name` (after its last `/`), never at its ends."""
    start = name.rfind("/") + 1
    return r.randint(start + 1, len(name) - 1) if len(name) - start > 1 else len(name)


# A spelling of a path: (what runs before, the word). Each is a way bash may make the name.
def _spell(
    path: str, r: random.Random, plain: bool = False, everyday: bool = False
) -> tuple[str, str]:
    """`plain`: only quoting and escapes (an everyday call's spellings)."""
    i = _cut(path, r)
    a, b = path[:i], path[i:]
    kind = r.randrange(6 if plain else 22)
    if everyday and kind == 12:
        kind = 13  # a part of a name in a variable is an attack's shape, not everyday work
    if everyday and kind in (7, 8, 9, 10) and path.startswith(".env"):
        # The guard blocks a glob a protected name would match were it there (`.env.*`: a
        # `.env.local` made earlier in the same command), and a here-string's braces, which
        # bash leaves as they are, split at `{`: not a decoy's everyday spelling.
        kind = 0
    if kind == 0:
        return "", path
    if kind == 1:
        return "", _sq(path)
    if kind == 2:
        return "", _dq(path)
    if kind == 3:
        return "", f"{a}''{b}"
    if kind == 4:
        return "", f'{a}""{b}'
    if kind == 5:
        return "", f"{a}\\{b}"
    if kind == 6:
        return "", "$'" + "".join(f"\\x{ord(c):02x}" if c == path[i - 1] else c for c in path) + "'"
    if kind == 7:  # `.env{.example,}` would be two names, `.env` one of them: once each
        return "", f"{a}{{{b},{b}}}" if everyday else f"{a}{{{b},}}"
    if kind == 8:
        return "", f"{a[:-1]}?{b}"
    if kind == 9:
        return "", f"{a[:-1]}[{a[-1]}]{b}"
    if kind == 10:
        return "", f"{a}*" if "/" not in b else path
    if kind == 11:
        return "", f"{a}${{UNSET}}{b}"
    if kind == 12:
        return f"f={_sq(a)}; ", f"${{f}}{b}"
    if kind == 13:
        return f"f={_sq(path)}; ", r.choice(['"$f"', "$f", "${f}"])
    if kind == 14:
        return "", r.choice(['"$PWD"/', "./", "~+/", "src/../"]) + path
    if kind == 15:
        return "", r.choice([f"$(echo {path})", f"`echo {path}`", f"$(printf %s {_sq(path)})"])
    if kind == 16:
        return "", f"{a}\\\n{b}"  # a line continuation inside the word
    if kind == 17:
        return "", f'$"{path}"'
    if kind == 18:
        return f"for f in x {path}; do ", "$f"  # closed by the caller
    if kind == 19:
        return f"a=(x {path}); ", '"${a[1]}"'
    if kind == 20:
        return f"read -r f <<< {_sq(path)}; ", "$f"
    return f"printf -v f %s {_sq(path)}; ", "$f"


# How a program reads the file `{w}` (a word as spelled above).
READS = (
    "cat {w}", "head -n 1 {w}", "tail -n 1 {w}", "grep -h . {w}", "sed -n p {w}", "awk 1 {w}",
    "cat < {w}", "cat 0< {w}", 'while IFS= read -r l; do echo "$l"; done < {w}', "cp {w} ../out",
    "source {w}", ". {w}", "echo {w} | xargs cat", "xargs cat <<< {w}", "env cat {w}",
    "command cat {w}", "builtin source {w}", "( exec cat {w} )", "bash -c 'cat \"$1\"' _ {w}",
    'echo "$(< {w})"', "cat -- {w}", "tac {w}", "sort {w}", "xargs -a <(echo {w}) cat",
    "find . -path ./{w} -exec cat {{}} +", "diff {w} /dev/null", "exec 3< {w}; cat <&3",
    'mapfile -t a < {w}; echo "${{a[@]}}"', '{{ read -r l; echo "$l"; }} < {w}',
    "dd if={w} status=none", "base64 {w}", "od -c {w}", "cut -c1- {w}", 'cat "${{X:-{w}}}"',
    "printf '%s\\n' {w} | xargs cat", "time cat {w}", "nohup cat {w} 2>/dev/null",
    "timeout 5 cat {w}", "exec 0< {w}; cat",
)  # fmt: skip
# Calls that show no byte of a file, on any file (protected ones too): DESIGN §14's metadata.
METADATA = ("ls -l {w}", "test -f {w} && echo yes", "[ -s {w} ]", "stat -c %s {w}", "ls {w}")
# Ways into a file's folder before a relative read: `{d}` a spelling of the folder.
CDS = (
    "cd {d} && ", "cd -P {d} && ", "pushd {d} >/dev/null && ", "builtin cd {d} && ",
    "CDPATH=. cd {d} >/dev/null && ", "CDPATH=$PWD; cd {d} >/dev/null && ", "( cd {d}; ",
    "cd -- {d}; ",
)  # fmt: skip


def _folder(folder: str, r: random.Random) -> str:
    return r.choice(
        [folder, f"{folder[:2]}*", f"{folder[0]}?{folder[2:]}", f"[{folder[0]}]{folder[1:]}",
         f"{{{folder},}}", _sq(folder), f"{folder}/", f"./{folder}", f"$(echo {folder})",
         f"{folder[:2]}''{folder[2:]}"]
    )  # fmt: skip


def _core(path: str, r: random.Random, metadata: bool, everyday: bool) -> str:
    """One command on `path`: a read, or (`metadata`) a call that shows none of its bytes."""
    template = r.choice(METADATA if metadata else READS)
    folder, _, name = path.rpartition("/")
    if folder and r.random() < 0.3 and not metadata:
        before, word = _spell(name, r, everyday=everyday)
        cd = r.choice(CDS).format(d=_folder(folder, r))
        command = before + cd + template.format(w=word) + (" )" if cd.startswith("(") else "")
    else:
        before, word = _spell(path, r, plain=metadata, everyday=everyday)
        command = before + template.format(w=word)
    return command + ("; done" if before.startswith("for ") else "")


def _escape_backticks(text: str) -> str:
    return text.replace("\\", "\\\\").replace("`", "\\`")


# The grammar around a command `c`: each makes bash run it (or, for a few, only mention it).
WRAPPERS: tuple[Callable[[str, int], str], ...] = (
    lambda c, n: f"( {c} )",
    lambda c, n: f"{{ {c}; }}",
    lambda c, n: f"true && {c}",
    lambda c, n: f"false || {c}",
    lambda c, n: f"if true; then {c}; fi",
    lambda c, n: f"for i in 1; do {c}; done",
    lambda c, n: f"f{n}() {{ {c}; }}; f{n}",
    lambda c, n: f"function g{n} {{ {c}; }}\ng{n}",
    lambda c, n: f'x=$({c}); echo "$x"',
    lambda c, n: f'echo "$({c})"',
    lambda c, n: f"echo `{_escape_backticks(c)}`",
    lambda c, n: f"eval {_sq(c)}",
    lambda c, n: f"eval {_dq(c)}",
    lambda c, n: f"bash -c {_sq(c)}",
    lambda c, n: f"sh -c {_sq(c)}",
    lambda c, n: f"{c} # it's a comment",
    lambda c, n: f"# it's a comment\n{c}",
    lambda c, n: f"x=$( # it's\necho 1 )\n{c}",
    lambda c, n: f"(( 1 << 2 ))\n{c}",
    lambda c, n: f"echo $(( 2 << 1 ))\n{c}",
    lambda c, n: f"cat <<EOF{n} >/dev/null\nit's $HOME\nEOF{n}\n{c}",
    lambda c, n: f"bash <<'EOF{n}'\n{c}\nEOF{n}",
    lambda c, n: f"{c} | cat",
    lambda c, n: f"{c} 2>&1 | head -n 5",
    lambda c, n: f"{c} >/dev/null",
    lambda c, n: f"{c} & wait",
    lambda c, n: f"case x in x) {c};; esac",
    lambda c, n: f"[[ -n x ]] && {c}",
    lambda c, n: f": 'it'\"'\"'s'; {c}",
    lambda c, n: f"echo a \\\n  b; {c}",
    lambda c, n: f"x=1; {c}",
    lambda c, n: f"shopt -s extglob; {c}",
    lambda c, n: f"while false; do :; done; {c}",
    lambda c, n: f"echo {{a,b}}.txt; {c}",
    lambda c, n: f"trap {_sq(c)} EXIT",
    lambda c, n: f"source /dev/stdin <<< {_sq(c)}",
    lambda c, n: f"shopt -s expand_aliases\nalias a{n}={_sq(c)}\na{n}",
    lambda c, n: f"select s in x; do {c}; break; done <<< 1",
    lambda c, n: f"coproc {{ {c}; }}; wait",
)


# The wrappers that send the command's output on (a substitution, a pipe): a metadata call's
# names there may be read by what takes them, so the guard may block it (DESIGN §14's list is of
# the calls whose output goes to the terminal).
CAPTURING = frozenset({8, 9, 10, 22, 23})


def generate(seed: int, count: int) -> list[Case]:
    """`count` cases made with `seed`: the same each run."""
    r = random.Random(seed)  # noqa: S311 - a test's fixed seed, not a secret
    out = []
    for n in range(count):
        roll = r.random()
        if roll < 0.5:
            path, metadata, everyday = r.choice(PROTECTED), False, False
        elif roll < 0.6:
            path, metadata, everyday = r.choice(PROTECTED), True, True
        else:
            path, metadata, everyday = r.choice(DECOYS), r.random() < 0.2, True
        command = _core(path, r, metadata, everyday)
        for _ in range(r.choice((0, 1, 1, 2, 2, 3))):
            k = r.randrange(len(WRAPPERS))
            if metadata and k in CAPTURING:
                k = 0
            command = WRAPPERS[k](command, n)
        out.append(Case(command, everyday))
    return out


# --- the scratch project and the oracle --------------------------------------------------------


@dataclass(frozen=True)
class Finding:
    """A case where the guard and bash disagree."""

    command: str
    opened: tuple[str, ...]  # the protected files bash opened (relative to the project)
    code: int  # the guard's exit code

    def __str__(self) -> str:
        what = f"bash opened {', '.join(self.opened)}" if self.opened else "bash opened none"
        return f"{what}; guard exit {self.code}: {self.command!r}"


_OPENED = re.compile(r"^\d+ +(?:openat|open)\(.*\) = \d+<(.*)>$")


class Scratch:
    """A small project with protected files and decoys under `root` (the folder bash may write
    in: the project, `../out`, a HOME), put back as it was after any case that changed it."""

    def __init__(self, root: Path, canary: str) -> None:
        self.root = root.resolve()
        self.project = self.root / "app"
        self.home = self.root / "home"
        self.log = self.root.parent / f"{self.root.name}.strace"
        self.template = self.root.parent / f"{self.root.name}.template"
        self._build(self.template, canary)
        self.protected = {str(self.project / p): p for p in PROTECTED}
        self._restore()
        Journal().append(
            JournalEntry(
                at="2026-01-01T00:00:00Z",
                project=str(self.project),
                file="config/service.json",
                names=("SERVICE_KEY",),
                kept=(),
                fingerprint=None,
                client="test",
                request_id="fuzz",
            )
        )
        self._state = self._snapshot()
        unshare = shutil.which("unshare", path=SYSTEM_PATH)
        # No network for the commands where the machine lets a user make a namespace.
        self._isolate = [unshare, "-rn"] if unshare and _works([unshare, "-rn", "true"]) else []

    @staticmethod
    def _build(template: Path, canary: str) -> None:
        app = template / "app"
        for folder in ("src", "sub", "config"):
            (app / folder).mkdir(parents=True)
        for name in PROTECTED:
            (app / name).write_text(f"OPENAI_API_KEY={canary}\n")
        for name in DECOYS:
            (app / name).write_text("OPENAI_API_KEY=\n" if "env" in name else "text\n")
        (template / "home").mkdir()

    def _restore(self) -> None:
        if self.root.exists():
            shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(self.template, self.root, symlinks=True)

    def _snapshot(self) -> list[tuple[str, int, int, int]]:
        out = []
        for folder, dirs, files in os.walk(self.root):
            for name in sorted(dirs + files):
                path = os.path.join(folder, name)
                st = os.lstat(path)
                out.append((path, st.st_mode, st.st_size, st.st_mtime_ns))
        return sorted(out)

    def opened(self, command: str) -> tuple[str, ...]:
        """Run `command` with `bash -c` in the project under strace (no network where the
        machine allows it, stdin closed, its own process group, killed after CASE_TIMEOUT) and
        say which protected files any process of it opened."""
        env = {"PATH": SYSTEM_PATH, "HOME": str(self.home), "TMPDIR": str(self.home), "LANG": "C"}
        trace = [str(STRACE), "-f", "-qq", "-y", "-e", "trace=openat,open", "-e", "signal=none"]
        argv = [*self._isolate, *trace, "-o", str(self.log), "bash", "-c", command]
        with subprocess.Popen(
            argv,
            cwd=self.project,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        ) as p:
            try:
                p.wait(CASE_TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        found = set()
        for line in self.log.read_text(errors="replace").splitlines():
            m = _OPENED.match(line)
            if m is not None and m.group(1) in self.protected:
                found.add(self.protected[m.group(1)])
        if self._snapshot() != self._state:
            self._restore()
        return tuple(sorted(found))

    def judge(self, case: Case, opened: tuple[str, ...]) -> Finding | None:
        """The case, under which bash `opened` those protected files, as a finding, or None
        when the guard agrees with bash."""
        if not opened and not case.everyday:
            return None  # an attack bash did not carry out: no claim either way
        code = guard_code(self.project, case.command)
        if (opened and code != 2) or (not opened and code != 0):
            return Finding(case.command, opened, code)
        return None


def _works(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=5, check=False).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def guard_code(project: Path, command: str) -> int:
    """The guard's exit code for a Claude Code Bash call of `command` in `project`, decided in
    this process (the hook's own main, no process per case)."""
    event = {
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "cwd": str(project),
    }
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        return hook.main(stdin=json.dumps(event).encode(), deadline=None)
