"""How every brupop process refuses a bad setting: one error type, one line, exit code 2.

The controller and the apiserver read their environment into pydantic models. Each
number is declared with `seconds` or `whole_number`, which make it finite and bounded above and
below, so that no value that passes start-up can overflow a clock or a timer later. Rules that
relate two settings raise `rule_broken` inside a model validator. `SettingsError.first_of`
turns pydantic's report into one line naming the variable, and `refuse_start` prints it.

Only pydantic is imported here (not pydantic-settings). The agent reads its settings by hand
and refuses them through `setting_refusal`, which this module re-exports.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field
from pydantic_core import PydanticCustomError

from brupop.entrypoints.setting_refusal import (  # re-exported: every settings module's home
    ONE_DAY,
    ONE_HOUR,
    ONE_MINUTE,
    ONE_WEEK,
    RULE_ERROR_TYPE,
    SettingsError,
    refuse_start,
)

__all__ = [
    "ONE_DAY",
    "ONE_HOUR",
    "ONE_MINUTE",
    "ONE_WEEK",
    "SettingsError",
    "refuse_start",
    "rule_broken",
    "seconds",
    "whole_number",
]


def rule_broken(variable: str, problem: str) -> PydanticCustomError:
    """The error a cross-field rule raises from a model validator; it names `variable`."""
    return PydanticCustomError(
        RULE_ERROR_TYPE, "{variable}: {problem}", {"variable": variable, "problem": problem}
    )


def seconds(variable: str, default: float, *, most: float, zero: bool = False) -> Any:
    """A duration read from `variable`: finite, above zero (or at least zero), at most `most`."""
    if zero:
        return Field(default, alias=variable, ge=0, le=most, allow_inf_nan=False)
    return Field(default, alias=variable, gt=0, le=most, allow_inf_nan=False)


def whole_number(variable: str, default: int, *, least: int, most: int) -> Any:
    """A count or a port read from `variable`, from `least` to `most`."""
    return Field(default, alias=variable, ge=least, le=most)
