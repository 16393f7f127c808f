"""Conversion by the review's size: a review of one shadow, as kube-apiserver sends them, is
converted here on the calling thread (under a millisecond); a larger one goes to the conversion
worker process, started when the first such review comes.

An apiserver that converts only what kube-apiserver sends thus never starts the worker (about
30 MiB resident: a second interpreter with pydantic and the domain), while a flood of big
reviews is still converted in that process of its own, at a lower priority, never holding this
process's event loop nor its GIL.
"""

from __future__ import annotations

import threading

import structlog

from brupop.adapters.apiserver_http.conversion.answer import answer_to
from brupop.adapters.apiserver_http.conversion.review_bounds import (
    SMALL_REVIEW_BYTES,
    BadReviewError,
    ReviewTooLargeError,
)
from brupop.adapters.apiserver_http.conversion.worker_process import (
    ConversionFailedError,
    ConversionWorker,
)

log = structlog.get_logger(__name__)


class ConversionBySize:
    """Small reviews converted in this process, larger ones by `worker`; `convert` may be
    called from any thread (the route calls it from one at a time)."""

    def __init__(self, worker: ConversionWorker, *, small_bytes: int = SMALL_REVIEW_BYTES) -> None:
        self._worker = worker
        self._small_bytes = small_bytes
        self._starting = threading.Lock()

    @property
    def failing(self) -> bool:
        """The worker, once started, keeps failing to start or keeps exiting."""
        return self._worker.failing

    @property
    def pid(self) -> int | None:
        """The worker's process id, while one runs."""
        return self._worker.pid

    def start(self) -> None:
        """Nothing to start yet: the worker starts with the first review larger than a shadow's."""

    def stop(self) -> None:
        """Stop the worker, if it was started."""
        self._worker.stop()

    def convert(self, body: bytes) -> bytes:
        """The answer to the review `body`, or ConversionFailedError: 400 for a body that is not
        a review, 413 for objects larger or more than shadows, 503 when the worker cannot take a
        large review, 500 when converting failed."""
        if len(body) > self._small_bytes:
            with self._starting:
                self._worker.start()
            return self._worker.convert(body)
        try:
            return answer_to(body)
        except BadReviewError as error:
            raise ConversionFailedError(400, str(error)[:200]) from None
        except ReviewTooLargeError as error:
            raise ConversionFailedError(413, str(error)[:200]) from None
        except Exception as error:  # any bug, or MemoryError: a short 500 and one line
            log.error("conversion.failed", error=type(error).__name__)
            raise ConversionFailedError(500, "the conversion failed") from None
