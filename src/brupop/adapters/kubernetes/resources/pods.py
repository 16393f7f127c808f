"""KubernetesPodRepository: pods on a node, PodDisruptionBudgets, policy/v1 evictions, deletion."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from kubernetes.client import CoreV1Api, PolicyV1Api

from brupop.adapters.kubernetes.api.calls import JSON, ApiCalls
from brupop.adapters.kubernetes.api.decoding import entries, mapping, reads, text_map, text_or_none
from brupop.adapters.kubernetes.resources.nodes import condition_true
from brupop.adapters.kubernetes.resources.scheduling_fields import (
    interned,
    node_selector_of,
    requests_of,
    timestamp_of,
    tolerations_of,
)
from brupop.domain.cluster.disruption_budget import int_or_percent
from brupop.domain.cluster.label_selector import Requirement, SelectorOperator
from brupop.domain.cluster.objects import OwnerReference, Pod, PodDisruptionBudget, PodPhase
from brupop.domain.cluster.resources import NO_RESOURCES

LONG_AGO = datetime(1970, 1, 1, tzinfo=UTC)

PAGE_SIZE = 500
FROM_CACHE = "0"
"""The resourceVersion of a list any recent state may answer: kube-apiserver serves it from
its watch cache, not with a quorum read of etcd (on clusters before 1.31 every other list is
one). It then answers in one piece, whatever the `limit` (1.37 does); a server that pages it
anyway sends `continue`, followed without the version (the token carries its own)."""
# Finished pods hold no resources and a drain only deletes them: the API leaves them out.
UNFINISHED_PODS = "status.phase!=Succeeded,status.phase!=Failed"
T = TypeVar("T")
_PHASES = frozenset(phase.value for phase in PodPhase)


@reads("Pod")
def pod_from_object(obj: JSON) -> Pod:
    """The domain Pod of a `v1 Pod` object."""
    meta = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    status = mapping(obj.get("status"))
    phase = str(status.get("phase") or "")
    requests = requests_of(spec)
    return Pod(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        uid=str(meta.get("uid") or ""),
        node_name=text_or_none(spec.get("nodeName")),
        phase=PodPhase(phase) if phase in _PHASES else PodPhase.UNKNOWN,
        labels=text_map(meta.get("labels")),
        annotations=text_map(meta.get("annotations")),
        owners=interned(
            tuple(
                OwnerReference(
                    kind=str(ref.get("kind") or ""),
                    name=str(ref.get("name") or ""),
                    controller=bool(ref.get("controller")),
                )
                for ref in entries(meta.get("ownerReferences"))
            )
        ),
        service_account=text_or_none(spec.get("serviceAccountName")),
        terminating=bool(meta.get("deletionTimestamp")),
        deletion_timestamp=deletion_timestamp_of(meta),
        ready=condition_true(status, "Ready"),
        requests=requests if requests is not None else NO_RESOURCES,
        requests_known=requests is not None,
        node_selector=node_selector_of(spec),
        tolerations=tolerations_of(spec),
        created_at=timestamp_of(meta, "creationTimestamp"),
    )


def deletion_timestamp_of(meta: JSON) -> datetime | None:
    """metadata.deletionTimestamp; one that is set but unreadable counts as long past (a token
    bound to the object is refused rather than kept)."""
    if not meta.get("deletionTimestamp"):
        return None
    return timestamp_of(meta, "deletionTimestamp") or LONG_AGO


@reads("PodDisruptionBudget")
def budget_from_object(obj: JSON) -> PodDisruptionBudget:
    """The domain PodDisruptionBudget: matchLabels, matchExpressions, numbers and percentages.

    A selector that cannot be read is taken to select every pod of the namespace, so a drain
    still counts the budget rather than ignoring it.
    """
    meta = mapping(obj.get("metadata"))
    spec = mapping(obj.get("spec"))
    selector = spec.get("selector")
    labels, expressions = _selector_of(selector) if isinstance(selector, dict) else ({}, ())
    return PodDisruptionBudget(
        name=str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or ""),
        selector=labels,
        expressions=expressions,
        selects_none=selector is None,
        min_available=int_or_percent(spec.get("minAvailable")),
        max_unavailable=int_or_percent(spec.get("maxUnavailable")),
    )


_OPERATORS = {
    "In": SelectorOperator.IN,
    "NotIn": SelectorOperator.NOT_IN,
    "Exists": SelectorOperator.EXISTS,
    "DoesNotExist": SelectorOperator.DOES_NOT_EXIST,
}


def _selector_of(selector: JSON) -> tuple[dict[str, str], tuple[Requirement, ...]]:
    """A metav1 LabelSelector's matchLabels and matchExpressions; both empty when unreadable."""
    labels = selector.get("matchLabels") or {}
    terms = selector.get("matchExpressions") or []
    if not isinstance(labels, dict) or not isinstance(terms, list):
        return {}, ()
    requirements = [_requirement_of(term) for term in terms]
    if any(requirement is None for requirement in requirements):
        return {}, ()
    return {str(k): str(v) for k, v in labels.items()}, tuple(r for r in requirements if r)


def _requirement_of(term: object) -> Requirement | None:
    if not isinstance(term, dict):
        return None
    operator = _OPERATORS.get(str(term.get("operator")))
    values = term.get("values") or []
    if operator is None or not isinstance(values, list):
        return None
    return Requirement(str(term.get("key") or ""), operator, tuple(str(v) for v in values))


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
        """The census's pods: a moment stale is fine (it is reused for 30 s), so from the cache."""
        return self._paged(
            "list pods",
            self._core.list_pod_for_all_namespaces,
            pod_from_object,
            field_selector=UNFINISHED_PODS,
            resource_version=FROM_CACHE,
        )

    def list_all_disruption_budgets(self) -> list[PodDisruptionBudget]:
        """The census's budgets, from the cache like its pods (an eviction checks the real
        budget anyway)."""
        return self._paged(
            "list PodDisruptionBudgets",
            self._policy.list_pod_disruption_budget_for_all_namespaces,
            budget_from_object,
            resource_version=FROM_CACHE,
        )

    def _paged(
        self, action: str, method: Callable[..., Any], decode: Callable[[JSON], T], **params: Any
    ) -> list[T]:
        found: list[T] = []
        while True:
            page = self._calls.json(action, method, limit=PAGE_SIZE, **params)
            found.extend(decode(item) for item in page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return found
            params = {k: v for k, v in params.items() if k != "resource_version"}
            params["_continue"] = token

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
