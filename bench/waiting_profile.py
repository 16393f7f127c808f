"""Where the apiserver's event loop spends a burst, for waiting_server.py: a sampling profiler.

While started, a CPU-time timer (ITIMER_PROF, every millisecond of the process's CPU) interrupts
the main thread, whose signal handler counts the Python function on top of its stack (self), each
function on it (cumulative) and the stack's layer: the innermost frame of brupop, Starlette,
uvicorn or asyncio's TLS that it passes through. The server runs unchanged. Time in C (TLS, the
HTTP parser) counts against the Python function that called it. CPU spent by other threads while
the loop waits in `select` counts as `other_threads`.
"""

from __future__ import annotations

import signal
from collections import Counter
from types import FrameType
from typing import Any

SAMPLE_SECONDS = 0.001
# Where a frame's file lies: the first of these its path contains names its layer.
LAYERS = (
    ("/brupop/adapters/apiserver_http/serving/", "brupop serving (protocols)"),
    ("/brupop/adapters/apiserver_http/routes/", "brupop routes and middleware"),
    ("/brupop/services/", "brupop services"),
    ("/brupop/", "brupop other"),
    ("/starlette/", "starlette"),
    ("/uvicorn/", "uvicorn"),
    ("/anyio/", "anyio"),
    ("/structlog/", "structlog"),
    ("asyncio/sslproto.py", "asyncio TLS"),
    ("asyncio/selector_events.py", "asyncio sockets"),
)


def _where(frame: FrameType) -> str:
    code = frame.f_code
    name = code.co_filename
    for marker in ("/site-packages/", "/src/", "/lib/"):
        if marker in name:
            name = name.rsplit(marker, 1)[-1]
            break
    return f"{name}:{code.co_name}"


def _layer(filename: str) -> str | None:
    for part, layer in LAYERS:
        if part in filename:
            return layer
    return None


def _package(where: str) -> str:
    """The package (or the standard library's module) of a `_where` name."""
    path = where.split(":", 1)[0].removeprefix("python3.11/")
    parts = path.split("/")
    if parts[0] == "brupop":
        return "/".join(parts[:4]).removesuffix(".py")
    if parts[0] == "asyncio":
        return "/".join(parts[:2]).removesuffix(".py")
    return parts[0].removesuffix(".py")


class Sampler:
    """Samples the main thread's stack per millisecond of CPU while started (made in the main
    thread); `report()` says where the samples fell."""

    def __init__(self) -> None:
        self.samples = 0
        self.other_threads = 0
        self.own: Counter[str] = Counter()
        self.cumulative: Counter[str] = Counter()
        self.layers: Counter[str] = Counter()  # the innermost known layer of each stack
        signal.signal(signal.SIGPROF, self._count)

    def start(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, SAMPLE_SECONDS, SAMPLE_SECONDS)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)

    def _count(self, _signal: int, frame: FrameType | None) -> None:
        self.samples += 1
        if frame is None or frame.f_code.co_name == "select":
            self.other_threads += 1
            return
        self.own[_where(frame)] += 1
        seen: set[str] = set()
        layer = None
        current: FrameType | None = frame
        while current is not None:
            where = _where(current)
            if where not in seen:
                seen.add(where)
                self.cumulative[where] += 1
            layer = layer or _layer(current.f_code.co_filename)
            current = current.f_back
        self.layers[layer or "other"] += 1

    def report(self, top: int = 60) -> dict[str, Any]:
        """Shares of the main thread's samples, largest first."""
        busy = max(self.samples - self.other_threads, 1)

        def shares(counter: Counter[str]) -> dict[str, float]:
            return {key: round(n / busy, 3) for key, n in counter.most_common(top)}

        packages: Counter[str] = Counter()
        for where, count in self.own.items():
            packages[_package(where)] += count
        return {
            "samples": self.samples,
            "other_threads": self.other_threads,
            "innermost_layer": shares(self.layers),
            "self_by_package": shares(packages),
            "self": shares(self.own),
            "cumulative": shares(self.cumulative),
        }
