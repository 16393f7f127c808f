"""Node taints and pod tolerations, matched as the scheduler matches them.

A toleration matches a taint when its effect is empty or the same, its key is empty or the
same, and its operator says so: `Exists` matches any value, `Equal` (the default, also when the
operator is empty) needs the same value. An empty key with `Exists` tolerates every taint. A
pod may land on a node only when every NoSchedule and NoExecute taint is tolerated;
PreferNoSchedule only steers the scheduler, so it never keeps a pod off a node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"
_KEEPS_PODS_OFF = frozenset({NO_SCHEDULE, NO_EXECUTE})

EQUAL = "Equal"
EXISTS = "Exists"


@dataclass(frozen=True)
class Taint:
    """A Node taint: `key=value:effect`."""

    key: str
    value: str = ""
    effect: str = NO_SCHEDULE

    def __str__(self) -> str:
        value = f"={self.value}" if self.value else ""
        return f"{self.key}{value}:{self.effect}"


@dataclass(frozen=True)
class Toleration:
    """A Pod toleration; empty strings stand for fields the pod left out."""

    key: str = ""
    operator: str = EQUAL
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        """This toleration matches `taint`."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == EXISTS:
            return True
        if self.operator in (EQUAL, ""):
            return self.value == taint.value
        return False  # an operator this version does not know matches nothing


def blocking_taints(taints: Iterable[Taint], tolerations: Iterable[Toleration]) -> list[Taint]:
    """The NoSchedule and NoExecute taints no toleration matches (empty: the pod may land)."""
    held = tuple(tolerations)
    return [
        taint
        for taint in taints
        if taint.effect in _KEEPS_PODS_OFF and not any(t.tolerates(taint) for t in held)
    ]
