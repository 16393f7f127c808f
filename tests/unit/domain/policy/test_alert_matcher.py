"""Alert matchers in PromQL's form: what they match, and what Prometheus would refuse."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.domain.policy.alert_matcher import (
    MATCHER_MAX_LENGTH,
    AlertMatcherError,
    MatchOperator,
    parse_alert_matcher,
)
from tests.support.outside_input import outside_text

CRITICAL = {"alertname": "NodeDown", "severity": "critical", "namespace": "prod-web"}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ('severity="critical"', True),
        ('severity="warning"', False),
        ('severity!="warning"', True),
        ('namespace=~"prod-.*"', True),
        ('namespace=~"prod"', False),  # anchored, as Prometheus anchors it
        ('namespace!~"dev-.*"', True),
        ('team=""', True),  # a missing label is the empty string
        ('team!=""', False),
        ('team=~".*"', True),
        ('  severity = "critical"  ', True),
    ],
)
def test_a_matcher_tests_one_label_of_an_alert(text: str, matches: bool) -> None:
    assert parse_alert_matcher(text).matches(CRITICAL) is matches


def test_escapes_in_the_value_are_read_as_promql_reads_them() -> None:
    matcher = parse_alert_matcher(r'summary="say \"hi\"\\now"')
    assert (matcher.operator, matcher.value) == (MatchOperator.EQUAL, 'say "hi"\\now')
    assert str(matcher) == r'summary="say \"hi\"\\now"'


def test_a_regex_value_with_an_escaped_backslash_is_a_regex_escape() -> None:
    matcher = parse_alert_matcher(r'instance=~"10\\.0\\..*"')
    assert matcher.matches({"instance": "10.0.3.4:9100"})
    assert not matcher.matches({"instance": "10a0.3.4:9100"})


@pytest.mark.parametrize(
    "text",
    [
        "severity=critical",
        "severity='critical'",
        'severity=="critical"',
        'severity>"critical"',
        '1severity="critical"',
        'sev-erity="critical"',
        '="critical"',
        'severity="critical',
        'severity="a" extra',
        r'severity="\q"',
        'job=~"(unclosed"',
        'job=~"a{2,1}"',
        'job=~"(?=look)ahead"',
        r'job=~"(a)\\1"',
        'job="' + "x" * 1024 + '"',
        "",
    ],
)
def test_matchers_prometheus_would_refuse_are_refused(text: str) -> None:
    with pytest.raises(AlertMatcherError):
        parse_alert_matcher(text)


def test_a_matcher_writes_back_as_the_promql_it_was_read_from() -> None:
    for text in ['a="x\\ty"', 'job!~"a\\\\.b"', 'team="line\\nbreak"', 'x=~""']:
        assert str(parse_alert_matcher(text)) == text


@pytest.mark.parametrize(
    "value",
    [
        "a*+",  # possessive
        "a++",
        "a**",
        "(?>a)",  # atomic group
        r"a\\Z",  # \Z: end of text in Python, unknown in RE2
        "(a)?(?(1)b|c)",  # conditional
        "(?<=a)b",  # look-behind
        "(?#comment)a",
        "a{1001}",  # RE2 repeats at most 1000 times
        "(?x) a",  # verbose mode
        r"\\C",  # any byte: C++ RE2 takes it, Go's regexp (Prometheus) does not
        ")|(",  # compiles only inside Prometheus' anchors ^(?:...)$
    ],
)
def test_a_regex_re2_refuses_is_refused_with_a_reason(value: str) -> None:
    for operator in ("=~", "!~"):
        with pytest.raises(AlertMatcherError, match="not a regular expression Prometheus takes"):
            parse_alert_matcher(f'job{operator}"{value}"')


@pytest.mark.parametrize(
    ("value", "label", "matches"),
    [
        (r"[[:alpha:]]+", "abc", True),
        (r"\\pL+", "\u00e9t\u00e9", True),
        (r"(?i)Prod", "PROD", True),
        (r"(?P<env>prod)-.*", "prod-web", True),
        (r"\\Q.*\\E", ".*", True),
        (r"\\Q.*\\E", "anything", False),
        (r"a|b", "ab", False),  # anchored as a whole: ^(?:a|b)$
        (r"x{2,1000}", "xx", True),
    ],
)
def test_a_regex_re2_takes_matches_as_prometheus_would(
    value: str, label: str, matches: bool
) -> None:
    assert parse_alert_matcher(f'job=~"{value}"').matches({"job": label}) is matches


_MATCHER_TEXT = st.builds(
    lambda name, operator, value: f'{name}{operator}"{value}"',
    st.sampled_from(["job", "severity", "1x", ""]),
    st.sampled_from(["=", "!=", "=~", "!~", "==", "~"]),
    outside_text(max_size=40),
)


@settings(max_examples=200, deadline=1000)
@given(st.one_of(outside_text(), _MATCHER_TEXT))
def test_the_matcher_parser_refuses_any_text_with_its_typed_error(text: str) -> None:
    try:
        matcher = parse_alert_matcher(text)
    except AlertMatcherError as error:
        assert len(str(error)) <= MATCHER_MAX_LENGTH
        return
    assert matcher.matches({"job": "a" * 10_000, "severity": text}) in (True, False)


def test_a_refused_regex_is_named_in_a_bounded_message_even_when_re2_quotes_it_whole() -> None:
    text = 'job=~"' + ")" * (MATCHER_MAX_LENGTH - 8) + '"'  # RE2 quotes every ")" from the first

    with pytest.raises(AlertMatcherError, match="not a regular expression") as refused:
        parse_alert_matcher(text)

    assert len(str(refused.value)) <= MATCHER_MAX_LENGTH
