"""How the agent reads one environment variable: text to a checked value, or ValueError.

Plain functions rather than pydantic, which would cost the agent about 50 ms of CPU at each
start under `cpu: 10m`. Each reader takes the variable's (stripped, non-empty) text and
returns the value, or raises ValueError saying what is wrong with it; `settings` names the
variable. Numbers are ASCII, finite and bounded, as the controller's pydantic fields are.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from brupop.adapters.apiserver_client.base_url import split_base_url
from brupop.domain.object_names import (
    DNS_LABEL_MAX,
    DNS_SUBDOMAIN_MAX,
    is_dns_label,
    is_dns_subdomain,
)
from brupop.domain.value_objects import value_object
from brupop.entrypoints.logging.log_filter import check_directive
from brupop.entrypoints.logging.log_settings import check_formatter

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any

    Reader = Callable[[str], Any]
# An integer as pydantic reads one from text: `30`, `+30`, `1_000`, `30.0` (not `3e1`).
_INTEGER = re.compile(r"[+-]?[0-9]+(?:_[0-9]+)*(?:\.0+)?")


def _name(is_name: Callable[[str], bool], what: str) -> Reader:
    """Text that `is_name` takes; it goes into the apiserver's address or the cluster's API."""

    def read(value: str) -> str:
        if not is_name(value):
            raise ValueError(f"should be {what}")
        return value

    return read


namespace = _name(
    is_dns_label,
    f"a namespace name: at most {DNS_LABEL_MAX} lower-case letters, digits and '-' (DNS-1123"
    " label)",
)
dns_name = _name(
    is_dns_subdomain,
    f"a DNS name: at most {DNS_SUBDOMAIN_MAX} lower-case letters, digits, '-' and '.' (DNS-1123"
    " subdomain)",
)


def base_url(value: str) -> str:
    """An apiserver URL the agent's client reads: `http(s)://host[:port][/path]`, nothing more
    (a bad one stops the start naming its variable, not later with a traceback)."""
    try:
        split_base_url(value)
    except ValueError:
        raise ValueError("should be http(s)://host[:port][/path]") from None
    return value


def path(value: str) -> str:
    """A file system path (a string: `pathlib` would cost every start about 5 ms of CPU)."""
    return value


def _number(value: str) -> float:
    """A finite decimal number written in ASCII (`30`, `1.5`, `1e3`)."""
    try:
        number = float(value) if value.isascii() else math.nan
    except ValueError:
        raise ValueError("should be a number") from None
    if not math.isfinite(number):
        raise ValueError("should be a finite number")
    return number


@value_object
class Seconds:
    """A duration: finite, above zero (or at least zero when `zero`), at most `most`. A value
    rather than a closure, so that the chart's values schema can read its bounds."""

    most: float
    zero: bool = False

    def __call__(self, value: str) -> float:
        number = _number(value)
        if number < 0 or (number == 0 and not self.zero):
            raise ValueError("should be at least 0" if self.zero else "should be greater than 0")
        if number > self.most:
            raise ValueError(f"should be at most {self.most:g}")
        return number


@value_object
class WholeNumber:
    """A count or a port from `least` to `most`. With `digits_only`, as the original parses
    it: `1.5` or `30s` is refused, not rounded."""

    least: int
    most: int
    digits_only: bool = False

    def __call__(self, value: str) -> int:
        if self.digits_only and not (value.isascii() and value.isdigit()):
            raise ValueError(
                f"should be digits only, a whole number from {self.least} to {self.most}"
            )
        if not _INTEGER.fullmatch(value):
            raise ValueError("should be a whole number")
        number = int(value.partition(".")[0])
        if not self.least <= number <= self.most:
            raise ValueError(f"should be from {self.least} to {self.most}")
        return number


def seconds(*, most: float, zero: bool = False) -> Reader:
    """A duration reader (`Seconds`)."""
    return Seconds(most=most, zero=zero)


def whole_number(*, least: int, most: int, digits_only: bool = False) -> Reader:
    """A count or port reader (`WholeNumber`)."""
    return WholeNumber(least=least, most=most, digits_only=digits_only)


def logging_formatter(value: str) -> str:
    """LOGGING_FORMATTER, lower-cased."""
    return check_formatter(value)


def filter_directive(value: str) -> str:
    """TRACING_FILTER_DIRECTIVE, checked as every brupop process checks it."""
    return check_directive(value)
