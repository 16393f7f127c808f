"""Logging for every brupop process: structlog, JSON lines off a terminal, readable lines on one.

Every line carries the component and the node name. Logs go to stderr so that commands whose
stdout is data (`brupop crd`, `brupop status -o json`) stay clean.
"""

from __future__ import annotations

import sys
from typing import Any

import structlog

from brupop.entrypoints.log_settings import (
    LoggingSettingError,
    configured_level,
    log_level_from,
    writes_json,
)

__all__ = ["LoggingSettingError", "configure_logging", "log_level_from"]


def configure_logging(
    component: str,
    node_name: str | None = None,
    *,
    formatter: str | None = None,
    level: int | None = None,
    stream: Any = None,
) -> structlog.stdlib.BoundLogger:
    """Set structlog up once for this process and return a logger bound to component and node."""
    out = stream if stream is not None else sys.stderr
    on_terminal = bool(getattr(out, "isatty", lambda: False)())
    as_json = writes_json(formatter, on_terminal=on_terminal)
    if level is None:
        level = configured_level()
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
