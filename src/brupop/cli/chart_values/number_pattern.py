"""A regular expression for the whole numbers from `low` to `high`, written as text.

The chart keeps the original's numbers-as-strings, and JSON schema bounds (`minimum`,
`maximum`) apply only to numbers, so a string's range must be its pattern. The expression uses
only what both Go's RE2 (Helm's validator) and ECMA-262 accept: no look-around.
"""

from __future__ import annotations


def whole_number_pattern(low: int, high: int, *, empty: bool = False) -> str:
    """`^...$` matching the decimal numbers `low`..`high` (leading zeros allowed), and the
    empty text too when `empty`."""
    if not 0 <= low <= high:
        raise ValueError(f"no whole numbers from {low} to {high}")
    alternatives: list[str] = []
    for digits in range(len(str(low)), len(str(high)) + 1):
        first = max(low, 10 ** (digits - 1) if digits > 1 else 0)
        last = min(high, 10**digits - 1)
        alternatives.extend(_same_length(str(first), str(last)))
    optional = "?" if empty else ""
    return f"^(?:0*(?:{'|'.join(alternatives)})){optional}$"


def _same_length(low: str, high: str) -> list[str]:
    """Alternatives matching `low`..`high`, both of the same number of digits."""
    if low == high:
        return [low]
    if len(low) == 1:
        return [f"[{low}-{high}]"]
    if low[0] == high[0]:
        return [low[0] + _group(_same_length(low[1:], high[1:]))]
    rest = len(low) - 1
    first, last = int(low[0]), int(high[0])
    parts: list[str] = []
    if low[1:] != "0" * rest:
        parts.append(low[0] + _group(_same_length(low[1:], "9" * rest)))
        first += 1
    tail = None
    if high[1:] != "9" * rest:
        tail = high[0] + _group(_same_length("0" * rest, high[1:]))
        last -= 1
    if first <= last:
        digit = str(first) if first == last else f"[{first}-{last}]"
        parts.append(f"{digit}[0-9]{{{rest}}}")
    if tail is not None:
        parts.append(tail)
    return parts


def _group(alternatives: list[str]) -> str:
    return alternatives[0] if len(alternatives) == 1 else f"(?:{'|'.join(alternatives)})"
