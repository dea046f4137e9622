"""The Python rules engine: stated verdicts, lines and details, wrong-key hints, page JSON."""

import json
import time

import pytest
import registry_cases as table
from hypothesis import given, settings
from hypothesis import strategies as st

from offprompt.registry import Field, check, hint_table, page_data, resolve
from offprompt.registry.checks import PATTERNS, json_error


def field(ref: str) -> Field:
    """The field for a ref or format id (never None)."""
    f = table.field_for(ref)
    assert f is not None
    return f


def details(ref: str, value: str) -> dict[str, str | None]:
    """Failing rule ids mapped to their details."""
    return {ln.rule_id: ln.detail for ln in check(field(ref), value).lines if not ln.passed}


@pytest.mark.parametrize(("ref", "value", "ok"), table.HAND)
def test_stated_verdicts(ref: str, value: str, ok: bool) -> None:
    """Every hand-written case of the shared table gets the verdict the table states."""
    assert ok == check(field(ref), value).ok


def test_stripe_publishable_key_in_the_secret_key_field() -> None:
    """The publishable key in the secret key field fails, and says where the right one is."""
    verdict = check(resolve("STRIPE_SECRET_KEY"), "pk_live_" + "a1B2" * 6)
    assert not verdict.ok
    assert "That's the Stripe publishable key; use the secret key from the same page." == (
        verdict.hint
    )


def test_openai_key_in_the_anthropic_field() -> None:
    """An OpenAI project key in the Anthropic field fails and is named."""
    verdict = check(resolve("ANTHROPIC_API_KEY"), "sk-proj-" + "a1B2" * 20)
    assert not verdict.ok
    assert "That looks like the OpenAI API key; this field needs the Anthropic API key." == (
        verdict.hint
    )


def test_same_provider_on_another_page() -> None:
    """A Stripe secret key in the webhook field names the key and the field's own credential."""
    verdict = check(resolve("STRIPE_WEBHOOK_SECRET"), "sk_test_" + "a1B2" * 6)
    assert "That's the Stripe secret key; this field needs the webhook signing secret." == (
        verdict.hint
    )


def test_hint_on_a_passing_value_is_advisory() -> None:
    """An Anthropic key passes the loose OpenAI rules, and the hint still names it."""
    verdict = check(resolve("OPENAI_API_KEY"), "sk-ant-api03-" + "a1B2" * 20)
    assert verdict.ok
    assert "Anthropic API key" in str(verdict.hint)


def test_no_hint_for_the_fields_own_prefixes() -> None:
    """A restricted key (rk_) in the secret key field is the field's own: no hint."""
    assert check(resolve("STRIPE_SECRET_KEY"), "rk_live_" + "a1B2" * 6).hint is None


def test_no_hint_when_several_providers_share_the_prefix() -> None:
    """`sk-` alone could be OpenAI or DeepSeek: the prefix line fails, no hint guesses."""
    verdict = check(resolve("ANTHROPIC_API_KEY"), "sk-" + "a1B2" * 12)
    assert (False, None) == (verdict.ok, verdict.hint)


def test_no_hint_for_a_bare_format() -> None:
    """A format field has no provider to compare with: no hint."""
    assert check(resolve("X", format="uuid"), "sk_live_" + "a1B2" * 6).hint is None


def test_no_field_accepts_anything() -> None:
    """None (nothing resolved) accepts any value with no lines."""
    verdict = check(None, "")
    assert (True, (), None) == (verdict.ok, verdict.lines, verdict.hint)


def test_one_line_per_rule_in_order() -> None:
    """Lines follow the field's rules one for one, with the rules' own texts."""
    f = field("stripe/secret_key")
    lines = check(f, "x").lines
    assert [(r.id, r.text) for r in f.rules] == [(ln.rule_id, ln.text) for ln in lines]


def test_length_detail_is_the_count() -> None:
    """A failing length line says how many characters the value has."""
    assert "it has 11 characters" == details("stripe/secret_key", "sk_live_abc")["length"]


def test_prefix_detail_names_a_known_prefix_only() -> None:
    """A failing prefix line names a registry prefix the value starts with, else nothing."""
    assert (
        "it starts with pk_live_" == details("stripe/secret_key", "pk_live_" + "a" * 30)["prefix"]
    )
    assert details("stripe/secret_key", "zzzzzzzz" + "a" * 30)["prefix"] is None


@pytest.mark.parametrize(
    ("middle", "detail"),
    [
        (" ", "it has a space"),
        ("\n", "it has a line break"),
        ("\t", "it has a tab"),
        ('"', "it has a quote mark"),
        ("\u201c", "it has a quote mark"),
        ("…", "it has an ellipsis (…), as in a placeholder"),
        ("\x00", "it has a control character"),
        ("é", "it has a non-ASCII character"),
        ("=", 'it has "="'),
    ],
)
def test_charset_detail_names_the_kind_of_character(middle: str, detail: str) -> None:
    """A failing charset line says what kind of character is wrong."""
    assert detail == details("stripe/secret_key", "sk_live_abcd" + middle + "efgh")["charset"]


def test_charset_detail_never_names_a_letter_or_digit() -> None:
    """A letter outside a hex set is described, not shown."""
    got = details("datadog/api_key", "0123abcg" * 4)["charset"]
    assert "it has a letter or digit outside the allowed set" == got


def test_json_detail_is_a_position() -> None:
    """Invalid JSON says at which character it breaks (1-based, code points)."""
    assert "it breaks at character 9" == details("json", '{"😀": 1,}')["format:json"]


def test_jwt_detail_counts_parts() -> None:
    """A JWT with the wrong number of parts says how many it has."""
    assert "it has 2 parts" == details("jwt", "a.b")["format:jwt"]


def test_reasons_list_failing_lines_with_details() -> None:
    """CheckVerdict.reasons gives each failing line, with its detail in parentheses."""
    reasons = check(field("stripe/secret_key"), "sk_live_abc").reasons
    assert ("20 to 255 characters (it has 11 characters)",) == reasons


@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=20,
    ),
    st.sampled_from([None, 2]),
)
@settings(max_examples=200, deadline=None)
def test_json_checker_accepts_what_json_dumps_writes(data: object, indent: int | None) -> None:
    """Whatever json.dumps writes (ASCII or not, indented or not), the checker accepts."""
    assert json_error(json.dumps(data, indent=indent)) is None
    assert json_error(json.dumps(data, ensure_ascii=False)) is None


@given(st.text(alphabet='{}[]:,"\\ 0123456789.eE+-tfnrulsa\n', max_size=40))
@settings(max_examples=500, deadline=None)
def test_json_checker_agrees_with_json_loads_on_strict_input(text: str) -> None:
    """On text without NaN/Infinity, the checker accepts exactly what json.loads accepts."""
    try:
        json.loads(text)
        loads_ok = True
    except (ValueError, RecursionError):
        loads_ok = False
    assert loads_ok == (json_error(text) is None)


@pytest.mark.parametrize(
    ("ref", "value"),
    [
        ("hostname", "1:" * 8000 + "z"),
        ("hostname", "a." * 8000 + "-/"),
        ("email", "a@" + "b." * 8000),
        ("url", "a" * 8000 + "://" + "b" * 8000 + " "),
        ("jwt", "a." * 8000),
        ("base64", "A" * 16000 + "=!"),
        ("json", "[" * 8000),
        ("postgres_url", "postgres://" + "@" * 16000),
    ],
)
def test_no_check_is_slow_on_a_16_kib_value(ref: str, value: str) -> None:
    """No pattern backtracks for long on the longest value the submitter accepts."""
    start = time.perf_counter()
    check(field(ref), value)
    assert time.perf_counter() - start < 0.5


def test_page_data_is_json_with_patterns_and_hints() -> None:
    """page_data serialises fields (with regex sources) and the hint table, longest first."""
    data = page_data({"ID": resolve("X", format="uuid"), "PLAIN": None})
    again = json.loads(json.dumps(data))
    assert None is again["fields"]["PLAIN"]
    assert PATTERNS["uuid"] == again["fields"]["ID"]["rules"][0]["pattern"]
    lengths = [len(row[0]) for row in hint_table()]
    assert sorted(lengths, reverse=True) == lengths
