"""One exchange with a worker process over its stdin and stdout pipes, within a deadline.

Both pipes are non-blocking and watched with a selector, so neither a worker that stops reading
nor one that never answers can hold the caller past its deadline. Reads and writes are system
calls that release the GIL: the apiserver's event loop runs while megabytes go through.
"""

from __future__ import annotations

import os
import selectors
import time

from brupop.adapters.apiserver_http.conversion.frames import FrameReader, header

_READ_CHUNK = 1024 * 1024


class ExchangeTimeoutError(TimeoutError):
    """The worker did not answer within the deadline."""


class WorkerGoneError(OSError):
    """The worker's pipes closed: it exited or was killed."""


def exchange(
    to_worker: int,
    from_worker: int,
    frame: tuple[bytes, bytes] | None,
    *,
    answer_limit: int,
    deadline: float,
) -> tuple[bytes, bytes]:
    """Send `frame` (if any) on `to_worker`, return the frame that comes back on `from_worker`.

    `deadline` is a `time.monotonic()` instant; FrameError for an answer breaking the protocol.
    """
    reader = FrameReader(answer_limit)
    pending: list[memoryview] = []
    if frame is not None:
        kind, payload = frame
        pending = [memoryview(header(kind, len(payload))), memoryview(payload)]
    with selectors.DefaultSelector() as selector:
        if pending:
            selector.register(to_worker, selectors.EVENT_WRITE)
        selector.register(from_worker, selectors.EVENT_READ)
        while (answer := reader.frame()) is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ExchangeTimeoutError("the worker did not answer in time")
            for key, _ in selector.select(left):
                if key.fd == to_worker:
                    _write_some(to_worker, pending)
                    if not pending:
                        selector.unregister(to_worker)
                else:
                    _read_some(from_worker, reader)
    return answer


def _write_some(fd: int, pending: list[memoryview]) -> None:
    try:
        written = os.write(fd, pending[0])
    except BlockingIOError:
        return
    except (BrokenPipeError, ConnectionResetError):
        raise WorkerGoneError("the worker closed its input") from None
    if written == len(pending[0]):
        pending.pop(0)
    else:
        pending[0] = pending[0][written:]


def _read_some(fd: int, reader: FrameReader) -> None:
    try:
        data = os.read(fd, min(reader.wanted(), _READ_CHUNK))
    except BlockingIOError:
        return
    if not data:
        raise WorkerGoneError("the worker closed its output")
    reader.feed(data)
