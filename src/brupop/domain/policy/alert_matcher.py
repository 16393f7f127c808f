"""Alert label matchers in PromQL's form: `name="v"`, `name!="v"`, `name=~"re"`, `name!~"re"`.

The CRD schema can only bound a matcher's length; its syntax and its regular expression are
checked here. A regular expression is checked by RE2 itself (google-re2), in the form
Prometheus compiles it, fully anchored as `^(?:re)$`, so a matcher brupop takes is one
Prometheus takes: possessive and atomic forms, conditionals, look-arounds, back-references,
`\\Z` and repeats over 1000 are refused with RE2's own reason. One construct C++ RE2 takes and
Go's regexp (Prometheus) refuses, `\\C` (any byte), is refused here by name.

RE2 matches in linear time, so `matches` (tests, simulate) is safe on any label value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

MATCHER_MAX_LENGTH = 1024
_MATCHER = re.compile(
    r'^\s*(?P<name>[a-zA-Z_][a-zA-Z0-9_]*)\s*(?P<op>=~|!~|!=|=)\s*"(?P<value>(?:[^"\\]|\\.)*)"\s*$'
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_SHOWN_MAX_CHARS = 80
_REASON_MAX_CHARS = 200  # RE2's reason in a message
_NOT_IN_GO = "C"  # after a backslash: C++ RE2 takes `\\C`, Go's regexp refuses it


class _Regex(Protocol):
    """What brupop uses of a compiled RE2 pattern."""

    def search(self, text: str) -> object | None: ...


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
    _pattern: _Regex | None = field(default=None, compare=False, repr=False)

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True when the alert's `labels` satisfy this matcher."""
        actual = labels.get(self.name, "")
        match self.operator:
            case MatchOperator.EQUAL:
                return actual == self.value
            case MatchOperator.NOT_EQUAL:
                return actual != self.value
            case MatchOperator.MATCHES:
                return self._regex.search(actual) is not None
            case MatchOperator.DOES_NOT_MATCH:
                return self._regex.search(actual) is None

    @property
    def _regex(self) -> _Regex:
        return self._pattern or _compiled(self.value, str(self))

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
            f'{_shown(text)} is not a matcher: write name="value", name!="value", '
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
            raise AlertMatcherError(f"{_shown(text)}: unknown escape \\{escaped}")
        out.append(_ESCAPES[escaped])
    return "".join(out)


def _compiled(value: str, text: str) -> _Regex:
    """`value` compiled by RE2 as Prometheus compiles it (anchored); AlertMatcherError with
    RE2's reason when RE2, or Go's regexp, refuses it."""
    if _go_refuses(value):
        raise AlertMatcherError(f"{_shown(text)}: \\C is not a regular expression Prometheus takes")
    re2 = _re2()
    try:
        re2.compile(value, _options())  # alone too: `)|(` compiles only inside the anchors
        pattern: _Regex = re2.compile(f"^(?:{value})$", _options())
    except re2.error as error:
        reason = _reason(error)
        raise AlertMatcherError(
            f"{_shown(text)}: not a regular expression Prometheus takes ({reason})"
        ) from None
    except UnicodeError:  # a lone surrogate, which JSON can carry and UTF-8 cannot
        raise AlertMatcherError(f"{_shown(text)}: not valid Unicode") from None
    return pattern


def _go_refuses(value: str) -> bool:
    """`value` holds `\\C` (an escaped backslash followed by C does not count)."""
    chars = iter(value)
    return any(char == "\\" and next(chars, "") == _NOT_IN_GO for char in chars)


def _reason(error: Any) -> str:
    """RE2's message, as text (the binding gives it as bytes), cut short: RE2 quotes the rest
    of the pattern from where it failed, which can be the whole matcher again."""
    detail = error.args[0] if error.args else "refused"
    text = detail.decode("utf-8", "replace") if isinstance(detail, bytes) else str(detail)
    return text if len(text) <= _REASON_MAX_CHARS else f"{text[:_REASON_MAX_CHARS]}..."


def _shown(text: str) -> str:
    """The matcher quoted for a message, cut short."""
    return repr(text) if len(text) <= _SHOWN_MAX_CHARS else f"{text[:_SHOWN_MAX_CHARS]!r}..."


@functools.cache
def _re2() -> Any:
    """google-re2, imported when a regular expression is first checked: it costs a process
    3.4 MiB, which a process that meets no regex matcher (the apiserver, reading only a
    policy's drain rules) never pays."""
    import re2  # type: ignore[import-untyped]

    return re2


@functools.cache
def _options() -> Any:
    """RE2's options: its own error log off (brupop reports the reason itself)."""
    options = _re2().Options()
    options.log_errors = False
    return options
