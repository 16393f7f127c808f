"""How every brupop process refuses a bad setting: one error type, one line, exit code 2.

The agent, the controller and the apiserver read their environment into pydantic models. Each
number is declared with `seconds` or `whole_number`, which make it finite and bounded above and
below, so that no value that passes start-up can overflow a clock or a timer later. Rules that
relate two settings raise `rule_broken` inside a model validator. `SettingsError.first_of`
turns pydantic's report into one line naming the variable, and `refuse_start` prints it.

Only pydantic is imported here (not pydantic-settings): the agent loads this module too.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from pydantic import Field, ValidationError
from pydantic_core import PydanticCustomError

from brupop.entrypoints.invocation import EXIT_BAD_SETTINGS

_RULE = "brupop_setting_rule"
_SHOWN_INPUT_CHARS = 80
_PROBLEM_MAX_CHARS = 400

# Upper bounds the processes share, documented in each component's doc.
ONE_MINUTE = 60.0
ONE_HOUR = 3600.0
ONE_DAY = 86_400.0
ONE_WEEK = 7 * ONE_DAY


class SettingsError(ValueError):
    """One setting holds a value the process cannot use; `variable` names it."""

    def __init__(self, variable: str, problem: str) -> None:
        super().__init__(f"{variable}: {problem}")
        self.variable = variable
        self.problem = problem

    @classmethod
    def first_of(cls, error: ValidationError) -> SettingsError:
        """The first problem pydantic found, as one line naming its variable."""
        detail: Any = error.errors(include_url=False)[0]
        if detail["type"] == _RULE:
            return cls(detail["ctx"]["variable"], detail["ctx"]["problem"])
        location = detail.get("loc", ())
        variable = str(location[0]) if location else "environment"
        if detail["type"] == "missing":
            return cls(variable, "required but not set")
        problem = str(detail.get("msg", "invalid value")).removeprefix("Value error, ")
        value = detail.get("input")
        if (
            isinstance(value, str)
            and len(value) <= _SHOWN_INPUT_CHARS
            and repr(value) not in problem
        ):
            problem = f"{problem} (got {value!r})"
        if len(problem) > _PROBLEM_MAX_CHARS:  # a validator may quote a huge value
            problem = problem[:_PROBLEM_MAX_CHARS] + "..."
        return cls(variable, problem)


def rule_broken(variable: str, problem: str) -> PydanticCustomError:
    """The error a cross-field rule raises from a model validator; it names `variable`."""
    return PydanticCustomError(
        _RULE, "{variable}: {problem}", {"variable": variable, "problem": problem}
    )


def refuse_start(process: str, error: SettingsError, stream: TextIO | None = None) -> int:
    """Say which setting is wrong on one line of stderr; the exit code for a bad setting."""
    print(f"brupop {process}: {error}", file=stream or sys.stderr)
    return EXIT_BAD_SETTINGS


def seconds(variable: str, default: float, *, most: float, zero: bool = False) -> Any:
    """A duration read from `variable`: finite, above zero (or at least zero), at most `most`."""
    if zero:
        return Field(default, alias=variable, ge=0, le=most, allow_inf_nan=False)
    return Field(default, alias=variable, gt=0, le=most, allow_inf_nan=False)


def whole_number(variable: str, default: int, *, least: int, most: int) -> Any:
    """A count or a port read from `variable`, from `least` to `most`."""
    return Field(default, alias=variable, ge=least, le=most)
