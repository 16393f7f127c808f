"""The conversion worker: a process of its own that answers ConversionReviews for the apiserver.

`python -m brupop.entrypoints.conversion_worker LIMIT` reads review frames on stdin and writes
one answer frame per review on stdout (see `conversion_frames`), until stdin ends. Parsing,
converting and writing a review of megabytes holds a Python process for a good part of a
second; here it holds this process only, never the apiserver's, whose event loop keeps
answering `/ping` and the agents. Nothing here logs: the apiserver logs what the worker did.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any, BinaryIO

from brupop.domain.conversion import convert_review
from brupop.entrypoints.conversion_frames import (
    ANSWER,
    FAILED,
    NOT_JSON,
    READY,
    REVIEW,
    FrameError,
    read_frame,
    write_frame,
)

USAGE = "usage: python -m brupop.entrypoints.conversion_worker BODY_LIMIT_BYTES"
# Under a flood the worker converts without pause; on a busy node it would take CPU time from the
# apiserver's event loop. A lower priority (no privilege needed to lower one's own) gives the
# loop the CPU first: conversions wait, `/ping` and the agents do not.
NICENESS = 10


class NotJsonError(ValueError):
    """The review's body is not JSON."""


def main(argv: list[str]) -> int:
    """Answer reviews until stdin ends (0) or breaks the protocol (2)."""
    if len(argv) != 1 or not argv[0].isdigit():
        print(USAGE, file=sys.stderr)
        return 2
    limit = int(argv[0])
    # A Ctrl-C in a terminal reaches the whole process group: the apiserver decides when the
    # worker ends (it closes stdin or sends SIGTERM), so the worker ignores it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.nice(NICENESS)
    frames_in, frames_out = sys.stdin.buffer, _private_stdout()
    write_frame(frames_out, READY, b"")
    try:
        return _serve(frames_in, frames_out, limit)
    except (FrameError, BrokenPipeError):
        return 2


def _serve(frames_in: BinaryIO, frames_out: BinaryIO, limit: int) -> int:
    while (frame := read_frame(frames_in, limit)) is not None:
        kind, body = frame
        if kind != REVIEW:
            raise FrameError(f"unexpected frame kind {kind!r}")
        del frame
        write_frame(frames_out, *_answer_frame(body))
    return 0


def _answer_frame(body: bytes) -> tuple[bytes, bytes]:
    try:
        return ANSWER, answer_to(body)
    except NotJsonError as error:
        return NOT_JSON, str(error).encode()
    except Exception as error:  # any bug, or MemoryError: a short failure frame, no traceback
        return FAILED, type(error).__name__.encode()


def _private_stdout() -> BinaryIO:
    """The frames' stream: stdout's pipe, moved off fd 1 so that a stray print cannot corrupt it
    (fd 1 then writes to stderr, the apiserver's log)."""
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return frames


def answer_to(body: bytes) -> bytes:
    """The ConversionReview answering the one in `body` (NotJsonError if it is not JSON).

    The review's objects are freed before the answer is written, and the answer's objects as
    they are written, so the worker's peak stays near the size of one copy of the objects.
    """
    try:
        review = json.loads(body)
    except (ValueError, RecursionError):
        raise NotJsonError("the body is not valid JSON") from None
    answer = convert_review(review)
    _free_objects(review)
    return _dump(answer)


def _free_objects(review: Any) -> None:
    request = review.get("request") if isinstance(review, dict) else None
    objects = request.get("objects") if isinstance(request, dict) else None
    if isinstance(objects, list):
        objects.clear()


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


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
