"""The apiserver's pod mirror reads agent pods for token binding only, and reads those fields
exactly as the whole pod decoder does."""

from __future__ import annotations

from typing import Any

from brupop.adapters.kubernetes.resources.pods import pod_from_object
from brupop.adapters.kubernetes.tokens.agent_pods import agent_pod_from_object
from brupop.domain.cluster.objects import COMPONENT_LABEL

BINDING_FIELDS = (
    "name",
    "namespace",
    "uid",
    "node_name",
    "service_account",
    "terminating",
    "deletion_timestamp",
)


def _agent_pod(name: str, *, deleted: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": name,
        "namespace": "brupop-bottlerocket-aws",
        "uid": f"uid-{name}",
        "labels": {COMPONENT_LABEL: "agent", "controller-revision-hash": "5d8f7c9b6"},
        "annotations": {"kubectl.kubernetes.io/default-container": "brupop"},
    }
    if deleted is not None:
        meta["deletionTimestamp"] = deleted
    return {
        "metadata": meta,
        "spec": {
            "nodeName": "node-1",
            "serviceAccountName": "brupop-agent-service-account",
            "tolerations": [{"operator": "Exists"}],
            "containers": [{"name": "brupop", "resources": {"requests": {"cpu": "10m"}}}],
        },
        "status": {"phase": "Running"},
    }


def test_an_agent_pod_keeps_every_field_token_binding_reads() -> None:
    for obj in (_agent_pod("brupop-agent-a"), _agent_pod("b", deleted="2026-12-02T10:00:00Z")):
        lean, whole = agent_pod_from_object(obj), pod_from_object(obj)
        for field in BINDING_FIELDS:
            assert getattr(lean, field) == getattr(whole, field), field
        assert lean.labels.get(COMPONENT_LABEL) == "agent"


def test_an_agent_pod_leaves_out_what_binding_does_not_read_and_shares_its_labels() -> None:
    first, second = agent_pod_from_object(_agent_pod("a")), agent_pod_from_object(_agent_pod("b"))
    assert first.annotations == {} and first.tolerations == () and first.owners == ()
    assert first.labels is second.labels
    assert dict(first.labels) == {COMPONENT_LABEL: "agent"}


def test_a_pod_without_the_component_label_has_no_labels() -> None:
    obj = _agent_pod("a")
    del obj["metadata"]["labels"]
    assert dict(agent_pod_from_object(obj).labels) == {}
