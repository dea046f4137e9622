"""Whether a text can be carried as UTF-8 at all: the one check the wire, the schema and every
answer share. Standard library only, and not even that: it is on the path to the first reply."""


def is_text(value: str) -> bool:
    """True when `value` can be encoded as UTF-8 (no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
