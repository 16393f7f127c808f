"""The two logging settings every brupop process reads: LOGGING_FORMATTER, TRACING_FILTER_DIRECTIVE.

Kept apart from `logs` (which configures structlog) so that the agent, which writes its lines
without structlog, reads them the same way without loading it.
"""

from __future__ import annotations

import logging
import os

_LEVELS = {
    "trace": logging.DEBUG,
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warn": logging.WARNING,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}
_FORMATTERS = ("auto", "json", "pretty", "full", "compact")


class LoggingSettingError(ValueError):
    """LOGGING_FORMATTER or TRACING_FILTER_DIRECTIVE holds a value brupop cannot use."""


def log_level_from(directive: str) -> int:
    """The level of a tracing-style directive (`info`, `brupop=debug,info`): the default part."""
    default = "info"
    for part in directive.split(","):
        part = part.strip().lower()
        if part and "=" not in part:
            default = part
    if default not in _LEVELS:
        raise LoggingSettingError(
            f"TRACING_FILTER_DIRECTIVE: unknown level {default!r}; use one of {sorted(_LEVELS)}"
        )
    return _LEVELS[default]


def writes_json(formatter: str | None = None, *, on_terminal: bool) -> bool:
    """JSON lines or readable ones, from `formatter` or LOGGING_FORMATTER (checked here)."""
    formatter = (formatter or os.environ.get("LOGGING_FORMATTER") or "auto").lower()
    if formatter not in _FORMATTERS:
        raise LoggingSettingError(
            f"LOGGING_FORMATTER: {formatter!r} is not one of {', '.join(_FORMATTERS)}"
        )
    return formatter == "json" or (formatter == "auto" and not on_terminal)


def configured_level() -> int:
    """The level TRACING_FILTER_DIRECTIVE asks for (info when unset)."""
    return log_level_from(os.environ.get("TRACING_FILTER_DIRECTIVE", "info"))
