"""EventLog: the slice of a structlog logger the agent writes to (constant event, key-values)."""

from __future__ import annotations

TYPE_CHECKING = False  # keep `typing` out of the agent's start
if TYPE_CHECKING:  # a protocol for the type checker: nothing checks it at run time, so the
    # agent's modules import it under TYPE_CHECKING and this module is not loaded at its start
    from typing import Any, Protocol

    class EventLog(Protocol):
        """Structured log lines by level; a structlog bound logger fits, and so does a fake."""

        def debug(self, event: str, **fields: Any) -> Any: ...

        def info(self, event: str, **fields: Any) -> Any: ...

        def warning(self, event: str, **fields: Any) -> Any: ...

        def error(self, event: str, **fields: Any) -> Any: ...
