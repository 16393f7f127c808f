"""Start rules that keep brupop out of an autoscaler's way, and off nodes that should not move.

- a node an autoscaler is removing (its taint `ToBeDeletedByClusterAutoscaler` or
  `karpenter.sh/disrupted`, or a deletion under way) is not started: it is going away anyway;
- a node younger than the policy's `minNodeAgeSeconds` waits (a node just added by a scale-up
  is still taking its workloads);
- a node running a pod annotated `karpenter.sh/do-not-disrupt` (`"true"`, or a duration such as
  `"4h"` that ends the protection that long after the pod's creation), or a pod the policy's
  `blockingPodSelector` matches, waits, and its REASON names the pod (and the protection's end).

Pure: the pods of a node come in through `PodsOnNode`, which the controller backs with a short
cache of the cluster's pod listings.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Protocol

from brupop.domain.cluster.label_selector import LabelSelector, parse_label_selector
from brupop.domain.cluster.objects import Pod
from brupop.domain.policy.scheduling_policy import SchedulingPolicy
from brupop.domain.reason import Reason
from brupop.domain.starting.autoscaler_annotations import DO_NOT_DISRUPT_ANNOTATION
from brupop.domain.starting.do_not_disrupt import protection
from brupop.domain.starting.start_holds import StartCandidate, StartHold, StartRule
from brupop.domain.timestamps import later

CLUSTER_AUTOSCALER_TAINT = "ToBeDeletedByClusterAutoscaler"
KARPENTER_DISRUPTED_TAINT = "karpenter.sh/disrupted"
_REMOVAL_TAINTS = {
    CLUSTER_AUTOSCALER_TAINT: "being removed by the cluster autoscaler",
    KARPENTER_DISRUPTED_TAINT: "being disrupted by Karpenter",
}


class PodsOnNode(Protocol):
    """The pods scheduled on a node; None when they could not be read."""

    def __call__(self, node_name: str) -> Sequence[Pod] | None: ...


class AutoscalerRemovalRule:
    """Holds a node an autoscaler is removing, or whose deletion is under way."""

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """AUTOSCALER when the Node is being deleted or carries a removal taint."""
        node = candidate.node
        if node is None:
            return None
        if node.deleting:
            return StartHold(Reason.AUTOSCALER, "node is being deleted")
        for taint in node.taints:
            if (detail := _REMOVAL_TAINTS.get(taint.key)) is not None:
                return StartHold(Reason.AUTOSCALER, detail)
        return None

    def started(self, candidate: StartCandidate) -> None:
        """Nothing to count."""


class NodeAgeRule:
    """Holds a node younger than `min_age_seconds` (0: the rule is off)."""

    def __init__(self, min_age_seconds: int) -> None:
        self.min_age_seconds = min_age_seconds

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """NODE_TOO_YOUNG until the Node's creation is `min_age_seconds` old."""
        node = candidate.node
        if self.min_age_seconds <= 0 or node is None or node.created_at is None:
            return None
        age = max(0.0, (now - node.created_at).total_seconds())
        if age >= self.min_age_seconds:
            return None
        detail = f"node is {span(age)} old; starts after {span(self.min_age_seconds)}"
        grown = later(node.created_at, timedelta(seconds=self.min_age_seconds))
        return StartHold(Reason.NODE_TOO_YOUNG, detail, until=grown)

    def started(self, candidate: StartCandidate) -> None:
        """Nothing to count."""


class BlockingPodRule:
    """Holds a node running a do-not-disrupt pod, or a pod `selector` matches."""

    def __init__(self, pods: PodsOnNode, selector: LabelSelector | None = None) -> None:
        self._pods = pods
        self.selector = selector

    def hold(self, candidate: StartCandidate, now: datetime) -> StartHold | None:
        """BLOCKING_POD naming the first such pod (by namespace and name)."""
        pods = self._pods(candidate.node_name)
        if pods is None:
            return StartHold(Reason.BLOCKING_POD, "the node's pods could not be read")
        running = sorted(
            (p for p in pods if not p.finished and not p.terminating),
            key=lambda p: (p.namespace, p.name),
        )
        for pod in running:
            value = pod.annotations.get(DO_NOT_DISRUPT_ANNOTATION)
            kept = protection(value, pod.created_at)
            if kept.holds_at(now):
                detail = f"pod {pod.namespace}/{pod.name} has {DO_NOT_DISRUPT_ANNOTATION}"
                if kept.until is not None:
                    detail += f' "{value}"'  # a duration: digits and units only
                return StartHold(Reason.BLOCKING_POD, detail, until=kept.until)
        selector = self.selector
        if selector is not None:
            for pod in running:
                if selector.matches(pod.labels):
                    detail = f"pod {pod.namespace}/{pod.name} matches blockingPodSelector"
                    return StartHold(Reason.BLOCKING_POD, f"{detail} '{selector.text}'")
        return None

    def started(self, candidate: StartCandidate) -> None:
        """Nothing to count."""


def autoscaler_rules(
    scheduling: SchedulingPolicy, pods: PodsOnNode | None
) -> tuple[StartRule, ...]:
    """The rules of this module for the policy in force; the pod rule (left out without
    `pods`) last, as it is the one that reads the cluster."""
    rules: list[StartRule] = [AutoscalerRemovalRule(), NodeAgeRule(scheduling.min_node_age_seconds)]
    if pods is not None:
        text = scheduling.blocking_pod_selector
        rules.append(BlockingPodRule(pods, parse_label_selector(text) if text else None))
    return tuple(rules)


def span(seconds: float) -> str:
    """A duration as people say it, rounded down: `45s`, `3m`, `2h5m`, `3d4h`."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    if whole < 86400:
        hours, minutes = divmod(whole // 60, 60)
        return f"{hours}h{minutes}m" if minutes else f"{hours}h"
    days, hours = divmod(whole // 3600, 24)
    return f"{days}d{hours}h" if hours else f"{days}d"
