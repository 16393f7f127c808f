"""The conversion worker: a process of its own that answers ConversionReviews for the apiserver.

`python -m brupop.adapters.apiserver_http.conversion.worker LIMIT` reads review frames on stdin
and writes one answer frame per review on stdout (see `frames`), until stdin ends. Parsing,
converting and writing a review of megabytes holds a Python process for a good part of a
second; here it holds this process only, never the apiserver's, whose event loop keeps
answering `/ping` and the agents. Nothing here logs: the apiserver logs what the worker did.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from typing import BinaryIO

from brupop.adapters.apiserver_http.conversion.frames import (
    ANSWER,
    BAD_REVIEW,
    FAILED,
    READY,
    REVIEW,
    TOO_LARGE,
    FrameError,
    read_frame,
    write_frame,
)
from brupop.adapters.apiserver_http.conversion.review_bounds import (
    BadReviewError,
    ReviewTooLargeError,
)

USAGE = "usage: python -m brupop.adapters.apiserver_http.conversion.worker BODY_LIMIT_BYTES"
# Under a flood the worker converts without pause; on a busy node it would take CPU time from the
# apiserver's event loop. A lower priority (no privilege needed to lower one's own) gives the
# loop the CPU first: conversions wait, `/ping` and the agents do not.
NICENESS = 10

Answerer = Callable[[bytes], bytes]  # conversion_answer.answer_to, or a test's stand-in


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
    # Imported once the priority is lowered: the worker's start (pydantic and the domain) takes
    # a few hundred milliseconds of CPU, which must not slow the apiserver starting beside it.
    from brupop.adapters.apiserver_http.conversion.answer import answer_to

    frames_in, frames_out = sys.stdin.buffer, _private_stdout()
    write_frame(frames_out, READY, b"")
    try:
        return _serve(frames_in, frames_out, limit, answer_to)
    except (FrameError, BrokenPipeError):
        return 2


def _serve(frames_in: BinaryIO, frames_out: BinaryIO, limit: int, answer_to: Answerer) -> int:
    while (frame := read_frame(frames_in, limit)) is not None:
        kind, body = frame
        if kind != REVIEW:
            raise FrameError(f"unexpected frame kind {kind!r}")
        del frame
        write_frame(frames_out, *_answer_frame(answer_to, body))
    return 0


def _answer_frame(answer_to: Answerer, body: bytes) -> tuple[bytes, bytes]:
    try:
        return ANSWER, answer_to(body)
    except BadReviewError as error:
        return BAD_REVIEW, str(error).encode()
    except ReviewTooLargeError as error:
        return TOO_LARGE, str(error).encode()
    except Exception as error:  # any bug, or MemoryError: a short failure frame, no traceback
        return FAILED, type(error).__name__.encode()


def _private_stdout() -> BinaryIO:
    """The frames' stream: stdout's pipe, moved off fd 1 so that a stray print cannot corrupt it
    (fd 1 then writes to stderr, the apiserver's log)."""
    frames = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    return frames


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
