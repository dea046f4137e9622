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
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from offprompt.errors import FieldPath, field_name
from offprompt.utf8 import is_text

__all__ = ["Violation", "errors", "violations"]


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


@dataclass(frozen=True)
class Violation:
    """One rule a value breaks: where (`path`), which keyword (`keyword`, or `text` for a lone
    surrogate), and the rule said after the field's name (`rule`)."""

    path: FieldPath
    keyword: str
    rule: str

    def __str__(self) -> str:
        return f"{field_name(self.path) or 'arguments'} {self.rule}"


def errors(schema: dict[str, Any], value: Any) -> Iterator[str]:
    """Yield one message per violation, depth first; empty when the value conforms."""
    return (str(v) for v in violations(schema, value))


def violations(schema: dict[str, Any], value: Any, path: FieldPath = ()) -> Iterator[Violation]:
    """Every rule `value` breaks, depth first; empty when it conforms."""
    if isinstance(value, str) and not is_text(value):
        # Checked first: every other message could end up quoting it.
        yield Violation(path, "text", "must be valid Unicode text (it holds a lone surrogate)")
        return
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, k) for k in kinds):
            yield Violation(path, "type", f"must be {' or '.join(kinds)}")
            return
    if "const" in schema and value != schema["const"]:
        yield Violation(path, "const", f"must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(str(c) for c in schema["enum"][:20])
        more = ", …" if len(schema["enum"]) > 20 else ""
        yield Violation(path, "enum", f"must be one of: {choices}{more}")
    if isinstance(value, str):
        yield from _string(schema, value, path)
    elif isinstance(value, bool):
        pass
    elif isinstance(value, int | float):
        if "minimum" in schema and value < schema["minimum"]:
            yield Violation(path, "minimum", f"must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            yield Violation(path, "maximum", f"must be at most {schema['maximum']}")
    elif isinstance(value, list):
        yield from _array(schema, value, path)
    elif isinstance(value, dict):
        yield from _object(schema, value, path)


def _string(schema: dict[str, Any], value: str, path: FieldPath) -> Iterator[Violation]:
    if "minLength" in schema and len(value) < schema["minLength"]:
        yield Violation(path, "minLength", f"must be at least {schema['minLength']} characters")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        yield Violation(path, "maxLength", f"must be at most {schema['maxLength']} characters")
    if "pattern" in schema and not re.fullmatch(schema["pattern"], value):
        yield Violation(path, "pattern", f"must match {schema['pattern']}")


def _array(schema: dict[str, Any], value: list[Any], path: FieldPath) -> Iterator[Violation]:
    if "minItems" in schema and len(value) < schema["minItems"]:
        yield Violation(path, "minItems", f"must have at least {schema['minItems']} entries")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        yield Violation(path, "maxItems", f"must have at most {schema['maxItems']} entries")
    items = schema.get("items")
    if isinstance(items, dict):
        for i, item in enumerate(value):
            yield from violations(items, item, (*path, i))


def _object(schema: dict[str, Any], value: dict[str, Any], path: FieldPath) -> Iterator[Violation]:
    props: dict[str, Any] = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in value:
            yield Violation((*path, name), "required", "is required")
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if not is_text(key):
            yield Violation(path, "text", "has a field whose name is not valid Unicode text")
        elif key in props:
            yield from violations(props[key], item, (*path, key))
        elif extra is False:
            # The key is the agent's own text, not a secret; cap it so a result stays short.
            shown = key if len(key) <= 40 else key[:40] + "…"
            yield Violation((*path, shown), "additionalProperties", "is not an allowed field")
        elif isinstance(extra, dict):
            yield from violations(extra, item, (*path, key))
