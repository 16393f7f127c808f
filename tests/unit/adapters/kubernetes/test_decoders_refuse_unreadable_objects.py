"""Whatever the API (or a proxy in front of it) sends, a decoder returns a well-typed domain
value or raises InvalidObjectError: nothing else may escape into the services."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brupop.adapters.kubernetes.api.calls import _parse
from brupop.adapters.kubernetes.resources.leases import lease_from_object
from brupop.adapters.kubernetes.resources.nodes import node_from_object
from brupop.adapters.kubernetes.resources.pods import budget_from_object, pod_from_object
from brupop.adapters.kubernetes.resources.shadow_objects import shadow_from_object
from brupop.adapters.kubernetes.tokens.agent_pods import agent_pod_from_object
from brupop.adapters.kubernetes.tokens.service_accounts import service_account_from_object
from brupop.adapters.kubernetes.tokens.token_reviewer import identity_from_review
from brupop.domain.cluster.objects import (
    Lease,
    Node,
    Pod,
    PodDisruptionBudget,
    ServiceAccount,
    TokenIdentity,
)
from brupop.domain.cluster.token_binding import deletion_invalidates
from brupop.domain.shadow import Shadow
from brupop.ports.errors import InvalidObjectError, UnavailableError
from tests.support.arbitrary_json import JSON_VALUES, shaped_like
from tests.support.outside_input import deeply_nested

META = {
    "name": None,
    "namespace": None,
    "uid": None,
    "resourceVersion": None,
    "labels": None,
    "annotations": None,
    "ownerReferences": None,
    "creationTimestamp": None,
    "deletionTimestamp": None,
}
SHAPES: dict[str, dict[str, Any]] = {
    "node": {
        "metadata": META,
        "spec": {"unschedulable": None, "taints": None},
        "status": {"conditions": None, "addresses": None, "allocatable": None},
    },
    "pod": {
        "metadata": META,
        "spec": {"nodeName": None, "containers": None, "initContainers": None, "tolerations": None},
        "status": {"phase": None, "conditions": None},
    },
    "budget": {
        "metadata": META,
        "spec": {
            "selector": {"matchLabels": None, "matchExpressions": None},
            "minAvailable": None,
            "maxUnavailable": None,
        },
    },
    "agent_pod": {"metadata": META, "spec": {"nodeName": None, "serviceAccountName": None}},
    "lease": {
        "metadata": META,
        "spec": {"holderIdentity": None, "leaseDurationSeconds": None, "renewTime": None},
    },
    "review": {"status": {"authenticated": None, "user": {"username": None, "extra": None}}},
    "shadow": {"metadata": META, "spec": {"state": None, "version": None}, "status": None},
    "service_account": {"metadata": META},
}
Decoder = Callable[[Any], Any]
DECODERS: dict[str, tuple[Decoder, type[Any]]] = {
    "node": (node_from_object, Node),
    "pod": (pod_from_object, Pod),
    "agent_pod": (agent_pod_from_object, Pod),
    "budget": (budget_from_object, PodDisruptionBudget),
    "lease": (lease_from_object, Lease),
    "review": (identity_from_review, TokenIdentity),
    "shadow": (shadow_from_object, Shadow),
    "service_account": (service_account_from_object, ServiceAccount),
}


def _all_text(mapping: Any) -> bool:
    return all(isinstance(k, str) and isinstance(v, str) for k, v in mapping.items())


def _well_typed(kind: str, value: Any) -> None:
    assert isinstance(value, DECODERS[kind][1])
    if kind in ("node", "pod", "agent_pod"):
        assert isinstance(value.name, str)
        assert _all_text(value.labels)
        assert _all_text(value.annotations)
    if kind == "review":
        assert value.authenticated in (True, False)
        assert value.username is None or isinstance(value.username, str)
        assert all(isinstance(audience, str) for audience in value.audiences)
    if kind in ("pod", "agent_pod", "service_account"):
        deleted = value.deletion_timestamp
        assert deleted is None or isinstance(deleted, datetime)
        assert isinstance(value.uid, str)
    if kind == "lease":
        assert isinstance(value.duration_seconds, int)
        assert value.holder is None or isinstance(value.holder, str)


def _decode(kind: str, obj: Any) -> None:
    try:
        value = DECODERS[kind][0](obj)
    except InvalidObjectError:
        return
    _well_typed(kind, value)


@pytest.mark.parametrize("kind", sorted(DECODERS))
@settings(max_examples=100, deadline=1000)
@given(data=st.data())
def test_an_object_of_any_shape_is_read_or_refused_as_invalid(
    kind: str, data: st.DataObject
) -> None:
    _decode(kind, data.draw(shaped_like(SHAPES[kind]) | JSON_VALUES))


@pytest.mark.parametrize("kind", sorted(DECODERS))
def test_a_deeply_nested_field_is_read_or_refused_as_invalid(kind: str) -> None:
    deep = deeply_nested()
    for obj in (
        {"metadata": deep},
        {"metadata": {"labels": {"a": deep}}},
        {"spec": deep, "status": {"conditions": deep}},
    ):
        _decode(kind, obj)


def test_a_node_address_of_any_form_is_kept_as_text_for_the_probe_to_judge() -> None:
    node = node_from_object(
        {
            "metadata": {"name": "n"},
            "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.9:8080"}]},
        }
    )
    assert node.internal_ip == "10.0.0.9:8080"


def test_a_deletion_timestamp_that_cannot_be_read_counts_as_long_past() -> None:
    meta = {"name": "p", "deletionTimestamp": "soon"}

    pod = pod_from_object({"metadata": meta})
    account = service_account_from_object({"metadata": meta})

    assert pod.terminating and pod.deletion_timestamp == account.deletion_timestamp
    assert deletion_invalidates(pod.deletion_timestamp, datetime(2000, 1, 1, tzinfo=UTC))


def test_a_review_says_authenticated_only_for_a_literal_true() -> None:
    for value in ("true", 1, "yes", [True], {"a": True}):
        identity = identity_from_review({"status": {"authenticated": value}})
        assert identity.authenticated is False


@pytest.mark.parametrize(
    "body", [b"[" * 100_000 + b"]" * 100_000, b'{"a":' * 50_000 + b"1" + b"}" * 50_000]
)
def test_an_answer_nested_deeper_than_the_parser_can_go_is_unavailable(body: bytes) -> None:
    with pytest.raises(UnavailableError):
        _parse("get node 'n'", body)
