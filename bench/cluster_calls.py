"""What the bench's apiserver asked of its fake cluster: counting wrappers around the in-memory
cluster's shadows and pods, and the file through which an attack in another process reads them.

The server process (apiserver_main_process.py) wraps its ports in `CountingShadows` and
`CountingPods`; a thread writes the counts to `cluster_calls.json` in its work directory every
0.1 s (atomically, a rename), and an attack reads that file before and after its requests. The
counts are what etcd and kube-apiserver would have been asked: status writes stored, pod GETs.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

CALLS_FILE = "cluster_calls.json"
PUBLISH_SECONDS = 0.1


class CallCounts:
    """Counts by name, shared by the wrappers, published to `work/cluster_calls.json`."""

    def __init__(self, work: Path) -> None:
        self._file = work / CALLS_FILE
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._published: dict[str, int] | None = None
        threading.Thread(target=self._publish_forever, name="call-counts", daemon=True).start()

    def add(self, name: str) -> None:
        with self._lock:
            self._counts[name] += 1

    def _publish_forever(self) -> None:
        while True:
            with self._lock:
                counts = dict(self._counts)
            if counts != self._published:
                partial = self._file.with_suffix(".part")
                partial.write_text(json.dumps(counts))
                partial.rename(self._file)
                self._published = counts
            time.sleep(PUBLISH_SECONDS)


class CountingShadows:
    """The shadow repository, each status write counted (`shadow_status_writes`)."""

    def __init__(self, inner: Any, counts: CallCounts) -> None:
        self._inner = inner
        self._counts = counts

    def update_status(self, *args: Any, **kwargs: Any) -> Any:
        self._counts.add("shadow_status_writes")
        return self._inner.update_status(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class CountingPods:
    """The pod repository, each GET of one pod counted (`pod_gets`)."""

    def __init__(self, inner: Any, counts: CallCounts) -> None:
        self._inner = inner
        self._counts = counts

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self._counts.add("pod_gets")
        return self._inner.get(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def read_calls(work: Path) -> dict[str, int]:
    """The counts the server published last (empty before its first call)."""
    try:
        counts: dict[str, int] = json.loads((work / CALLS_FILE).read_text())
    except FileNotFoundError:
        return {}
    return counts


def settled_calls(
    work: Path, quiet_seconds: float = 0.5, most_seconds: float = 5.0
) -> dict[str, int]:
    """The counts once they have not moved for `quiet_seconds` (at most `most_seconds`): what the
    server did for requests already answered is then published."""
    deadline = time.monotonic() + most_seconds
    last = read_calls(work)
    steady_since = time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(PUBLISH_SECONDS)
        now = read_calls(work)
        if now != last:
            last, steady_since = now, time.monotonic()
        elif time.monotonic() - steady_since >= quiet_seconds:
            break
    return last


def calls_between(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """What each count grew by."""
    return {name: after.get(name, 0) - before.get(name, 0) for name in sorted(after)}
