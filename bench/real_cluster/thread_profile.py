"""cProfile over every thread of a brupop process, for where its CPU goes (py-spy is not
installed): a `sitecustomize` on the process's PYTHONPATH calls `install`, each thread gets a
profiler of its own (timed by the thread's CPU clock) at its first call, and at exit their
stats are merged into one file. A call still open at exit in another thread (a watch's blocking
read) is closed by the exiting thread's clock: its figure is that thread's CPU, not the call's."""

from __future__ import annotations

import atexit
import cProfile
import pstats
import sys
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

SITE = """import sys
sys.path.insert(0, {bench!r})
if sys.orig_argv[-1] == {command!r}:
    from real_cluster.thread_profile import install
    install({out!r})
"""


def write_site(folder: Path, command: str, out: Path) -> Path:
    """A folder holding a sitecustomize that profiles `python -m brupop <command>` into `out`."""
    folder.mkdir(parents=True, exist_ok=True)
    bench = str(Path(__file__).resolve().parents[1])
    text = SITE.format(bench=bench, command=command, out=str(out))
    (folder / "sitecustomize.py").write_text(text)
    return folder


def install(out: str) -> None:
    profilers: list[cProfile.Profile] = []
    lock = threading.Lock()

    def start(frame: FrameType, event: str, arg: Any) -> None:
        profiler = cProfile.Profile(time.thread_time)  # CPU, not waits: one per thread
        with lock:
            profilers.append(profiler)
        profiler.enable()  # takes this thread's profile hook over from `start`

    def dump() -> None:
        with lock:
            stats = list(profilers)
        merged: pstats.Stats | None = None
        for profiler in stats:
            profiler.create_stats()
            if merged is None:
                merged = pstats.Stats(profiler)
            else:
                merged.add(profiler)
        if merged is not None:
            merged.dump_stats(out)

    threading.setprofile(start)
    start(sys._getframe(), "call", None)
    atexit.register(dump)
