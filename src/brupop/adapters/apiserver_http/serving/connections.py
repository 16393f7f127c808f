"""Ending every connection during a shutdown, so the server never has to cut requests off.

uvicorn asks the connections it knows to close when it starts to stop, then waits for them all to
go. Over TLS a close waits for the client's reply (close_notify), which an agent that holds an
idle keep-alive connection never sends: uvicorn then waits out its grace limit, cancels what is
left and logs errors and tracebacks. `hang_up_lingering` runs during the shutdown and ends those
connections itself: it asks connections made after the shutdown began to close too, and aborts any
connection whose close has gone unanswered for `grace_seconds` (its answer, if any, was written).
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import Any

import structlog

CHECK_SECONDS = 0.05

log = structlog.get_logger(__name__)


async def hang_up_lingering(
    connections: Collection[Any], asked: set[Any], *, grace_seconds: float
) -> None:
    """Until cancelled: close `connections` not in `asked`, abort those closing for too long.

    `connections` is uvicorn's live set of connection protocols; `asked` the ones uvicorn itself
    asked to close.
    """
    loop = asyncio.get_running_loop()
    closing_since: dict[Any, float] = {}
    while True:
        now = loop.time()
        for connection in list(connections):
            transport = getattr(connection, "transport", None)
            if transport is None:
                continue
            if connection not in asked:
                asked.add(connection)
                connection.shutdown()  # idle: closes now; busy: closes after its answer
            if not transport.is_closing():
                continue
            since = closing_since.setdefault(connection, now)
            if now - since >= grace_seconds:
                log.debug("apiserver.connection_hung_up", waited_seconds=round(now - since, 2))
                transport.abort()
        await asyncio.sleep(CHECK_SECONDS)
