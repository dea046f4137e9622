"""A small JSON Schema (2020-12 subset) validator for the schemas our own tools declare.

Supports type, properties, required, additionalProperties, items, enum, const, pattern,
min/maxLength, min/maxItems, minimum/maximum. Messages name the path and the rule, never the value.
Beyond JSON Schema, every string and field name must be valid Unicode text: a JSON escape can
decode to a lone surrogate, which no UTF-8 page, file or answer can carry. Our patterns are all
anchored (`^...$`) and matched against the whole string: Python's `$` also matches before a final
newline, ECMAScript's (what hosts validate with) does not.
"""

from __future__ import annotations

import re

# Not typing's: `is_text` is on the path to the first reply, which does without typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


def is_text(value: str) -> bool:
    """True when `value` can be encoded as UTF-8 (no lone surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "boolean": (bool,),
    "null": (type(None),),
}


def _is_type(value: Any, name: str) -> bool:
    if name == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer()
        )
    if name == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, _TYPES.get(name, ()))


def _where(path: str) -> str:
    return path or "arguments"


def errors(schema: dict[str, Any], value: Any, path: str = "") -> Iterator[str]:
    """Yield one message per violation, depth first; empty when the value conforms."""
    if isinstance(value, str) and not is_text(value):
        # Checked first: every other message could end up quoting it.
        yield f"{_where(path)} must be valid Unicode text (it holds a lone surrogate)"
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, k) for k in kinds):
            yield f"{_where(path)} must be {' or '.join(kinds)}"
            return
    if "const" in schema and value != schema["const"]:
        yield f"{_where(path)} must be {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"][:20])
        more = ", …" if len(schema["enum"]) > 20 else ""
        yield f"{_where(path)} must be one of: {choices}{more}"
    if isinstance(value, str):
        yield from _string(schema, value, path)
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        if "minimum" in schema and value < schema["minimum"]:
            yield f"{_where(path)} must be at least {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            yield f"{_where(path)} must be at most {schema['maximum']}"
    elif isinstance(value, list):
        yield from _array(schema, value, path)
    elif isinstance(value, dict):
        yield from _object(schema, value, path)


def _string(schema: dict[str, Any], value: str, path: str) -> Iterator[str]:
    if "minLength" in schema and len(value) < schema["minLength"]:
        yield f"{_where(path)} must be at least {schema['minLength']} characters"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield f"{_where(path)} must be at most {schema['maxLength']} characters"
    if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
        yield f"{_where(path)} must match {schema['pattern']}"


def _array(schema: dict[str, Any], value: list[Any], path: str) -> Iterator[str]:
    if "minItems" in schema and len(value) < schema["minItems"]:
        yield f"{_where(path)} must have at least {schema['minItems']} entries"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield f"{_where(path)} must have at most {schema['maxItems']} entries"
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            yield from errors(items, item, f"{path}[{i}]")


def _object(schema: dict[str, Any], value: dict[str, Any], path: str) -> Iterator[str]:
    props: dict[str, Any] = schema.get("properties", {})
    prefix = f"{path}." if path else ""
    for name in schema.get("required", []):
        if name not in value:
            yield f"{prefix}{name} is required"
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if not is_text(key):
            yield f"{_where(path)} has a field whose name is not valid Unicode text"
        elif key in props:
            yield from errors(props[key], item, f"{prefix}{key}")
        elif extra is False:
            # The key is the agent's own text, not a secret; cap it so a result stays short.
            shown = key if len(key) <= 40 else key[:40] + "…"
            yield f"{prefix}{shown} is not an allowed field"
        elif isinstance(extra, dict):
            yield from errors(extra, item, f"{prefix}{key}")
