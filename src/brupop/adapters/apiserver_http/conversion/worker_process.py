"""The conversion worker process, seen from the apiserver: started, supervised, asked, stopped.

One long-lived worker (`brupop.adapters.apiserver_http.conversion.worker`) converts one review at
a time; this process only moves bytes to and from it. A supervisor thread starts it at app start-up
and waits on it: a worker that exits on its own is logged once and restarted (after a pause
that doubles while it keeps failing), and one that cannot start at all makes `failing` true,
which readiness reports. A conversion over its deadline has its worker killed and replaced at
once. No traceback: every failure reaches the route as a `ConversionFailedError` with a status
and a few words.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import structlog

from brupop.adapters.apiserver_http.conversion.frames import (
    ANSWER,
    BAD_REVIEW,
    READY,
    REVIEW,
    TOO_LARGE,
    FrameError,
)
from brupop.adapters.apiserver_http.conversion.pipe_exchange import (
    ExchangeTimeoutError,
    WorkerGoneError,
    exchange,
)
from brupop.services.runtime.supervisor import RestartSchedule, Supervisor

log = structlog.get_logger(__name__)

WORKER_MODULE = "brupop.adapters.apiserver_http.conversion.worker"
# kube-apiserver (v1.37, measured) sends one object per ConversionReview, even for a v1 LIST:
# a shadow's review is under 1.5 KB. 2 MiB leaves room for a sender that batches up to
# `review_bounds.MAX_OBJECTS` shadows (1,000 are about 1.4 MB with managedFields), and bounds
# what one review costs the worker (about a tenth of a second) and so any other review's wait.
CONVERSION_BODY_LIMIT = 2 * 1024 * 1024
# The worker's refusals of a review, before converting it, and their statuses.
_REFUSALS = {BAD_REVIEW: 400, TOO_LARGE: 413}


@dataclass(frozen=True)
class ConversionOptions:
    """The worker's bounds. `command` replaces the worker's command line (tests)."""

    body_limit: int = CONVERSION_BODY_LIMIT
    seconds: float = 10.0
    start_seconds: float = 30.0
    stop_seconds: float = 2.0
    restart: RestartSchedule = field(default_factory=RestartSchedule)
    command: tuple[str, ...] | None = None

    @property
    def answer_limit(self) -> int:
        """The largest answer taken from the worker: the v2 objects and a conversion stash may
        make it longer than the review, never four times as long."""
        return 4 * self.body_limit + 64 * 1024

    def worker_command(self) -> Sequence[str]:
        """How the worker is started: this interpreter; -P keeps the working directory off the
        import path, so only the installed brupop is imported."""
        if self.command is not None:
            return self.command
        return (sys.executable, "-P", "-m", WORKER_MODULE, str(self.body_limit))


class ConversionFailedError(Exception):
    """No answer for this review; `status` and the message are what the caller gets."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class WorkerStartError(RuntimeError):
    """The worker could not be started, or did not say it was ready in time."""


class WorkerExitedError(RuntimeError):
    """The worker exited without being asked to."""


class ConversionWorker:
    """The supervised worker process; `convert` may be called from any thread."""

    def __init__(self, options: ConversionOptions | None = None) -> None:
        self._options = options or ConversionOptions()
        self._stopping = threading.Event()
        self._changed = threading.Condition()
        self._process: subprocess.Popen[bytes] | None = None
        self._starting: subprocess.Popen[bytes] | None = None  # not ready yet
        self._replaced: set[int] = set()
        self._exited: list[subprocess.Popen[bytes]] = []  # their pipes are still to be closed
        self._one_at_a_time = threading.Lock()
        self._supervisor = Supervisor(
            "conversion-worker", self._keep_running, self._stopping, schedule=self._options.restart
        )
        self._thread: threading.Thread | None = None

    @property
    def failing(self) -> bool:
        """The worker keeps failing to start or keeps exiting (its supervisor's streak)."""
        return self._supervisor.failing

    @property
    def pid(self) -> int | None:
        """The running worker's process id, if one is running."""
        with self._changed:
            return None if self._process is None else self._process.pid

    def start(self) -> None:
        """Start the supervisor thread, which starts the worker."""
        if self._thread is None:
            self._thread = self._supervisor.start()

    def stop(self) -> None:
        """Stop the worker (SIGTERM, then SIGKILL after `stop_seconds`) and its supervisor."""
        self._stopping.set()
        with self._changed:
            processes = [p for p in (self._process, self._starting) if p is not None]
            self._changed.notify_all()
        for process in processes:
            _end(process, self._options.stop_seconds, close=False)  # its supervisor closes them
        if self._thread is not None:
            self._thread.join(self._options.stop_seconds + 1)
        self._close_exited(lock_held=False)

    def convert(self, body: bytes) -> bytes:
        """The worker's answer to the review `body` (blocking; one review at a time).

        ConversionFailedError: 400 when the body is not JSON or nested deeper than a shadow;
        413 when its objects are more or larger than shadows; 503 when no worker is running,
        it did not answer within `seconds` (it is then replaced) or it stopped; 500 when
        converting failed in the worker."""
        deadline = time.monotonic() + self._options.seconds
        if not self._one_at_a_time.acquire(timeout=self._options.seconds):
            raise ConversionFailedError(503, "too many conversions in progress; retry")
        try:
            self._close_exited(lock_held=True)
            process = self._running_worker(deadline)
            kind, payload = self._ask(process, body, deadline)
        finally:
            self._one_at_a_time.release()
        if kind == ANSWER:
            return payload
        if kind in _REFUSALS:
            raise ConversionFailedError(_REFUSALS[kind], payload.decode(errors="replace")[:200])
        log.error("conversion.failed_in_worker", error=payload.decode(errors="replace")[:100])
        raise ConversionFailedError(500, "the conversion failed")

    def _ask(
        self, process: subprocess.Popen[bytes], body: bytes, deadline: float
    ) -> tuple[bytes, bytes]:
        assert process.stdin is not None and process.stdout is not None
        try:
            return exchange(
                process.stdin.fileno(),
                process.stdout.fileno(),
                (REVIEW, body),
                answer_limit=self._options.answer_limit,
                deadline=deadline,
            )
        except ExchangeTimeoutError:
            self._replace(process, "conversion.deadline_exceeded", body_bytes=len(body))
            raise ConversionFailedError(503, "the conversion took too long") from None
        except FrameError as error:
            self._replace(process, "conversion.worker_broke_protocol", reason=str(error)[:200])
            raise ConversionFailedError(500, "the conversion failed") from None
        except WorkerGoneError:
            with self._changed:  # its supervisor may not have seen it end yet: not for the next
                if self._process is process:
                    self._process = None
            raise ConversionFailedError(503, "the conversion worker stopped; retry") from None

    def _running_worker(self, deadline: float) -> subprocess.Popen[bytes]:
        with self._changed:
            while self._process is None:
                left = deadline - time.monotonic()
                if self._stopping.is_set() or self.failing or left <= 0:
                    raise ConversionFailedError(503, "the conversion worker is not running")
                self._changed.wait(left)
            return self._process

    def _replace(self, process: subprocess.Popen[bytes], event: str, **fields: object) -> None:
        """Kill `process`; the supervisor starts another at once (it is no failure of its)."""
        with self._changed:
            self._replaced.add(process.pid)
        log.warning(event, pid=process.pid, seconds=self._options.seconds, **fields)
        process.kill()

    def _close_exited(self, *, lock_held: bool) -> None:
        """Close the pipes of exited workers; a conversion may still be reading a worker's until
        it ends, so only under `_one_at_a_time` (the caller may hold it already)."""
        if not lock_held and not self._one_at_a_time.acquire(blocking=False):
            return
        try:
            with self._changed:
                exited, self._exited = self._exited, []
            for process in exited:
                _close_pipes(process)
        finally:
            if not lock_held:
                self._one_at_a_time.release()

    def _keep_running(self) -> None:
        """The supervisor's loop: start a worker, wait for it to end, start the next."""
        while not self._stopping.is_set():
            try:
                process = self._started_worker()
            except WorkerStartError:
                if self._stopping.is_set():  # stopped while it started: no failure of its
                    return
                raise
            with self._changed:
                stopped = self._stopping.is_set()
                if not stopped:
                    self._process = process
                    self._changed.notify_all()
            if stopped:
                _end(process, self._options.stop_seconds)
                return
            code = process.wait()
            with self._changed:
                self._process = None
                replaced = process.pid in self._replaced
                self._replaced.discard(process.pid)
                self._exited.append(process)
            self._close_exited(lock_held=False)
            if not (self._stopping.is_set() or replaced):
                raise WorkerExitedError(f"the conversion worker exited ({_exit_reason(code)})")

    def _started_worker(self) -> subprocess.Popen[bytes]:
        """A new worker that has said it is ready (WorkerStartError otherwise)."""
        try:
            process = subprocess.Popen(
                self._options.worker_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
        except OSError as error:
            raise WorkerStartError(f"cannot start the conversion worker: {error}") from None
        with self._changed:
            self._starting = process
        try:
            return self._ready(process)
        finally:
            with self._changed:
                self._starting = None

    def _ready(self, process: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
        """`process` once it has said it is ready; ended, and WorkerStartError, otherwise."""
        assert process.stdin is not None and process.stdout is not None
        os.set_blocking(process.stdin.fileno(), False)
        os.set_blocking(process.stdout.fileno(), False)
        try:
            kind, _ = exchange(
                process.stdin.fileno(),
                process.stdout.fileno(),
                None,
                answer_limit=0,
                deadline=time.monotonic() + self._options.start_seconds,
            )
            if kind != READY:
                raise FrameError(f"expected a ready frame, got {kind!r}")
        except (ExchangeTimeoutError, WorkerGoneError, FrameError) as error:
            if isinstance(error, WorkerGoneError):  # it is exiting: let it say with what code
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(1.0)
            _end(process, 0)
            code = process.returncode
            reason = _exit_reason(code) if code is not None else str(error)
            raise WorkerStartError(f"the conversion worker did not start ({reason})") from None
        return process


def _end(process: subprocess.Popen[bytes], grace_seconds: float, *, close: bool = True) -> None:
    """Ask `process` to stop, kill it if it does not within `grace_seconds`, and reap it."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(grace_seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if close:
        _close_pipes(process)


def _close_pipes(process: subprocess.Popen[bytes]) -> None:
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):  # nothing buffered: we write to its fd directly
                pipe.close()


def _exit_reason(code: int) -> str:
    return f"killed by signal {-code}" if code < 0 else f"exit code {code}"
