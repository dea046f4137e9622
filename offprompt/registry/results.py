"""What resolve and check hand out: the Field of a secret entry, and a CheckVerdict of Lines.

Frozen dataclasses, loaded with the engine on first use rather than at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass

from offprompt.registry.model import Rule


@dataclass(frozen=True)
class Field:
    """What a secret entry resolves to: its label, link, placeholder and rules.

    `provider_id`/`provider_name`/`credential` are None for a bare format. `credential` is the
    credential key, or the offered format's id for a provider's offer. `noun` is the label as it
    reads inside a sentence ("secret key", "API key").
    """

    ref: str
    provider_id: str | None
    provider_name: str | None
    credential: str | None
    label: str
    noun: str
    url: str | None
    placeholder: str
    secret: bool
    multiline: bool
    rules: tuple[Rule, ...]
    format: str


@dataclass(frozen=True)
class Line:
    """One rule's verdict. `detail` adds a length or a recognised prefix, never the value."""

    rule_id: str
    text: str
    passed: bool
    detail: str | None = None


@dataclass(frozen=True)
class CheckVerdict:
    """Every rule's line, whether all passed, and a wrong-key hint (advisory, may be set on ok)."""

    ok: bool
    lines: tuple[Line, ...] = ()
    hint: str | None = None

    @property
    def reasons(self) -> tuple[str, ...]:
        """The failing lines as short reasons for an error list, e.g. "starts with re_"."""
        return tuple(
            f"{ln.text} ({ln.detail})" if ln.detail else ln.text
            for ln in self.lines
            if not ln.passed
        )
