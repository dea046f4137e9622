"""No line, detail or hint ever carries a stretch of the checked value."""

import json
import re

import registry_cases as table
from hypothesis import given, settings
from hypothesis import strategies as st

from offprompt.registry import check, format_ids, hint_table, page_data

REFS = [*table.credential_refs(), *format_ids()]
FIELDS = {ref: table.field_for(ref) for ref in REFS}

# Everything the engine may say on its own: rule texts, labels, prefixes, provider names,
# hint and detail wording. A window of the value found here may be a coincidence, not a leak.
VOCABULARY = (
    json.dumps(page_data(FIELDS), ensure_ascii=False)
    + " it has # characters it starts with it breaks at character # parts a space a line break"
    " a tab a quote mark an ellipsis (…), as in a placeholder a control character a non-ASCII"
    " character a letter or digit outside the allowed set That's the; use the from the same"
    " page. this field needs the That looks like the"
)
PREFIXES = ["", *sorted({row[0] for row in hint_table()})]
DIGITS = re.compile(r"[0-9]+")


def said(ref: str, value: str) -> list[str]:
    """Every text the engine returns for `value`, counts replaced by #."""
    verdict = check(FIELDS[ref], value)
    parts = [verdict.hint or ""]
    parts += [piece for ln in verdict.lines for piece in (ln.text, ln.detail or "")]
    return [DIGITS.sub("#", part) for part in parts]


@given(st.sampled_from(REFS), st.sampled_from(PREFIXES), st.text(min_size=4, max_size=80))
@settings(max_examples=1000, deadline=None)
def test_no_stretch_of_the_value_is_returned(ref: str, start: str, body: str) -> None:
    """No 4-character window of the value appears in the output unless the registry says it."""
    value = start + body
    out = said(ref, value)
    leaked = [
        w
        for w in (value[i : i + 4] for i in range(len(value) - 3))
        if any(w in part for part in out) and w not in VOCABULARY
    ]
    assert [] == leaked


@given(st.sampled_from(REFS), st.text(alphabet="QZXJ", min_size=8, max_size=80))
@settings(max_examples=300, deadline=None)
def test_an_unusual_value_leaves_no_trace(ref: str, value: str) -> None:
    """A value made of letters the registry rarely uses never shows up, even as a window."""
    out = said(ref, value)
    assert not any(value[i : i + 4] in part for part in out for i in range(len(value) - 3))
