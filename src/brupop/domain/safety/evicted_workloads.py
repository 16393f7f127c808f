"""The workloads a drain evicted pods of, and their ready replicas just before the drain.

The apiserver records them on the Node, in one annotation, before it evicts anything; after
the reboot the health gate compares each workload's ready replicas with the recorded count.
A Node annotation is used because it lives exactly as long as the node, is visible with
kubectl, needs no new resource or RBAC beyond the Node patch the apiserver already has, and
is written by the only process that knows what the drain evicts. The record is bounded (count
and size); a record that cannot be read counts as nothing recorded, and says so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from brupop.domain.cluster.objects import Pod

EVICTED_WORKLOADS_ANNOTATION = "brupop.bottlerocket.aws/evicted-workloads"
WORKLOADS_MAX = 200
ANNOTATION_MAX_LENGTH = 32 * 1024
# Owners whose controller recreates evicted pods elsewhere, with a readyReplicas to compare.
RECOVERING_KINDS = frozenset({"ReplicaSet", "StatefulSet", "ReplicationController"})


class EvictedWorkloadsError(ValueError):
    """An annotation that is not a record this module wrote; the message says why."""


@dataclass(frozen=True, order=True)
class WorkloadRef:
    """A workload by kind, namespace and name (`ReplicaSet default/web-7d9f`)."""

    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def key(self) -> str:
        """`ReplicaSet/default/web-7d9f`, the record's key."""
        return f"{self.kind}/{self.namespace}/{self.name}"


def workloads_of(pods: Iterable[Pod]) -> tuple[WorkloadRef, ...]:
    """The controlling workloads of `pods` (the pods a drain evicts), sorted, at most
    WORKLOADS_MAX; pods without such an owner (bare pods, Jobs) have nothing to recover."""
    found = {
        WorkloadRef(owner.kind, pod.namespace, owner.name)
        for pod in pods
        for owner in pod.owners
        if owner.controller and owner.kind in RECOVERING_KINDS
    }
    return tuple(sorted(found))[:WORKLOADS_MAX]


def encode_record(counts: Mapping[WorkloadRef, int]) -> str:
    """The annotation's value: a JSON object of key -> ready replicas, bounded in size (the
    workloads that do not fit are left out, the smallest keys kept)."""
    kept: dict[str, int] = {}
    for ref in sorted(counts)[:WORKLOADS_MAX]:
        candidate = {**kept, ref.key: max(0, int(counts[ref]))}
        if len(json.dumps(candidate, separators=(",", ":"))) > ANNOTATION_MAX_LENGTH:
            break
        kept = candidate
    return json.dumps(kept, separators=(",", ":"), sort_keys=True)


def decode_record(text: str) -> dict[WorkloadRef, int]:
    """The counts an annotation holds; EvictedWorkloadsError when it is not such a record."""
    if len(text) > ANNOTATION_MAX_LENGTH:
        raise EvictedWorkloadsError(f"longer than {ANNOTATION_MAX_LENGTH} characters")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # nesting deeper than the parser's stack
        raise EvictedWorkloadsError("not JSON") from None
    if not isinstance(data, dict) or len(data) > WORKLOADS_MAX:
        raise EvictedWorkloadsError(f"not an object of at most {WORKLOADS_MAX} workloads")
    counts: dict[WorkloadRef, int] = {}
    for key, value in data.items():
        parts = key.split("/")
        if len(parts) != 3 or not all(parts) or type(value) is not int or value < 0:
            raise EvictedWorkloadsError(f"{key!r}: not kind/namespace/name -> ready replicas")
        counts[WorkloadRef(*parts)] = value
    return counts


def record_on(annotations: Mapping[str, str]) -> dict[WorkloadRef, int] | None:
    """The record a Node carries, None when it carries none."""
    text = annotations.get(EVICTED_WORKLOADS_ANNOTATION)
    return None if text is None else decode_record(text)
