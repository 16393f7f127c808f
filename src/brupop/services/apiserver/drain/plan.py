"""Which pods a drain removes, and how, decided like `kubectl drain --ignore-daemonsets`.

DaemonSet pods and static mirror pods stay; finished pods are deleted (no budget protects
them); pods already terminating are only waited for; every other pod is evicted.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brupop.domain.cluster.objects import MIRROR_POD_ANNOTATION, Pod


def stays_on_node(pod: Pod) -> bool:
    """DaemonSet pods (their controller would put them back) and mirror pods (kubelet's)."""
    if MIRROR_POD_ANNOTATION in pod.annotations:
        return True
    return any(owner.controller and owner.kind == "DaemonSet" for owner in pod.owners)


@dataclass(frozen=True)
class DrainPlan:
    """The pods of one node sorted by what the drain does with them."""

    evict: tuple[Pod, ...] = ()
    delete: tuple[Pod, ...] = ()
    await_gone: tuple[Pod, ...] = ()

    @property
    def is_done(self) -> bool:
        """Nothing that has to leave is still on the node."""
        return not (self.evict or self.delete or self.await_gone)

    @property
    def remaining(self) -> tuple[Pod, ...]:
        """Every pod that must still leave."""
        return self.evict + self.delete + self.await_gone


def plan_drain(pods: Iterable[Pod]) -> DrainPlan:
    """Sort the node's pods into evict / delete / wait, leaving out the ones that stay."""
    evict: list[Pod] = []
    delete: list[Pod] = []
    await_gone: list[Pod] = []
    for pod in sorted(pods, key=pod_ref):
        if stays_on_node(pod):
            continue
        if pod.terminating:
            await_gone.append(pod)
        elif pod.finished:
            delete.append(pod)
        else:
            evict.append(pod)
    return DrainPlan(evict=tuple(evict), delete=tuple(delete), await_gone=tuple(await_gone))


def pod_ref(pod: Pod) -> str:
    """`namespace/name`, how a drain names a pod."""
    return f"{pod.namespace}/{pod.name}"
