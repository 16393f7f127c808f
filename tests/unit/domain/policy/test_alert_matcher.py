"""Alert matchers in PromQL's form: what they match, and what Prometheus would refuse."""

from __future__ import annotations

import pytest

from brupop.domain.policy.alert_matcher import AlertMatcherError, MatchOperator, parse_alert_matcher

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
