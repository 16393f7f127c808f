"""Records of the standard library's `logging` (uvicorn's, asyncio's) as structlog events.

Those libraries log through `logging`; with no handler configured, Python prints their warnings
as plain text, and errors with a multi-line traceback, into what is otherwise a stream of JSON
lines. `route_to_structlog` gives the named loggers one handler that re-emits every record as a
structlog event (the message, the logger's name, and for an error its exception as fields of the
same line), so the process writes nothing but its configured format.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterable
from typing import Any

import structlog


class StructlogHandler(logging.Handler):
    """Re-emits each record through structlog at the record's level."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            fields: dict[str, Any] = {"logger": record.name}
            if record.exc_info and record.exc_info[1] is not None:
                error = record.exc_info[1]
                fields["error"] = f"{type(error).__name__}: {error}"
                fields["exception"] = "".join(traceback.format_exception(error)).rstrip()
            message = record.getMessage().strip() or record.name
            structlog.get_logger(record.name).log(record.levelno, message, **fields)
        except Exception:  # logging must never raise into the code that logs
            self.handleError(record)


def route_to_structlog(names: Iterable[str], level: int) -> None:
    """Send the records of the loggers `names` (and their children) through structlog only."""
    handler = StructlogHandler()
    for name in names:
        logger = logging.getLogger(name)
        for old in list(logger.handlers):
            logger.removeHandler(old)
        logger.addHandler(handler)
        logger.setLevel(level)
        logger.propagate = False
