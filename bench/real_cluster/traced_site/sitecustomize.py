"""Loaded by a bench's brupop process when this folder is on its PYTHONPATH: traces allocations
from the start, and on each SIGUSR1 writes where the live memory was allocated (by file, the top
40) to the path in BRUPOP_BENCH_ALLOCATIONS, and the whole snapshot beside it (`.N.snapshot`,
for `tracemalloc.Snapshot.load` and `compare_to`); SIGUSR2 collects garbage first. Bench
only; brupop never imports it."""

import gc
import itertools
import os
import signal
import tracemalloc

_OUT = os.environ.get("BRUPOP_BENCH_ALLOCATIONS")
_TAKEN = itertools.count()

if _OUT:
    tracemalloc.start(1)

    def _write(_signal: int, _frame: object) -> None:
        snapshot = tracemalloc.take_snapshot()
        snapshot.dump(f"{_OUT}.{next(_TAKEN)}.snapshot")
        stats = snapshot.statistics("filename")
        total = sum(stat.size for stat in stats)
        lines = [f"total {total / 2**20:.1f} MiB traced"]
        for stat in stats[:40]:
            where = stat.traceback[0].filename
            lines.append(f"{stat.size / 2**20:8.2f} MiB {stat.count:9d} {where}")
        with open(_OUT + ".part", "w", encoding="utf-8") as out:
            out.write("\n".join(lines) + "\n")
        os.replace(_OUT + ".part", _OUT)  # whole or absent

    def _collect_then_write(signal_number: int, frame: object) -> None:
        gc.collect()
        _write(signal_number, frame)

    signal.signal(signal.SIGUSR1, _write)
    signal.signal(signal.SIGUSR2, _collect_then_write)  # what is left once garbage is collected
