"""`POST /crdconvert`, the CRD conversion webhook: no token (the kube-apiserver calls it), so it is
bounded on every side, and a shadow's review is never stuck behind big ones.

A review's body is capped (413) and must arrive within a time bound (408). Reviews are of two
sizes, by their declared length: small ones (up to one shadow's bound, as kube-apiserver sends
them, one object each) and the rest. Each size has its own places (reviews read or converted at
once) and a few waiting places; past them the next is refused with 503 at once, so big reviews
never take a small one's place. The worker converts one review at a time and takes the next in
rank order: small before big, then the caller with fewer reviews of its own in, then the earlier.
A one-shadow review thus waits for at most the conversion in progress and the small reviews
ahead of it. When the server begins to stop, reviews still waiting are answered 503 at once
(kube-apiserver asks the other replica); the one converting finishes.

A review of one shadow is converted in this process (under a millisecond); a larger one in the
conversion worker, a process of its own (see `conversion.by_size`), where this process only moves
the bytes, so a flood of big reviews never holds the event loop (nor the GIL) that answers
`/ping` and the agents.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

import anyio
import structlog
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.types import Receive

from brupop.adapters.apiserver_http.conversion.review_bounds import SMALL_REVIEW_BYTES
from brupop.adapters.apiserver_http.conversion.worker_process import (
    CONVERSION_BODY_LIMIT,
    ConversionFailedError,
)
from brupop.adapters.apiserver_http.routes.closing import Closing
from brupop.adapters.apiserver_http.routes.conversion_turns import Turns, granted
from brupop.adapters.apiserver_http.routes.requests import BadRequestError, read_body
from brupop.adapters.apiserver_http.routes.wire import error_response
from brupop.adapters.apiserver_http.routes.worker_threads import on_worker_thread

__all__ = ["CONVERSION_BODY_LIMIT", "SMALL_REVIEW_BYTES", "ConversionRoute", "Converter", "Places"]

log = structlog.get_logger(__name__)

REVIEW_BODY_SECONDS = 10.0
# The longest a review waits for its place or its turn at the worker before a 503 ("retry").
REVIEW_WAIT_SECONDS = 10.0
# The answer goes out in pieces: the event loop encrypts one at a time, between other requests,
# and the transport never holds more than a piece or two of encrypted bytes.
ANSWER_PIECE_BYTES = 256 * 1024
BUSY = "too many conversions in progress; retry"
STOPPING = "the apiserver is stopping; retry"


@dataclass(frozen=True)
class Places:
    """Reviews of one size read or converted at once, and how many more may wait to be read."""

    at_once: int
    waiting: int


# Big reviews hold at most two bodies in memory here, small ones at most 16 (about 1 MiB).
BIG_PLACES = Places(at_once=2, waiting=4)
SMALL_PLACES = Places(at_once=16, waiting=16)


class Converter(Protocol):
    """What the route needs of the worker (`ConversionWorker`): an answer or a
    ConversionFailedError, blocking."""

    def convert(self, body: bytes) -> bytes: ...


@dataclass
class _Size:
    """One size of reviews: its rank at the worker, body limit, places and their turns."""

    rank: int
    limit: int
    places: Places
    turns: Turns

    def full(self) -> bool:
        return not self.turns.free() and self.turns.waiting() >= self.places.waiting


class ConversionRoute:
    """The `/crdconvert` endpoint; its thread limiter is made on first use, inside the loop."""

    def __init__(
        self,
        worker: Converter,
        *,
        closing: Closing,
        body_limit: int = CONVERSION_BODY_LIMIT,
        small: Places = SMALL_PLACES,
        big: Places = BIG_PLACES,
        body_seconds: float = REVIEW_BODY_SECONDS,
        wait_seconds: float = REVIEW_WAIT_SECONDS,
    ) -> None:
        self._worker = worker
        self._closing = closing
        self._small = _Size(0, min(SMALL_REVIEW_BYTES, body_limit), small, Turns(small.at_once))
        self._big = _Size(1, body_limit, big, Turns(big.at_once))
        self._body_seconds = body_seconds
        self._wait_seconds = wait_seconds
        self._worker_turns = Turns(1)
        self._thread: anyio.CapacityLimiter | None = None
        self._held: Counter[str] = Counter()  # reviews in, per caller address
        self.refused = 0
        """Reviews the worker refused as bad input (logged the first time, then every 1,000th)."""

    def waiting_for_worker(self) -> int:
        """How many reviews, read, wait for their turn at the worker (for tests and metrics)."""
        return self._worker_turns.waiting()

    def waiting_for_place(self) -> int:
        """How many reviews, not yet read, wait for a place to be taken in (for tests)."""
        return self._small.turns.waiting() + self._big.turns.waiting()

    async def answer(self, request: Request) -> Response:
        """The answer to one review, or a short refusal."""
        if self._closing.closed:
            return error_response(503, STOPPING)
        size = self._size_of(request)
        if size.full():
            return error_response(503, BUSY)
        source = request.client.host if request.client is not None else ""
        if not await self._turn(size.turns, (0,)):
            return self._not_served()
        self._held[source] += 1
        try:
            return await self._converted(request, size, self._held[source] - 1)
        finally:
            self._held[source] -= 1
            if not self._held[source]:
                del self._held[source]
            size.turns.leave()

    async def _converted(self, request: Request, size: _Size, others_in: int) -> Response:
        try:
            body = await read_body(request, size.limit, self._body_seconds)
        except BadRequestError as refused:  # too large, cut short, or not in time
            return error_response(refused.status, str(refused))
        worker_turns = self._worker_turns
        if not await self._turn(worker_turns, (size.rank, others_in), request.receive):
            return self._not_served()
        try:
            answer = await on_worker_thread(self._worker.convert, body, limiter=self._one_thread())
        except ConversionFailedError as error:
            if error.status < 500:
                self.refused += 1
                if self.refused == 1 or self.refused % 1000 == 0:
                    log.info(
                        "conversion.refused",
                        status=error.status,
                        reason=str(error),
                        refused=self.refused,
                    )
            return error_response(error.status, str(error))
        finally:
            worker_turns.leave()
        return StreamingResponse(
            _pieces(answer),
            media_type="application/json",
            headers={"content-length": str(len(answer))},
        )

    async def _turn(
        self, turns: Turns, rank: tuple[int, ...], receive: Receive | None = None
    ) -> bool:
        """Wait for a place at `turns`: True once held (the caller leaves it), False when the
        server began to stop or the wait was too long. ClientGoneError if the caller hung up."""
        entry = turns.enter(rank)
        held = False
        try:
            held, _ = await self._closing.race(entry, self._wait_seconds, receive=receive)
            return held
        finally:
            if not held and granted(entry):  # given the place as it stopped waiting
                turns.leave()

    def _not_served(self) -> Response:
        return error_response(503, STOPPING if self._closing.closed else BUSY)

    def _size_of(self, request: Request) -> _Size:
        declared = request.headers.get("content-length", "")
        fits = declared.isdigit() and len(declared) <= 18 and int(declared) <= self._small.limit
        return self._small if fits else self._big

    def _one_thread(self) -> anyio.CapacityLimiter:
        if self._thread is None:
            self._thread = anyio.CapacityLimiter(1)
        return self._thread


async def _pieces(answer: bytes) -> AsyncIterator[memoryview]:
    view = memoryview(answer)
    for start in range(0, len(view), ANSWER_PIECE_BYTES):
        yield view[start : start + ANSWER_PIECE_BYTES]
