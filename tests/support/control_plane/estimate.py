"""How long a build of what is missing should take here, from the cold builds measured: 18 min
on 2 cores at best (1071 s: etcd 94 s, kwok 146 s, kube-apiserver 376 s, kube-controller-manager
423 s), 36-43 min on 2 cores shared with other test runs (36 at load 4-5). Go compiles packages
in parallel, so the figures are scaled to the core count."""

from __future__ import annotations

import os
from dataclasses import dataclass

MEASURED_CORES = 2
BEST_MINUTES = 18.0
SHARED_MINUTES = (36.0, 43.0)
MEASURED_SECONDS = {
    "etcd": 94,
    "kwok": 146,
    "kube-apiserver": 376,
    "kube-controller-manager": 423,
}


@dataclass(frozen=True)
class Estimate:
    """Minutes: the best case, and the range when other work shares the cores."""

    best: float
    shared_low: float
    shared_high: float


def estimate(missing: list[str], cores: int) -> Estimate | None:
    """The estimate for building `missing` on `cores` cores; None when no binary is missing."""
    share = sum(MEASURED_SECONDS.get(name, 0) for name in missing) / sum(MEASURED_SECONDS.values())
    if share == 0:
        return None
    scale = share * MEASURED_CORES / max(cores, 1)
    low, high = SHARED_MINUTES
    return Estimate(BEST_MINUTES * scale, low * scale, high * scale)


def estimate_line(missing: list[str], cores: int, load: float) -> str | None:
    """One line for the start of a build, saying what the figure rests on."""
    found = estimate(missing, cores)
    if found is None:
        return None
    return (
        f"control-plane build: expect about {found.best:.0f} min on this machine's {cores} cores, "
        f"{found.shared_low:.0f}-{found.shared_high:.0f} min if other work shares them (load now "
        f"{load:.1f}); measured cold on 2 cores: 18 min at best, 36 min at load 4-5, 43 min "
        "more loaded; much less when Go's own caches are warm"
    )


def machine() -> tuple[int, float]:
    """The cores this process may use, and the 1-minute load average."""
    return len(os.sched_getaffinity(0)), os.getloadavg()[0]
