"""CPU and memory amounts: a Node's allocatable, a Pod's effective request, and how to say them.

A pod's effective request is what the scheduler reserves for it: the sum over its containers,
or the largest init container if that is more (init containers run one at a time, before the
others). Sidecars (init containers that restart always) keep running, so they add to the sum
and to every later init container. Pod overhead (RuntimeClass) is not counted.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

_GI = 1024**3
_MI = 1024**2


@dataclass(frozen=True, order=True)
class Resources:
    """An amount of CPU (millicores) and memory (bytes)."""

    cpu_millis: int = 0
    memory_bytes: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu_millis + other.cpu_millis, self.memory_bytes + other.memory_bytes)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu_millis - other.cpu_millis, self.memory_bytes - other.memory_bytes)

    def covers(self, wanted: Resources) -> bool:
        """There is at least `wanted` of both CPU and memory."""
        return self.cpu_millis >= wanted.cpu_millis and self.memory_bytes >= wanted.memory_bytes

    def larger_of(self, other: Resources) -> Resources:
        """Each resource's maximum of the two."""
        return Resources(
            max(self.cpu_millis, other.cpu_millis), max(self.memory_bytes, other.memory_bytes)
        )

    @property
    def is_zero(self) -> bool:
        """Neither CPU nor memory."""
        return self.cpu_millis == 0 and self.memory_bytes == 0

    def describe(self) -> str:
        """`2.5 CPU, 1.5 Gi memory`; a zero amount is left out (`none` when both are)."""
        parts = []
        if self.cpu_millis:
            parts.append(f"{describe_cpu(self.cpu_millis)} CPU")
        if self.memory_bytes:
            parts.append(f"{describe_memory(self.memory_bytes)} memory")
        return ", ".join(parts) or "none"


NO_RESOURCES = Resources()


class InitContainerRequest(NamedTuple):
    """One init container's request, and whether it is a sidecar (restartPolicy: Always)."""

    resources: Resources
    sidecar: bool = False


def effective_request(
    containers: Iterable[Resources], init_containers: Iterable[InitContainerRequest] = ()
) -> Resources:
    """What the scheduler reserves for a pod with these containers and init containers."""
    sidecars = NO_RESOURCES
    init_peak = NO_RESOURCES
    for init in init_containers:
        # An init container runs beside the sidecars started before it.
        init_peak = init_peak.larger_of(sidecars + init.resources)
        if init.sidecar:
            sidecars = sidecars + init.resources
    running = sidecars
    for container in containers:
        running = running + container
    return running.larger_of(init_peak)


def describe_cpu(millis: int) -> str:
    """Cores with at most one decimal, rounded up so a small amount never reads as 0:
    2500 is `2.5`, 2000 is `2`, 50 is `0.1`."""
    tenths = math.ceil(millis / 100)
    whole, tenth = divmod(tenths, 10)
    return f"{whole}.{tenth}" if tenth else str(whole)


def describe_memory(amount: int) -> str:
    """`1.5 Gi` from one Gi up, else whole `Mi` (rounded up, so never `0 Mi`)."""
    if amount >= _GI:
        tenths = math.ceil(amount * 10 / _GI)
        whole, tenth = divmod(tenths, 10)
        return f"{whole}.{tenth} Gi" if tenth else f"{whole} Gi"
    return f"{math.ceil(amount / _MI)} Mi"
