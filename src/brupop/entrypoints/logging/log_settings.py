"""The two logging settings every brupop process reads: LOGGING_FORMATTER, TRACING_FILTER_DIRECTIVE.

Kept apart from `logs` (which configures structlog) so that the agent, which writes its lines
without structlog, checks and applies them the same way without loading it.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator

from brupop.entrypoints.logging.log_filter import check_directive

FORMATTERS = ("auto", "json", "pretty", "full", "compact")


def check_formatter(value: str) -> str:
    """LOGGING_FORMATTER, lower-cased; ValueError when it is not one brupop knows."""
    formatter = value.strip().lower()
    if formatter not in FORMATTERS:
        raise ValueError(f"{value!r} is not one of {', '.join(FORMATTERS)}")
    return formatter


def writes_json(formatter: str | None, *, on_terminal: bool) -> bool:
    """JSON lines or readable ones: `json` always, `auto` (the default) off a terminal."""
    checked = check_formatter(formatter or "auto")
    return checked == "json" or (checked == "auto" and not on_terminal)


# Checked with each process's other settings at start.
LoggingFormatter = Annotated[str, AfterValidator(check_formatter)]
FilterDirective = Annotated[str, AfterValidator(check_directive)]
