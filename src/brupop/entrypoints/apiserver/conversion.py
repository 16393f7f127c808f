"""`POST /crdconvert`, the CRD conversion webhook: no token (the kube-apiserver calls it), so it is
bounded on every side.

A review's body is capped (413), must arrive within a time bound (408), and only a few reviews are
read and converted at once; a few more may wait, the rest are refused with 503 at once. Parsing,
converting and writing the answer run on worker threads of their own, so a flood of big reviews
never holds the event loop that answers `/ping` and the agents.
"""

from __future__ import annotations

import json

import anyio
import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from brupop.domain.conversion import convert_review
from brupop.entrypoints.apiserver.requests import parse_json, read_body
from brupop.entrypoints.apiserver.wire import error_response

# A ConversionReview of a list of every shadow of a 5,000-node cluster is about 4 MB (a shadow is
# under 800 bytes of JSON); 6 MiB leaves room for annotations and the conversion stash.
CONVERSION_BODY_LIMIT = 6 * 1024 * 1024
# Parsing a 6 MiB review takes tens of MiB of Python objects: two at once stay well within the
# apiserver's 256Mi limit, and one slow client cannot hold the webhook alone.
CONVERSIONS_AT_ONCE = 2
CONVERSIONS_WAITING = 8
REVIEW_BODY_SECONDS = 10.0


class ConversionRoute:
    """The `/crdconvert` endpoint; its gate and threads are made on first use, inside the loop."""

    def __init__(
        self,
        *,
        body_limit: int = CONVERSION_BODY_LIMIT,
        at_once: int = CONVERSIONS_AT_ONCE,
        waiting: int = CONVERSIONS_WAITING,
        body_seconds: float = REVIEW_BODY_SECONDS,
    ) -> None:
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
            answer = await anyio.to_thread.run_sync(_answer, body, limiter=threads)
        return Response(answer, media_type="application/json")

    def _bounds(self) -> tuple[anyio.Semaphore, anyio.CapacityLimiter]:
        if self._gate is None or self._threads is None:
            self._gate = anyio.Semaphore(self._at_once)
            self._threads = anyio.CapacityLimiter(self._at_once)
        return self._gate, self._threads


def _answer(body: bytes) -> bytes:
    """The ConversionReview answering the one in `body` (BadRequestError if it is not JSON)."""
    review = parse_json(body)
    return json.dumps(convert_review(review), separators=(",", ":")).encode()
