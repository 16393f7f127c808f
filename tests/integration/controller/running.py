"""A controller's real loop run on a thread for a test: stopped, joined and checked on exit."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from brupop.services.controller.service import ControllerService


@dataclass(frozen=True)
class RunningController:
    """The loop's thread, and the event that stops it (as a SIGTERM would)."""

    thread: threading.Thread
    stop: threading.Event


@contextmanager
def running(controller: ControllerService) -> Iterator[RunningController]:
    """`controller.run` on a daemon thread; on exit it is stopped and must end within 10 s."""
    stop = threading.Event()
    thread = threading.Thread(target=controller.run, args=(stop,), daemon=True)
    thread.start()
    try:
        yield RunningController(thread, stop)
    finally:
        stop.set()
        thread.join(timeout=10)
        assert not thread.is_alive()
