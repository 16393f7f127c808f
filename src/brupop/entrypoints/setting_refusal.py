"""How every brupop process refuses a bad setting: one error type, one line, exit code 2.

Plain Python, so that the agent, which reads its settings by hand, refuses them as the
controller and the apiserver do without loading pydantic. `SettingsError.first_of` reads the
report of a pydantic ValidationError (passed in; pydantic is not imported here), and
`settings_error` holds the pydantic side: bounded fields and rules across settings.
"""

from __future__ import annotations

import sys

from brupop.entrypoints.invocation import EXIT_BAD_SETTINGS

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:  # the protocol is for the type checker: nothing checks it at run time
    from typing import Any, Protocol, TextIO

    class ValidationReport(Protocol):
        """What a pydantic ValidationError tells: its problems, first to last."""

        def errors(self, *, include_url: bool = ...) -> Any:
            """The problems as dictionaries (type, loc, msg, input, ctx)."""
            ...


RULE_ERROR_TYPE = "brupop_setting_rule"
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
    def first_of(cls, error: ValidationReport) -> SettingsError:
        """The first problem pydantic found, as one line naming its variable."""
        detail: Any = error.errors(include_url=False)[0]
        if detail["type"] == RULE_ERROR_TYPE:
            return cls(detail["ctx"]["variable"], detail["ctx"]["problem"])
        location = detail.get("loc", ())
        variable = str(location[0]) if location else "environment"
        if detail["type"] == "missing":
            return cls(variable, "required but not set")
        problem = str(detail.get("msg", "invalid value")).removeprefix("Value error, ")
        return cls.of_value(variable, problem, detail.get("input"))

    @classmethod
    def of_value(cls, variable: str, problem: str, value: object) -> SettingsError:
        """`variable` holds `value`, which has `problem`: the value is quoted when short."""
        if (
            isinstance(value, str)
            and len(value) <= _SHOWN_INPUT_CHARS
            and repr(value) not in problem
        ):
            problem = f"{problem} (got {value!r})"
        if len(problem) > _PROBLEM_MAX_CHARS:  # a validator may quote a huge value
            problem = problem[:_PROBLEM_MAX_CHARS] + "..."
        return cls(variable, problem)


def refuse_start(process: str, error: SettingsError, stream: TextIO | None = None) -> int:
    """Say which setting is wrong on one line of stderr; the exit code for a bad setting."""
    print(f"brupop {process}: {error}", file=stream or sys.stderr)
    return EXIT_BAD_SETTINGS
