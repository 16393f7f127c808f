"""`POST /crdconvert`, the CRD conversion webhook: no token (the kube-apiserver calls it), so it is
bounded on every side.

A review's body is capped (413) and must arrive within a time bound (408). Two reviews are taken
in at once (so one slow sender cannot hold the webhook alone) and one is converted at a time; a
few more may wait, the rest are refused with 503 at once. Parsing, converting and writing the
answer run in the conversion worker, a process of its own (see `conversion_process`): this
process only moves the bytes, so a flood of big reviews never holds the event loop (nor the GIL)
that answers `/ping` and the agents.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from brupop.entrypoints.apiserver.conversion.worker_process import (
    CONVERSION_BODY_LIMIT,
    ConversionFailedError,
)
from brupop.entrypoints.apiserver.routes.requests import read_body
from brupop.entrypoints.apiserver.routes.wire import error_response

__all__ = ["CONVERSION_BODY_LIMIT", "ConversionRoute", "Converter"]

# The worker converts one review at a time (a 6 MiB review takes it about 95 MiB at its peak).
CONVERSIONS_AT_ONCE = 1
REVIEWS_AT_ONCE = 2
REVIEWS_WAITING = 8
REVIEW_BODY_SECONDS = 10.0
# The answer goes out in pieces: the event loop encrypts one at a time, between other requests,
# and the transport never holds more than a piece or two of encrypted bytes.
ANSWER_PIECE_BYTES = 256 * 1024


class Converter(Protocol):
    """What the route needs of the worker (`ConversionWorker`): an answer or a
    ConversionFailedError, blocking."""

    def convert(self, body: bytes) -> bytes: ...


class ConversionRoute:
    """The `/crdconvert` endpoint; its gate and threads are made on first use, inside the loop."""

    def __init__(
        self,
        worker: Converter,
        *,
        body_limit: int = CONVERSION_BODY_LIMIT,
        at_once: int = REVIEWS_AT_ONCE,
        waiting: int = REVIEWS_WAITING,
        body_seconds: float = REVIEW_BODY_SECONDS,
    ) -> None:
        self._worker = worker
        self._body_limit = body_limit
        self._at_once = at_once
        self._waiting = waiting
        self._body_seconds = body_seconds
        self._gate: anyio.Semaphore | None = None
        self._threads: anyio.CapacityLimiter | None = None

    async def answer(self, request: Request) -> Response:
        """The answer to one review, or a short refusal."""
        gate, threads = self._bounds()
        if gate.value == 0 and gate.statistics().tasks_waiting >= self._waiting:
            return error_response(503, "too many conversions in progress; retry")
        async with gate:
            body: bytes | None = None
            with anyio.move_on_after(self._body_seconds):
                body = await read_body(request, self._body_limit)
            if body is None:
                return error_response(408, "the review was not received in time")
            try:
                answer = await anyio.to_thread.run_sync(self._worker.convert, body, limiter=threads)
            except ConversionFailedError as error:
                return error_response(error.status, str(error))
        return StreamingResponse(
            _pieces(answer),
            media_type="application/json",
            headers={"content-length": str(len(answer))},
        )

    def _bounds(self) -> tuple[anyio.Semaphore, anyio.CapacityLimiter]:
        if self._gate is None or self._threads is None:
            self._gate = anyio.Semaphore(self._at_once)
            self._threads = anyio.CapacityLimiter(CONVERSIONS_AT_ONCE)
        return self._gate, self._threads


async def _pieces(answer: bytes) -> AsyncIterator[memoryview]:
    view = memoryview(answer)
    for start in range(0, len(view), ANSWER_PIECE_BYTES):
        yield view[start : start + ANSWER_PIECE_BYTES]
