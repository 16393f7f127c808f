"""The Kubernetes adapter reads what the scheduler reads from Nodes and Pods, and turns an
unreadable value into "unknown" instead of failing."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from brupop.adapters.kubernetes.resources import scheduling_fields
from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.adapters.kubernetes.resources.pods import pod_from_object
from brupop.domain.cluster.objects import Resources, Taint, Toleration

MI = 1024**2


def _pod(spec: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": spec}


def _container(cpu: object = None, memory: object = None, **extra: Any) -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"name": "c", "resources": {"requests": requests}, **extra}


def test_a_pods_request_sums_containers_and_takes_a_larger_init_container() -> None:
    pod = pod_from_object(
        _pod(
            {
                "containers": [_container("250m", "64Mi"), _container("0.5", "64Mi")],
                "initContainers": [_container("2", "16Mi")],
            }
        )
    )
    assert pod.requests == Resources(2000, 128 * MI)
    assert pod.requests_known


def test_a_sidecar_init_container_adds_to_the_running_containers() -> None:
    pod = pod_from_object(
        _pod(
            {
                "containers": [_container("100m", "10Mi")],
                "initContainers": [_container("200m", "20Mi", restartPolicy="Always")],
            }
        )
    )
    assert pod.requests == Resources(300, 30 * MI)


def test_containers_without_requests_request_nothing() -> None:
    pod = pod_from_object(_pod({"containers": [{"name": "c"}, {"name": "d", "resources": {}}]}))
    assert pod.requests == Resources() and pod.requests_known


def test_an_unreadable_request_makes_the_pods_requests_unknown_not_an_error() -> None:
    for bad in ("lots", "1" * 100, True, ["1"]):
        pod = pod_from_object(_pod({"containers": [_container(cpu=bad)]}))
        assert not pod.requests_known
        assert pod.requests == Resources()
    weird = pod_from_object(_pod({"containers": [{"name": "c", "resources": ["x"]}]}))
    assert weird.requests_known and weird.requests == Resources()


def test_a_bare_number_quantity_is_read_like_its_text() -> None:
    pod = pod_from_object(_pod({"containers": [_container(cpu=2, memory=1024)]}))
    assert pod.requests == Resources(2000, 1024)


def test_tolerations_default_to_the_equal_operator_and_node_selector_is_read() -> None:
    pod = pod_from_object(
        _pod(
            {
                "nodeSelector": {"disk": "ssd"},
                "tolerations": [
                    {"key": "dedicated", "value": "db", "effect": "NoSchedule"},
                    {"operator": "Exists"},
                    "garbage",
                ],
            }
        )
    )
    assert pod.node_selector == {"disk": "ssd"}
    assert pod.tolerations == (
        Toleration("dedicated", "Equal", "db", "NoSchedule"),
        Toleration("", "Exists", "", ""),
    )


def test_node_taints_times_and_allocatable_are_read() -> None:
    node = node_from_object(
        {
            "metadata": {
                "name": "n",
                "creationTimestamp": "2026-01-05T10:00:00Z",
                "deletionTimestamp": "2026-01-05T11:00:00Z",
            },
            "spec": {"taints": [{"key": "karpenter.sh/disrupted", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "3920m", "memory": "15Gi", "pods": "110"}},
        }
    )
    assert node.taints == (Taint("karpenter.sh/disrupted", "", "NoSchedule"),)
    assert node.created_at == datetime(2026, 1, 5, 10, 0, tzinfo=UTC)
    assert node.deleting
    assert node.allocatable == Resources(3920, 15 * 1024**3)


def test_missing_or_unreadable_allocatable_and_creation_time_are_unknown() -> None:
    for allocatable in (None, {}, {"cpu": "4"}, {"cpu": "4", "memory": "lots"}, "4"):
        node = node_from_object(
            {
                "metadata": {"name": "n", "creationTimestamp": "yesterday"},
                "status": {"allocatable": allocatable},
            }
        )
        assert node.allocatable is None
        assert node.created_at is None
        assert not node.deleting


def test_pods_with_equal_tolerations_requests_and_owners_share_one_copy() -> None:
    spec = {
        "containers": [_container("250m", "64Mi")],
        "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
    }
    meta = {"ownerReferences": [{"kind": "ReplicaSet", "name": "web-5d9", "controller": True}]}
    first, second = (
        pod_from_object({"metadata": {"name": name, **meta}, "spec": spec})
        for name in ("web-1", "web-2")
    )

    assert first.tolerations is second.tolerations
    assert first.requests is second.requests
    assert first.owners is second.owners


def test_the_shared_copies_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scheduling_fields, "_interned", {})
    monkeypatch.setattr(scheduling_fields, "MAX_INTERNED", 2)

    for cpu in range(5):
        scheduling_fields.interned(Resources(cpu, 0))

    assert len(scheduling_fields._interned) == 2
    late = Resources(4, 0)
    assert scheduling_fields.interned(late) is late


def test_a_pods_creation_time_is_read_and_an_unreadable_one_is_unknown() -> None:
    obj = _pod({})
    obj["metadata"]["creationTimestamp"] = "2026-01-05T08:00:00Z"
    created = pod_from_object(obj).created_at
    assert created is not None and created.isoformat() == "2026-01-05T08:00:00+00:00"
    obj["metadata"]["creationTimestamp"] = "yesterday"
    assert pod_from_object(obj).created_at is None
