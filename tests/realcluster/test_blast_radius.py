"""On a real kube-apiserver, one node cannot stop the fleet: a shadow whose status holds a
failure at the end of the calendar (written by anyone the cluster lets write shadows) is
quarantined with an Event while the controller starts the others, and the apiserver refuses
the same report from an agent with a 400 naming the field, storing nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE, ShadowStatus, shadow_name
from brupop.domain.states import UpdateState
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane, node_ready
from tests.realcluster.controllers import controller_over, running
from tests.realcluster.test_token_verification import agent_pod, start_apiserver, token_of
from tests.support.control_plane.chart_install import NAMESPACE, apply_chart
from tests.support.polling import wait_until

END_OF_CALENDAR = "9999-12-31T23:59:59Z"


def _status(failed_at: str | None = None) -> ShadowStatus:
    return ShadowStatus.model_validate(
        {
            "current_version": "1.19.0",
            "target_version": "1.20.0",
            "current_state": "Idle",
            "crash_count": 1 if failed_at else 0,
            "state_transition_failure_timestamp": failed_at,
        }
    )


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> KubernetesCluster:
    apply_chart(control_plane.api)
    return KubernetesCluster(control_plane.api, NAMESPACE)


def _opted_in_node(plane: ControlPlane, prefix: str) -> tuple[str, str]:
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    meta = client.V1ObjectMeta(
        name=name, annotations=KWOK_ANNOTATION, labels={OPT_IN_LABEL: OPT_IN_VALUE}
    )
    created = plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(plane.core, name), f"{name} Ready", seconds=30)
    return name, created.metadata.uid


@pytest.fixture
def three_nodes(control_plane: ControlPlane, admin: KubernetesCluster) -> Iterator[list[str]]:
    """Three opted-in kwok Nodes with shadows whose agents reported Idle, 1.20.0 offered."""
    nodes = [_opted_in_node(control_plane, "blast") for _ in range(3)]
    for name, uid in nodes:
        admin.shadows.create(name, uid)
        admin.shadows.update_status(shadow_name(name), _status())
    yield [name for name, _ in nodes]
    for name, _ in nodes:
        admin.shadows.delete(shadow_name(name))
        control_plane.core.delete_node(name)


def _quarantine_events(plane: ControlPlane, shadow: str) -> list[str]:
    events = plane.core.list_namespaced_event(
        NAMESPACE, field_selector=f"involvedObject.name={shadow}"
    )
    return [e.message for e in events.items if e.reason == "ShadowQuarantined"]


def test_a_shadow_failed_at_the_end_of_the_calendar_is_quarantined_and_the_others_start(
    control_plane: ControlPlane, admin: KubernetesCluster, three_nodes: list[str]
) -> None:
    hostile, *others = three_nodes
    admin.shadows.update_status(shadow_name(hostile), _status(END_OF_CALENDAR))
    service = controller_over(admin, "blast-1", f"blast-{uuid.uuid4().hex[:6]}", limit=None)

    def started(node: str) -> bool:
        return admin.shadows.get(shadow_name(node)).spec.state is not UpdateState.IDLE

    with running(service):
        wait_until(lambda: all(started(n) for n in others), "the others started", seconds=60)
        wait_until(
            lambda: _quarantine_events(control_plane, shadow_name(hostile)),
            "a ShadowQuarantined Event",
            seconds=30,
        )
    assert not started(hostile)
    assert (
        "9999-12-31T23:59:59+00:00 is later than now"
        in (_quarantine_events(control_plane, shadow_name(hostile))[0])
    )


def test_the_apiserver_refuses_a_failure_at_the_end_of_the_calendar_naming_the_field(
    control_plane: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    apply_chart(control_plane.api)
    node, uid = _opted_in_node(control_plane, "blast-agent")
    cluster = KubernetesCluster(control_plane.api, namespace)
    cluster.shadows.create(node, uid)
    cluster.shadows.update_status(shadow_name(node), _status())
    token = token_of(control_plane, agent_pod(control_plane, namespace, "agent-blast", node))
    headers = {"BrupopNodeName": node, "BrupopK8sAuthToken": token, "BrupopNodeUid": uid}
    try:
        for apiserver in start_apiserver(control_plane, namespace, node, tmp_path):
            answer = apiserver.http.put(
                "/bottlerocket-node-resource",
                headers=headers,
                json=_status(END_OF_CALENDAR).model_dump(mode="json"),
            )
            assert answer.status_code == 400, answer.text
            assert answer.json()["field"] == "status.state_transition_failure_timestamp"
        stored = cluster.shadows.get(shadow_name(node)).status
        assert stored is not None and stored.state_transition_failure_timestamp is None
    finally:
        control_plane.core.delete_node(node)
