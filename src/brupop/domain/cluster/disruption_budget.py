"""How many pods a PodDisruptionBudget lets go: its counts, as a number or a percentage.

Kubernetes scales a percentage over the pods the budget expects and rounds up (for both
minAvailable and maxUnavailable), so `50%` of 3 pods keeps 2 available or lets 2 go.
"""

from __future__ import annotations

import math
import re

IntOrPercent = int | str
"""A PDB count as the API gives it: a whole number, or a percentage text such as `"50%"`."""

_PERCENT = re.compile(r"^(?P<value>[0-9]{1,3})%$")


def int_or_percent(value: object) -> IntOrPercent | None:
    """A count the API sent, kept when it is a non-negative number or a 0-100 percentage."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, str) and (match := _PERCENT.match(value)):
        return value if int(match["value"]) <= 100 else None
    return None


def scaled(count: IntOrPercent, expected: int) -> int:
    """`count` as a number of pods out of `expected`: a percentage scaled and rounded up."""
    if isinstance(count, int):
        return count
    match = _PERCENT.match(count)
    percent = int(match["value"]) if match else 100
    return math.ceil(percent * max(expected, 0) / 100)


def allows_one_more_gone(
    min_available: IntOrPercent | None,
    max_unavailable: IntOrPercent | None,
    *,
    selected: int,
    healthy: int,
) -> bool:
    """Evicting one more healthy pod keeps the budget: at least minAvailable stay healthy and
    at most maxUnavailable of the `selected` pods are not."""
    if min_available is not None and healthy - 1 < scaled(min_available, selected):
        return False
    unavailable = selected - healthy
    return max_unavailable is None or unavailable + 1 <= scaled(max_unavailable, selected)
