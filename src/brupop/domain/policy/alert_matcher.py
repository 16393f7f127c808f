"""Alert label matchers in PromQL's form: `name="v"`, `name!="v"`, `name=~"re"`, `name!~"re"`.

The CRD schema can only bound a matcher's length; its syntax and its regular expression are
checked here. Regular expressions are fully anchored, as Prometheus anchors them. Python's `re`
stands in for Prometheus' RE2 when checking them: the two agree on the common syntax, and RE2
refuses a few constructs (look-arounds, back-references) that `re` takes, so those are refused
here too.

Python's `re` backtracks, so a hostile pattern could be slow on a long value: the alert gate is
meant to hand the matchers to Prometheus (`ALERTS{...}`, written with `str(matcher)`) and to
use `matches` only where Prometheus is not involved (tests, simulate).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

MATCHER_MAX_LENGTH = 1024
_MATCHER = re.compile(
    r'^\s*(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)\s*(?P<op>=~|!~|!=|=)\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*$'
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
# Constructs Python's `re` accepts and RE2 (Prometheus) refuses.
_NOT_RE2 = re.compile(r"\(\?[=!<]|\(\?P=|\\[1-9]")


class AlertMatcherError(ValueError):
    """A matcher Prometheus would refuse; the message says why."""


class MatchOperator(StrEnum):
    """How a matcher tests one label's value."""

    EQUAL = "="
    NOT_EQUAL = "!="
    MATCHES = "=~"
    DOES_NOT_MATCH = "!~"


@dataclass(frozen=True)
class AlertMatcher:
    """One matcher; a label the alert lacks counts as the empty string, as in Prometheus."""

    name: str
    operator: MatchOperator
    value: str
    _pattern: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when the alert's `labels` satisfy this matcher."""
        actual = labels.get(self.name, "")
        match self.operator:
            case MatchOperator.EQUAL:
                return actual == self.value
            case MatchOperator.NOT_EQUAL:
                return actual != self.value
            case MatchOperator.MATCHES:
                return self._regex.fullmatch(actual) is not None
            case MatchOperator.DOES_NOT_MATCH:
                return self._regex.fullmatch(actual) is None

    @property
    def _regex(self) -> re.Pattern[str]:
        return self._pattern or re.compile(self.value)

    def __str__(self) -> str:
        escaped = (
            self.value.replace("\\", "\\\\")
            .replace('"', '\\"')
            .replace("\n", "\\n")
            .replace("\t", "\\t")
        )
        return f'{self.name}{self.operator}"{escaped}"'


def parse_alert_matcher(text: str) -> AlertMatcher:
    """The matcher `text` means; AlertMatcherError when Prometheus would refuse it."""
    if len(text) > MATCHER_MAX_LENGTH:
        raise AlertMatcherError(f"longer than {MATCHER_MAX_LENGTH} characters")
    match = _MATCHER.match(text)
    if match is None:
        raise AlertMatcherError(
            f'{text!r} is not a matcher: write name="value", name!="value", '
            'name=~"regex" or name!~"regex"'
        )
    operator = MatchOperator(match["op"])
    value = _unescaped(match["value"], text)
    pattern = None
    if operator in (MatchOperator.MATCHES, MatchOperator.DOES_NOT_MATCH):
        pattern = _compiled(value, text)
    return AlertMatcher(name=match["name"], operator=operator, value=value, _pattern=pattern)


def _unescaped(raw: str, text: str) -> str:
    out, chars = [], iter(raw)
    for char in chars:
        if char != "\\":
            out.append(char)
            continue
        escaped = next(chars)  # the pattern guarantees a character follows a backslash
        if escaped not in _ESCAPES:
            raise AlertMatcherError(f"{text!r}: unknown escape \\{escaped}")
        out.append(_ESCAPES[escaped])
    return "".join(out)


def _compiled(value: str, text: str) -> re.Pattern[str]:
    if _NOT_RE2.search(value):
        raise AlertMatcherError(f"{text!r}: look-arounds and back-references are not RE2")
    try:
        return re.compile(value)
    except re.error as error:
        raise AlertMatcherError(f"{text!r}: bad regular expression ({error})") from None
