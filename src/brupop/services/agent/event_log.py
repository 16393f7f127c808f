"""EventLog: the slice of a structlog logger the agent writes to (constant event, key-values)."""

from __future__ import annotations

from typing import Any, Protocol


class EventLog(Protocol):
    """Structured log lines by level; a structlog bound logger fits, and so does a test fake."""

    def debug(self, event: str, **fields: Any) -> Any: ...

    def info(self, event: str, **fields: Any) -> Any: ...

    def warning(self, event: str, **fields: Any) -> Any: ...

    def error(self, event: str, **fields: Any) -> Any: ...
