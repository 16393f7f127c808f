"""The chart's RBAC on a real kube-apiserver (`--authorization-mode=Node,RBAC`): brupop's
Kubernetes adapters, holding TokenRequest tokens of the chart's ServiceAccounts, make every call
the controller and the apiserver make without one 403; the grants the issue named as unused are
refused; and a missing grant gives one line naming the verb and the resource."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

import pytest
import structlog
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.cluster.objects import NODE_EVENT_NAMESPACE, EventSubject
from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import ForbiddenError
from tests.realcluster.conftest import ControlPlane
from tests.realcluster.controllers import controller_over, running
from tests.realcluster.rbac_world import (
    World,
    apiserver_calls,
    controller_calls,
    event_reason,
    make_world,
    recorded_events,
    remove_world,
)
from tests.support.control_plane.chart_install import (
    APISERVER_ACCOUNT,
    CONTROLLER_ACCOUNT,
    NAMESPACE,
    apply_chart,
    apply_rbac_document,
    chart_documents,
    cluster_as,
    service_account_token,
    token_api_client,
)
from tests.support.polling import wait_until

SHADOWS = "brupop.bottlerocket.aws"


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> KubernetesCluster:
    """The chart applied; brupop's adapters as the admin (the session's client, kept open)."""
    apply_chart(control_plane.api)
    return KubernetesCluster(control_plane.api, NAMESPACE)


@pytest.fixture
def world(control_plane: ControlPlane, admin: KubernetesCluster) -> Iterator[World]:
    made = make_world(control_plane, admin)
    yield made
    remove_world(control_plane, made)


def ca_of(plane: ControlPlane) -> Any:
    return plane.folder / "pki" / "ca.crt"


def forbidden_calls(calls: Iterator[tuple[str, Any]]) -> list[str]:
    """Run each call in order; the ones the API refused with 403, with the error's text."""
    refused = []
    for name, call in calls:
        try:
            call()
        except ForbiddenError as error:
            refused.append(f"{name}: {error}")
    return refused


def test_the_apiserver_makes_every_call_of_an_agents_update_without_a_403(
    control_plane: ControlPlane, world: World
) -> None:
    apiserver = cluster_as(control_plane.api, ca_of(control_plane), APISERVER_ACCOUNT)
    assert forbidden_calls(apiserver_calls(apiserver, world)) == []
    # Recording never raises: the Event itself shows that the create (and the Node's get) passed.
    (event,) = recorded_events(control_plane, NODE_EVENT_NAMESPACE, event_reason(EventSubject.NODE))
    assert event.involved_object.uid == world.node_uid


def test_the_controller_makes_every_call_of_a_pass_without_a_403(
    control_plane: ControlPlane, admin: KubernetesCluster, world: World
) -> None:
    shadow = admin.shadows.create(world.node, world.node_uid)
    status = ShadowStatus(
        current_version="1.0.0", target_version="1.1.0", current_state=UpdateState.IDLE
    )
    admin.shadows.update_status(shadow.name, status)
    controller = cluster_as(control_plane.api, ca_of(control_plane), CONTROLLER_ACCOUNT)
    assert forbidden_calls(controller_calls(controller, world)) == []
    for subject in (EventSubject.SHADOW, EventSubject.UPDATE_POLICY):
        events = recorded_events(control_plane, NAMESPACE, event_reason(subject))
        assert events and all(event.involved_object.uid for event in events)


# (service account, verb, API group, resource, subresource, namespace or None for cluster-wide)
REMOVED = [
    (CONTROLLER_ACCOUNT, "update", SHADOWS, "bottlerocketshadows", "", NAMESPACE),
    (CONTROLLER_ACCOUNT, "update", SHADOWS, "bottlerocketshadows", "status", NAMESPACE),
    (CONTROLLER_ACCOUNT, "patch", "", "events", "", NAMESPACE),
    (APISERVER_ACCOUNT, "patch", SHADOWS, "bottlerocketshadows", "", NAMESPACE),
    (APISERVER_ACCOUNT, "update", SHADOWS, "bottlerocketshadows", "", NAMESPACE),
    (APISERVER_ACCOUNT, "get", SHADOWS, "bottlerocketshadows", "status", NAMESPACE),
    (APISERVER_ACCOUNT, "update", SHADOWS, "bottlerocketshadows", "status", NAMESPACE),
    (APISERVER_ACCOUNT, "list", "", "nodes", "", None),
    (APISERVER_ACCOUNT, "watch", "", "nodes", "", None),
    (APISERVER_ACCOUNT, "watch", "", "pods", "", None),
    (APISERVER_ACCOUNT, "get", "policy", "poddisruptionbudgets", "", "default"),
    (APISERVER_ACCOUNT, "create", "authorization.k8s.io", "subjectaccessreviews", "", None),
]


@pytest.mark.parametrize(
    ("account", "verb", "group", "resource", "subresource", "namespace"),
    REMOVED,
    ids=[f"{a.split('-')[1]}-{v}-{r}{'/' + s if s else ''}" for a, v, _, r, s, _ in REMOVED],
)
def test_a_grant_the_processes_never_use_is_refused(
    control_plane: ControlPlane,
    admin: KubernetesCluster,
    account: str,
    verb: str,
    group: str,
    resource: str,
    subresource: str,
    namespace: str | None,
) -> None:
    token = service_account_token(control_plane.api, account)
    caller = token_api_client(control_plane.api.configuration.host, ca_of(control_plane), token)
    attributes = client.V1ResourceAttributes(
        verb=verb, group=group, resource=resource, subresource=subresource, namespace=namespace
    )
    review = client.V1SelfSubjectAccessReview(
        spec=client.V1SelfSubjectAccessReviewSpec(resource_attributes=attributes)
    )
    with caller:
        answer = client.AuthorizationV1Api(caller).create_self_subject_access_review(review)
    assert answer.status.allowed is False


def refusals(lines: list[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    """The lines of passes the cluster refused."""
    return [line for line in lines if line["event"] == "controller.cluster_unavailable"]


def test_a_missing_grant_is_one_warning_naming_the_verb_and_the_resource(
    control_plane: ControlPlane, admin: KubernetesCluster, world: World
) -> None:
    account = "brupop-controller-without-node-list"
    grant_controller_role_without(control_plane, account, resource="nodes", verb="list")
    cluster = cluster_as(control_plane.api, ca_of(control_plane), account)
    replica = controller_over(cluster, "no-node-list", f"lease-{world.node}")
    with structlog.testing.capture_logs() as lines, running(replica):
        wait_until(
            lambda: (
                {"controller.cluster_unavailable", "watch.interrupted"}
                <= {line["event"] for line in lines}
            ),
            "the pass and the Node watch refused",
            seconds=30,
        )
        seen = len(refusals(lines))
        wait_until(
            lambda: len(refusals(lines)) >= seen + 3,
            "three more passes: the same line, never a traceback",
            seconds=30,
        )
    refused = refusals(lines)
    assert {line["error"] for line in refused} == {"ForbiddenError"}
    assert all(line["log_level"] == "warning" for line in refused)
    assert "list nodes: forbidden: list nodes (cluster-wide) for " in refused[0]["reason"]
    assert f"system:serviceaccount:{NAMESPACE}:{account}" in refused[0]["reason"]
    assert "\n" not in refused[0]["reason"]
    watches = [line for line in lines if line["event"] == "watch.interrupted"]
    assert {line["kind"] for line in watches} == {"nodes"}  # shadows and policies are allowed
    assert "forbidden: list nodes (cluster-wide) for " in watches[0]["reason"]
    assert not [line for line in lines if "exc_info" in line or line["log_level"] == "error"]


def grant_controller_role_without(
    control_plane: ControlPlane, account: str, *, resource: str, verb: str
) -> None:
    """A ServiceAccount bound to the controller's Role and to its ClusterRole less one verb."""
    (cluster_role,) = [
        doc
        for doc in chart_documents("ClusterRole")
        if doc["metadata"]["name"] == "brupop-controller-role"
    ]
    rules = [
        rule | {"verbs": [v for v in rule["verbs"] if v != verb]}
        if resource in rule["resources"]
        else rule
        for rule in cluster_role["rules"]
    ]
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
    meta = {"name": account}
    for doc in (
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta | {"namespace": NAMESPACE}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": meta}
        | {"rules": rules},
        binding("ClusterRoleBinding", meta, "ClusterRole", account, subject),
        binding(
            "RoleBinding",
            meta | {"namespace": NAMESPACE},
            "Role",
            "brupop-controller-role",
            subject,
        ),
    ):
        apply_rbac_document(control_plane.api, doc)


def binding(
    kind: str, meta: dict[str, str], role_kind: str, role: str, subjects: list[dict[str, str]]
) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
        "subjects": subjects,
    }
