"""KubernetesPodRepository: pods on a node, PodDisruptionBudgets, policy/v1 evictions, deletion."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kubernetes.client import CoreV1Api, PolicyV1Api

from brupop.adapters.kubernetes.api_calls import JSON, ApiCalls
from brupop.adapters.kubernetes.nodes import condition_true
from brupop.adapters.kubernetes.scheduling_fields import (
    interned,
    node_selector_of,
    requests_of,
    tolerations_of,
)
from brupop.domain.cluster.objects import OwnerReference, Pod, PodDisruptionBudget, PodPhase
from brupop.domain.cluster.resources import NO_RESOURCES

PAGE_SIZE = 500
# Finished pods hold no resources and a drain only deletes them: the API leaves them out.
UNFINISHED_PODS = "status.phase!=Succeeded,status.phase!=Failed"
T = TypeVar("T")
_PHASES = frozenset(phase.value for phase in PodPhase)


def pod_from_object(obj: JSON) -> Pod:
    """The domain Pod of a `v1 Pod` object."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    phase = str(status.get("phase") or "")
    requests = requests_of(spec)
    return Pod(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        uid=str(meta.get("uid") or ""),
        node_name=spec.get("nodeName"),
        phase=PodPhase(phase) if phase in _PHASES else PodPhase.UNKNOWN,
        labels=dict(meta.get("labels") or {}),
        annotations=dict(meta.get("annotations") or {}),
        owners=interned(
            tuple(
                OwnerReference(
                    kind=str(ref.get("kind") or ""),
                    name=str(ref.get("name") or ""),
                    controller=bool(ref.get("controller")),
                )
                for ref in meta.get("ownerReferences") or []
            )
        ),
        service_account=spec.get("serviceAccountName"),
        terminating=bool(meta.get("deletionTimestamp")),
        ready=condition_true(status, "Ready"),
        requests=requests if requests is not None else NO_RESOURCES,
        requests_known=requests is not None,
        node_selector=node_selector_of(spec),
        tolerations=tolerations_of(spec),
    )


def budget_from_object(obj: JSON) -> PodDisruptionBudget:
    """The domain PodDisruptionBudget; percentages and matchExpressions are not carried over."""
    meta = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    return PodDisruptionBudget(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        selector=dict((spec.get("selector") or {}).get("matchLabels") or {}),
        min_available=_count(spec.get("minAvailable")),
        max_unavailable=_count(spec.get("maxUnavailable")),
    )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class KubernetesPodRepository:
    """The PodRepository port over `v1 Pod`, `policy/v1 PodDisruptionBudget` and evictions."""

    def __init__(self, calls: ApiCalls) -> None:
        self._calls = calls
        self._core = CoreV1Api(calls.api_client)
        self._policy = PolicyV1Api(calls.api_client)

    def list_on_node(self, node_name: str) -> list[Pod]:
        return self._paged(
            f"list pods on node {node_name!r}",
            self._core.list_pod_for_all_namespaces,
            pod_from_object,
            field_selector=f"spec.nodeName={node_name}",
        )

    def list_all(self) -> list[Pod]:
        return self._paged(
            "list pods",
            self._core.list_pod_for_all_namespaces,
            pod_from_object,
            field_selector=UNFINISHED_PODS,
        )

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        return self._paged(
            "list PodDisruptionBudgets",
            self._policy.list_pod_disruption_budget_for_all_namespaces,
            budget_from_object,
        )

    def _paged(
        self, action: str, method: Callable[..., Any], decode: Callable[[JSON], T], **params: Any
    ) -> list[T]:
        found: list[T] = []
        token: str | None = None
        while True:
            page = self._calls.json(
                action, method, limit=PAGE_SIZE, **params, **({"_continue": token} if token else {})
            )
            found.extend(decode(item) for item in page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return found

    def get(self, namespace: str, name: str) -> Pod:
        obj = self._calls.json(
            f"get pod {namespace}/{name}", self._core.read_namespaced_pod, name, namespace
        )
        return pod_from_object(obj)

    def evict(self, namespace: str, name: str, grace_period_seconds: int | None = None) -> None:
        body: JSON = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": name, "namespace": namespace},
        }
        if grace_period_seconds is not None:
            body["deleteOptions"] = {"gracePeriodSeconds": grace_period_seconds}
        self._calls.json(
            f"evict pod {namespace}/{name}",
            self._core.create_namespaced_pod_eviction,
            name,
            namespace,
            body,
        )

    def delete(self, namespace: str, name: str) -> None:
        self._calls.json(
            f"delete pod {namespace}/{name}", self._core.delete_namespaced_pod, name, namespace
        )

    def list_disruption_budgets(self, namespace: str) -> list[PodDisruptionBudget]:
        answer = self._calls.json(
            f"list PodDisruptionBudgets in {namespace!r}",
            self._policy.list_namespaced_pod_disruption_budget,
            namespace,
        )
        return [budget_from_object(item) for item in answer.get("items") or []]
