"""Waiting for the simulated fleet to come up on a real API server: kwok makes the Nodes and pods
Ready and kube-controller-manager counts the budgets; then each Node gets what a kubelet and the
node lifecycle controller would have given it (no `not-ready` taint, its InternalIP).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

from kubernetes.client import CoreV1Api, PolicyV1Api
from kubernetes.client.exceptions import ApiException

from brupop.simulation.fleet.real_cluster.ownership import SIMULATED_SELECTOR

READY_SECONDS = 60.0
NUDGE_SECONDS = 5.0
NUDGE_ANNOTATION = "brupop.bottlerocket.aws/simulated-nudge"
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
MERGE_PATCH = "application/merge-patch+json"
_POLL_SECONDS = 0.2
_GONE = 404
JSON = dict[str, Any]


class FleetStartUp:
    """Waits, within READY_SECONDS, until every simulated Node and pod is Ready and every budget
    has been counted, then finishes the Nodes. `nodes` and `pods` are how many were created."""

    def __init__(
        self,
        core: CoreV1Api,
        policy: PolicyV1Api,
        nodes: int,
        pods: int,
        addresses: Mapping[str, str],
    ) -> None:
        self._core = core
        self._policy = policy
        self._nodes = nodes
        self._pods = pods
        self._addresses = addresses

    def wait(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        next_nudge, nudges = time.monotonic() + NUDGE_SECONDS, 0
        while behind := self._not_up():
            now = time.monotonic()
            if now > deadline:
                raise RuntimeError(
                    f"the fleet was not Ready after {READY_SECONDS:g} s: {'; '.join(behind)}"
                    " (kwok plays the kubelets, kube-controller-manager counts the budgets)"
                )
            if now > next_nudge:
                nudges += 1
                nudge_unready_pods(self._core, nudges)
                next_nudge = now + NUDGE_SECONDS
            time.sleep(_POLL_SECONDS)
        self._untaint_ready_nodes()
        self._address_ready_nodes()

    def _not_up(self) -> list[str]:
        """What is not up yet, one phrase per kind of object naming the first few; [] when
        every Node and pod is Ready and every budget has been counted."""
        nodes = self._core.list_node(label_selector=SIMULATED_SELECTOR).items
        pods = self._core.list_pod_for_all_namespaces(label_selector=SIMULATED_SELECTOR).items
        budgets = self._policy.list_pod_disruption_budget_for_all_namespaces(
            label_selector=SIMULATED_SELECTOR
        ).items
        phrases = [
            lag_phrase("Nodes Ready", self._nodes, [n for n in nodes if ready(n.status)], nodes),
            lag_phrase("pods Ready", self._pods, [p for p in pods if ready(p.status)], pods),
            lag_phrase(
                "budgets counted", len(budgets), [b for b in budgets if _counted(b)], budgets
            ),
        ]
        return [phrase for phrase in phrases if phrase]

    def _untaint_ready_nodes(self) -> None:
        """Remove the `not-ready` taint admission put on each new Node, as the node lifecycle
        controller does once the Node is Ready (the loopback control plane does not run it,
        and the capacity check would find no Node that takes an evicted pod)."""
        for node in self._core.list_node(label_selector=SIMULATED_SELECTOR).items:
            taints = node.spec.taints or []
            kept = [_admin_taint(t) for t in taints if t.key != NOT_READY_TAINT]
            if len(kept) != len(taints):
                body = {"spec": {"taints": kept or None}}
                self._core.patch_node(node.metadata.name, body, _content_type=MERGE_PATCH)

    def _address_ready_nodes(self) -> None:
        """Give each Node the InternalIP it was added with. kwok writes its own (--node-ip,
        loopback, which the probes' address allowance refuses) to a new Node, and writes none
        to one created with addresses; one written after that it keeps."""
        for name, address in self._addresses.items():
            body = {"status": {"addresses": [{"type": "InternalIP", "address": address}]}}
            self._core.patch_node_status(name, body)


def nudge_unready_pods(core: CoreV1Api, mark: int) -> list[str]:
    """Touch each simulated pod that is not Ready yet, so that kwok hears of it again; returns
    their names. kwok can miss a pod for good: when it takes a Node on, it goes over the pods
    already bound to it, and skips them as not its own if its copy of the Node's new lease
    lags; a pod it skipped gets no second look until the pod changes."""
    pods = core.list_pod_for_all_namespaces(label_selector=SIMULATED_SELECTOR).items
    nudged = []
    for pod in pods:
        if ready(pod.status):
            continue
        body = {"metadata": {"annotations": {NUDGE_ANNOTATION: str(mark)}}}
        try:
            core.patch_namespaced_pod(
                pod.metadata.name, pod.metadata.namespace, body, _content_type=MERGE_PATCH
            )
        except ApiException as error:
            if error.status != _GONE:
                raise
            continue
        nudged.append(f"{pod.metadata.namespace}/{pod.metadata.name}")
    return nudged


def ready(status: Any) -> bool:
    conditions = (status.conditions if status is not None else None) or []
    return any(c.type == "Ready" and c.status == "True" for c in conditions)


def _counted(budget: Any) -> bool:
    """The disruption controller has seen this generation of the budget."""
    observed = budget.status.observed_generation if budget.status is not None else None
    return bool((observed or 0) >= budget.metadata.generation)


def _admin_taint(taint: Any) -> JSON:
    return {"key": taint.key, "value": taint.value, "effect": taint.effect}


def lag_phrase(what: str, expected: int, done: Sequence[Any], present: Sequence[Any]) -> str:
    """'pods Ready 7/8 (default/web-0)': the count and the first three not done, or ''."""
    if len(done) == expected:
        return ""
    finished = {id(item) for item in done}
    names = [_name(item) for item in present if id(item) not in finished][:3]
    return f"{what} {len(done)}/{expected}" + (f" ({', '.join(names)})" if names else "")


def _name(item: Any) -> str:
    meta = item.metadata
    return f"{meta.namespace}/{meta.name}" if meta.namespace else meta.name
