"""EventLines: the agent's structured log, one line per event, without a logging framework.

The agent writes what the other processes write through structlog (an event name, key-values,
the level, an ISO UTC timestamp; JSON off a terminal), but structlog loads `rich` whenever it is
installed, and with it several MiB the agent never uses. So the agent and the adapters it runs
(apiclient, the apiserver client) log through this small writer instead.

`configure` sets the process-wide output once; loggers taken before it follow it.
"""

from __future__ import annotations

import json
import sys
import threading
from datetime import UTC, datetime

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:
    from typing import Any, TextIO

DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40
_LEVEL_NAMES = {DEBUG: "debug", INFO: "info", WARNING: "warning", ERROR: "error"}


class _Output:
    """Where lines go and which pass: one per process, shared by every logger. A plain class:
    a dataclass would compile its methods at every agent start (about 1 ms of CPU)."""

    def __init__(self) -> None:
        self.stream: TextIO | None = None  # None: the process's stderr at the time of writing
        self.level = INFO
        self.as_json = True
        self.context: dict[str, Any] = {}
        self.lock = threading.Lock()


_output = _Output()


def configure(
    *, level: int, as_json: bool, stream: TextIO | None = None, **context: Any
) -> EventLines:
    """Set this process's output once; `context` (component, node) goes on every line."""
    _output.stream, _output.level, _output.as_json = stream, level, as_json
    _output.context = dict(context)
    return EventLines()


def get_logger(_name: str | None = None) -> EventLines:
    """A logger writing to the process's output (the name is accepted as structlog's is)."""
    return EventLines()


class EventLines:
    """Structured lines by level: `log.info("event.name", key=value)`."""

    def __init__(self, fields: dict[str, Any] | None = None) -> None:
        self._fields = fields or {}

    def bind(self, **fields: Any) -> EventLines:
        return EventLines({**self._fields, **fields})

    def debug(self, event: str, **fields: Any) -> None:
        self._write(DEBUG, event, fields)

    def info(self, event: str, **fields: Any) -> None:
        self._write(INFO, event, fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._write(WARNING, event, fields)

    def error(self, event: str, **fields: Any) -> None:
        self._write(ERROR, event, fields)

    def _write(self, level: int, event: str, fields: dict[str, Any]) -> None:
        if level < _output.level:
            return
        record = {"event": event, **_output.context, **self._fields, **fields}
        if record.pop("exc_info", False):
            # Imported for a traceback only: with textwrap it costs every agent start about 3 ms.
            import traceback

            record["exception"] = traceback.format_exc().rstrip()
        record["level"] = _LEVEL_NAMES[level]
        record["timestamp"] = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        line = _as_json(record) if _output.as_json else _as_text(record)
        stream = _output.stream or sys.stderr
        with _output.lock:
            stream.write(line + "\n")
            stream.flush()


def _as_json(record: dict[str, Any]) -> str:
    return json.dumps(record, default=repr)


def _as_text(record: dict[str, Any]) -> str:
    """`timestamp [level] event key=value ...`, and a traceback below when there is one."""
    rest = dict(record)
    head = f"{rest.pop('timestamp')} [{rest.pop('level'):<7}] {rest.pop('event')}"
    exception = rest.pop("exception", None)
    pairs = " ".join(f"{key}={value}" for key, value in rest.items())
    text = f"{head:<60} {pairs}" if pairs else head
    return f"{text}\n{exception}" if exception else text
