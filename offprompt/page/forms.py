"""Reading a submitted form: urlencoded or multipart, UTF-8 only, text fields only, each name once.

Raises FormUnreadable with the status the page server answers (413, 415 or 400).
"""

from typing import Any, Final
from urllib.parse import parse_qsl

from aiohttp import web
from multidict import MultiDictProxy

__all__ = ["MAX_BODY", "FormUnreadable", "read_form"]

MAX_BODY: Final = 64 * 1024
_MAX_FIELDS: Final = 64
_FORM: Final = "application/x-www-form-urlencoded"
_MULTIPART: Final = "multipart/form-data"


class FormUnreadable(Exception):
    """The body is not a form this server reads; `status` is the answer to give.

    Outside the error root on purpose: the submit handler turns it into a `Refusal` at once.
    """

    def __init__(self, status: int) -> None:
        super().__init__(f"form unreadable ({status})")
        self.status = status


async def read_form(request: web.Request) -> dict[str, str]:
    """The POST fields, each name once; 413 over 64 KiB (declared or read), 415/400 otherwise."""
    if request.content_length is not None and request.content_length > MAX_BODY:
        raise FormUnreadable(413)
    ctype = request.content_type
    charset = (request.charset or "utf-8").lower()  # fetch() sends "charset=UTF-8"
    if ctype not in (_FORM, _MULTIPART) or charset not in ("utf-8", "utf8"):
        raise FormUnreadable(415)
    pairs: list[tuple[str, str]] = []
    try:
        if ctype == _FORM:
            # aiohttp's client_max_size (MAX_BODY) bounds read() as it reads chunked bodies.
            text = (await request.read()).decode("utf-8")
            pairs = parse_qsl(
                text,
                keep_blank_values=True,
                encoding="utf-8",
                errors="strict",
                max_num_fields=_MAX_FIELDS,
            )
        else:
            pairs = _text_parts(await request.post())
    except (ValueError, LookupError) as exc:  # UnicodeDecodeError is a ValueError
        raise FormUnreadable(400) from exc
    form: dict[str, str] = {}
    for name, value in pairs:
        if name in form:
            raise FormUnreadable(400)
        form[name] = value
    return form


def _text_parts(post: MultiDictProxy[Any]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    bad = False
    for name, value in post.items():
        if isinstance(value, str):
            pairs.append((name, value))
            continue
        bad = True
        if isinstance(value, web.FileField):
            value.file.close()
    if bad or len(pairs) > _MAX_FIELDS:
        raise ValueError("a form field that is not text")
    return pairs
