"""`POST /crdconvert`, the CRD conversion webhook: no token (the kube-apiserver calls it), so it is
bounded on every side.

A review's body is capped (413) and must arrive within a time bound (408). Two reviews are taken
in at once (so one slow sender cannot hold the webhook alone) and one is converted at a time; a
few more may wait, the rest are refused with 503 at once. Parsing, converting and writing the
answer run on a worker thread of their own, so a flood of big reviews never holds the event loop
that answers `/ping` and the agents.
"""

from __future__ import annotations

import json
from typing import Any

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
# Converting a 6 MiB review takes about 95 MiB at its peak: one at a time keeps the apiserver
# well within its 256Mi limit.
CONVERSIONS_AT_ONCE = 1
REVIEWS_AT_ONCE = 2
REVIEWS_WAITING = 8
REVIEW_BODY_SECONDS = 10.0


class ConversionRoute:
    """The `/crdconvert` endpoint; its gate and threads are made on first use, inside the loop."""

    def __init__(
        self,
        *,
        body_limit: int = CONVERSION_BODY_LIMIT,
        at_once: int = REVIEWS_AT_ONCE,
        waiting: int = REVIEWS_WAITING,
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
            answer = await anyio.to_thread.run_sync(answer_to, body, limiter=threads)
        return Response(answer, media_type="application/json")

    def _bounds(self) -> tuple[anyio.Semaphore, anyio.CapacityLimiter]:
        if self._gate is None or self._threads is None:
            self._gate = anyio.Semaphore(self._at_once)
            self._threads = anyio.CapacityLimiter(CONVERSIONS_AT_ONCE)
        return self._gate, self._threads


def answer_to(body: bytes) -> bytes:
    """The ConversionReview answering the one in `body` (BadRequestError if it is not JSON).

    The thread holds the GIL for as long as one C call runs, and freeing or writing a list of
    thousands of objects at once is one such call of a hundred milliseconds and more; so the
    objects are freed and written one at a time, and the event loop gets its turn in between.
    """
    review = parse_json(body)
    answer = convert_review(review)
    _free_objects(review)
    return _dump(answer)


def _free_objects(review: Any) -> None:
    request = review.get("request") if isinstance(review, dict) else None
    objects = request.get("objects") if isinstance(request, dict) else None
    while isinstance(objects, list) and objects:
        objects.pop()


def _dump(answer: dict[str, Any]) -> bytes:
    """`answer` as compact JSON, its converted objects written (and freed) one by one."""
    response = dict(answer["response"])
    objects: list[Any] = response.pop("convertedObjects", [])
    objects.reverse()
    written = []
    while objects:
        written.append(_compact(objects.pop()))
    envelope = _compact({key: value for key, value in answer.items() if key != "response"})
    head = _compact(response)
    converted = ",".join(written)
    text = f'{envelope[:-1]},"response":{head[:-1]},"convertedObjects":[{converted}]}}}}'
    return text.encode()


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))
