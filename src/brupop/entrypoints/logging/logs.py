"""Logging for every brupop process: structlog, JSON lines off a terminal, readable lines on one.

Every line carries the component and the node name. Logs go to stderr so that commands whose
stdout is data (`brupop crd`, `brupop status -o json`) stay clean.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import structlog

from brupop.entrypoints.logging.log_filter import OFF, LogFilter
from brupop.entrypoints.logging.log_settings import writes_json


def start_logging(
    component: str, node_name: str | None, *, formatter: str, directive: str
) -> structlog.stdlib.BoundLogger:
    """Configure logging from the (already checked) settings; say once which parts of the
    directive this process has no use for."""
    log_filter = LogFilter.parse(directive, component)
    log = configure_logging(component, node_name, formatter=formatter, level=log_filter.level)
    if log_filter.unused:
        log.warning("logging.directive_parts_unused", unused=list(log_filter.unused))
    return log


def configure_logging(
    component: str,
    node_name: str | None = None,
    *,
    formatter: str | None = None,
    level: int | None = None,
    stream: Any = None,
) -> structlog.stdlib.BoundLogger:
    """Set structlog up once for this process and return a logger bound to component and node."""
    silent = level is not None and level >= OFF
    level = logging.INFO if level is None else min(level, logging.CRITICAL)
    out = stream if stream is not None else sys.stderr
    on_terminal = bool(getattr(out, "isatty", lambda: False)())
    as_json = writes_json(formatter, on_terminal=on_terminal)
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if as_json
        else structlog.dev.ConsoleRenderer(
            colors=on_terminal, exception_formatter=structlog.dev.plain_traceback
        )
    )
    structlog.configure(
        processors=[
            *((_drop,) if silent else ()),
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


def _drop(_logger: Any, _name: str, _event: Any) -> Any:
    # TRACING_FILTER_DIRECTIVE=off: no line at all, as the original.
    raise structlog.DropEvent
