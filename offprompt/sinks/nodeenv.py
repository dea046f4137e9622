"""How `node --env-file` (Node 20) reads a .env: a port of its parser.

Used before writing to check that the lines around a statement we write do not hide it from Node.
"""

from __future__ import annotations

__all__ = ["parse"]

# Port of `Dotenv::ParseContent` as Node 20.20 behaves (the parser behind both `--env-file` and
# `util.parseEnv`); tests/unit/sinks checks it against the real `util.parseEnv` on random text.
# Its quirks matter here: CR is deleted everywhere; a non-empty line that does not start with `#`
# and has no `=` is glued onto the next key's name (`"  \nKEY"`), so a blank line holding a
# space, or an indented comment, hides the statement after it; only spaces are trimmed, not tabs;
# `export ` is stripped once, exactly. The original works on string views by offset, and so does
# this port: trimming an all-space key there steps one character back (`remove_prefix(npos)`),
# which `_trim` reproduces because it changes which name Node sees.


def _trim(buf: str, lo: int, hi: int, *, key: bool = False) -> tuple[int, int]:
    if lo >= hi:
        return lo, lo
    if buf[lo] == " ":
        start = lo
        while start < hi and buf[start] == " ":
            start += 1
        if start == hi:
            if not key or lo == 0:
                return lo, lo
            start = lo - 1
        lo = start
    while hi > lo and buf[hi - 1] == " ":
        hi -= 1
    return lo, hi


def parse(text: str) -> dict[str, str]:
    """The variables Node 20 sets from `text` (the last assignment of a name wins)."""
    buf = text.replace("\r", "")
    store: dict[str, str] = {}
    lo, hi = _trim(buf, 0, len(buf))
    while lo < hi:
        if buf[lo] in "\n#":
            newline = buf.find("\n", lo, hi)
            if newline != -1:
                lo = newline + 1
                continue
        equal = buf.find("=", lo, hi)
        if equal == -1:
            newline = buf.find("\n", lo, hi)
            lo = newline + 1 if newline != -1 else hi
            continue
        k_lo, k_hi = _trim(buf, lo, equal, key=True)
        key = buf[k_lo:k_hi]
        lo, hi = _trim(buf, equal + 1, hi)
        if not key:
            break
        if key.startswith("export "):
            key = key[7:]
        if lo == hi:
            store[key] = ""
            break
        quote = buf[lo]
        closing = buf.find(quote, lo + 1, hi) if quote in "'\"`" else -1
        if quote in "'\"`" and closing != -1:
            value = buf[lo + 1 : closing]
            store[key] = value.replace("\\n", "\n") if quote == '"' else value
            newline = buf.find("\n", closing + 1, hi)
            lo = newline + 1 if newline != -1 else hi
        elif quote in "'\"`":
            newline = buf.find("\n", lo, hi)
            if newline != -1:
                store[key] = buf[lo:newline]
                lo = newline + 1
        else:
            newline = buf.find("\n", lo, hi)
            end = newline if newline != -1 else hi
            hash_char = buf.find("#", lo, end)
            v_lo, v_hi = _trim(buf, lo, hash_char if hash_char != -1 else end)
            store[key] = buf[v_lo:v_hi]
            lo = newline + 1 if newline != -1 else hi
    return store
