"""Logging for every brupop process: structlog, JSON lines off a terminal, readable lines on one.

Every line carries the component and the node name. Logs go to stderr so that commands whose
stdout is data (`brupop crd`, `brupop status -o json`) stay clean.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import structlog

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


def configure_logging(
    component: str,
    node_name: str | None = None,
    *,
    formatter: str | None = None,
    level: int | None = None,
    stream: Any = None,
) -> structlog.stdlib.BoundLogger:
    """Set structlog up once for this process and return a logger bound to component and node."""
    formatter = (formatter or os.environ.get("LOGGING_FORMATTER") or "auto").lower()
    if formatter not in _FORMATTERS:
        raise LoggingSettingError(
            f"LOGGING_FORMATTER: {formatter!r} is not one of {', '.join(_FORMATTERS)}"
        )
    if level is None:
        level = log_level_from(os.environ.get("TRACING_FILTER_DIRECTIVE", "info"))
    out = stream if stream is not None else sys.stderr
    on_terminal = bool(getattr(out, "isatty", lambda: False)())
    as_json = formatter == "json" or (formatter == "auto" and not on_terminal)
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(
            colors=on_terminal, exception_formatter=structlog.dev.plain_traceback
        )
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info if as_json else _identity,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=out),
        cache_logger_on_first_use=True,
    )
    bound: structlog.stdlib.BoundLogger = structlog.get_logger().bind(component=component)
    if node_name:
        bound = bound.bind(node=node_name)
    return bound


def _identity(_logger: Any, _name: str, event: Any) -> Any:
    return event
