"""Kubernetes resource quantities ("250m", "1.5", "512Mi", "1G", "1e3"), read exactly.

The grammar is the API's: an optionally signed decimal number, then one suffix: a binary one
(Ki Mi Gi Ti Pi Ei), a decimal one (n u m "" k M G T P E) or a decimal exponent (e3, E-2). The
value is an exact Fraction, so "0.1" CPU is 100 millicores and not 99.999...; requests are
rounded up to whole millicores or bytes, as the scheduler does. Input is bounded (length and
exponent), so a hostile text costs nothing; anything else is a QuantityError.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from brupop.domain.errors import DomainError

MAX_QUANTITY_LENGTH = 64
MAX_EXPONENT = 30  # the largest |power of ten| a quantity may carry (Exa is 10^18)

_NUMBER = re.compile(r"^(?P<sign>[+-]?)(?P<int>\d*)(?:\.(?P<frac>\d*))?(?P<suffix>.*)$")
_EXPONENT = re.compile(r"^[eE](?P<exp>[+-]?\d{1,3})$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


class QuantityError(DomainError, ValueError):
    """A text that is not a Kubernetes quantity (or one too long or too large to be real)."""


def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity: "250m" is 1/4, "1Ki" is 1024, "1e3" is 1000."""
    if not isinstance(text, str) or not text or len(text) > MAX_QUANTITY_LENGTH:
        raise QuantityError(f"not a quantity: {str(text)[:MAX_QUANTITY_LENGTH]!r}")
    match = _NUMBER.match(text)
    digits = (match["int"] or "") + (match["frac"] or "") if match else ""
    if match is None or not digits:
        raise QuantityError(f"not a quantity: {text!r}")
    frac = match["frac"] or ""
    number = Fraction(int(digits), 10 ** len(frac))
    if match["sign"] == "-":
        number = -number
    return number * _multiplier(match["suffix"], text)


def _multiplier(suffix: str, text: str) -> Fraction:
    if suffix in _BINARY:
        return Fraction(1024 ** _BINARY[suffix])
    if suffix in _DECIMAL:
        return Fraction(10) ** _DECIMAL[suffix]
    exponent = _EXPONENT.match(suffix)
    if exponent is None:
        raise QuantityError(f"unknown suffix {suffix[:8]!r} in quantity {text!r}")
    power = int(exponent["exp"])
    if abs(power) > MAX_EXPONENT:
        raise QuantityError(f"exponent out of range in quantity {text!r}")
    return Fraction(10) ** power


def cpu_millis(text: str) -> int:
    """CPU as whole millicores, rounded up ("250m" is 250, "1.5" is 1500, "1n" is 1)."""
    return _non_negative(math.ceil(parse_quantity(text) * 1000), text)


def memory_bytes(text: str) -> int:
    """Memory as whole bytes, rounded up ("512Mi" is 536870912, "1G" is 10^9)."""
    return _non_negative(math.ceil(parse_quantity(text)), text)


def _non_negative(value: int, text: str) -> int:
    if value < 0:
        raise QuantityError(f"a resource amount cannot be negative: {text!r}")
    return value
