"""Reading one flag's text into a checked value, shared by every group of `brupop simulate` flags.

A value simulate cannot use raises OptionError, whose message names the flag (exit code 2).
"""

from __future__ import annotations

from brupop.cli.near_miss import did_you_mean

ONE_HOUR = 3600.0
ONE_DAY = 86_400.0


class OptionError(ValueError):
    """A flag holds a value simulate cannot use; the message names the flag."""


def read_integer(flag: str, raw: str, *, minimum: int, maximum: int) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"{flag}: {raw!r} is not an integer") from None
    if not minimum <= value <= maximum:
        raise OptionError(f"{flag}: {value} is outside {minimum}..{maximum}")
    return value


def read_seconds(flag: str, raw: str, *, allow_zero: bool = False, most: float = ONE_HOUR) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise OptionError(f"{flag}: {raw!r} is not a number of seconds") from None
    if value != value or value in (float("inf"), float("-inf")):
        raise OptionError(f"{flag}: {raw!r} is not a finite number of seconds")
    if value < 0 or (value == 0 and not allow_zero):
        raise OptionError(f"{flag}: {raw} must be {'>= 0' if allow_zero else '> 0'}")
    if value > most:
        raise OptionError(f"{flag}: {raw} is more than the {most:g} s a simulation allows")
    return value


def read_node(flag: str, name: str, names: list[str]) -> str:
    """A node the flag names, which must be one of this fleet's."""
    if name not in names:
        raise OptionError(
            f"{flag}: no node {name!r} in this fleet ({names[0]}..{names[-1]})"
            f"{did_you_mean(name, names)}"
        )
    return name
