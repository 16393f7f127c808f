"""One build at a time per cache folder: an flock on a lock file in it. A second build waits,
says so once, and then finds what the first one built."""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from tests.support.control_plane.go_errors import BuildError

WAIT_SECONDS = 3 * 3600.0  # longer than the slowest cold build measured (43 min), by far
POLL_SECONDS = 1.0


@contextmanager
def build_lock(
    path: Path, *, wait_seconds: float = WAIT_SECONDS, poll_seconds: float = POLL_SECONDS
) -> Iterator[None]:
    """Hold `path` exclusively for the block, waiting at most `wait_seconds` for another build."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:
        if not try_lock(handle):
            print(
                f"control-plane build: another build ({holder(path)}) holds {path}; waiting for "
                "it to finish",
                flush=True,
            )
            deadline = time.monotonic() + wait_seconds
            while not try_lock(handle):
                if time.monotonic() > deadline:
                    raise BuildError(f"{path} is still held after {wait_seconds:.0f} s")
                time.sleep(poll_seconds)
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def try_lock(handle: IO[str]) -> bool:
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def holder(path: Path) -> str:
    """`pid N` as the holder wrote it, or `pid unknown` while it has not yet."""
    written = path.read_text(errors="replace").strip()[:20]
    return f"pid {written}" if written.isdigit() else "pid unknown"
