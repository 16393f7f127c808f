"""On a real kube-apiserver: the census's lists from the watch cache (resourceVersion=0), which
answers them in one piece whatever the limit, while a drain's own reads stay paged consistent
reads; a resync's lists of versions, asked for as metadata only; and a shadow status write
guarded by the resourceVersion it was computed from, refused with 409 when an agent's report
landed since."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources import pods as pod_adapter
from brupop.domain.shadow import ShadowStatus
from brupop.domain.states import UpdateState
from brupop.ports.errors import ConflictError
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane, node_ready
from tests.support.control_plane.chart_install import (
    CONTROLLER_ACCOUNT,
    NAMESPACE,
    apply_chart,
    cluster_as,
)
from tests.support.polling import wait_until

PODS = 5


@pytest.fixture(scope="module")
def admin(control_plane: ControlPlane) -> KubernetesCluster:
    apply_chart(control_plane.api)
    return KubernetesCluster(control_plane.api, NAMESPACE)


@pytest.fixture
def node(control_plane: ControlPlane) -> Iterator[tuple[str, str]]:
    """A Ready kwok Node (name, uid), deleted afterwards with what it owns."""
    name = f"reads-{uuid.uuid4().hex[:6]}"
    meta = client.V1ObjectMeta(name=name, annotations=KWOK_ANNOTATION)
    created = control_plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(control_plane.core, name), f"{name} Ready", seconds=30)
    yield name, created.metadata.uid
    control_plane.core.delete_node(name)


@pytest.fixture
def pods_on(control_plane: ControlPlane, node: tuple[str, str]) -> Iterator[str]:
    """PODS pods on the node, in a namespace of their own; that namespace."""
    namespace = f"reads-{uuid.uuid4().hex[:6]}"
    core = control_plane.core
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    for n in range(PODS):
        spec = client.V1PodSpec(
            node_name=node[0],
            service_account_name="default",
            containers=[client.V1Container(name="web", image="registry.invalid/web:1")],
        )
        core.create_namespaced_pod(
            namespace, client.V1Pod(metadata=client.V1ObjectMeta(name=f"web-{n}"), spec=spec)
        )
    yield namespace
    core.delete_namespace(namespace)


def test_the_watch_cache_answers_a_resource_version_0_list_in_one_piece_whatever_its_limit(
    control_plane: ControlPlane, pods_on: str
) -> None:
    core = control_plane.core

    def listed(**version: str) -> dict[str, Any]:
        answer = core.list_namespaced_pod(pods_on, limit=2, _preload_content=False, **version)
        parsed: dict[str, Any] = json.loads(answer.data)
        return parsed

    wait_until(lambda: len(listed(resource_version="0")["items"]) == PODS, "the cache has all")
    cached, consistent = listed(resource_version="0"), listed()
    assert (len(cached["items"]), "continue" in cached["metadata"]) == (PODS, False)
    assert (len(consistent["items"]), "continue" in consistent["metadata"]) == (2, True)


def test_the_census_reads_every_pod_from_the_cache_and_a_drain_pages_its_nodes_pods(
    control_plane: ControlPlane,
    admin: KubernetesCluster,
    node: tuple[str, str],
    pods_on: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(pod_adapter, "PAGE_SIZE", 2)
    controller = cluster_as(
        control_plane.api, control_plane.folder / "pki" / "ca.crt", CONTROLLER_ACCOUNT
    )
    wanted = {f"web-{n}" for n in range(PODS)}
    with controller.api_client:
        wait_until(
            lambda: (
                wanted <= {p.name for p in controller.pods.list_all() if p.namespace == pods_on}
            ),
            "the cache serves every pod",
            seconds=10,
        )
        on_node = controller.pods.list_on_node(node[0])
        budgets = controller.pods.list_all_disruption_budgets()
    assert {pod.name for pod in on_node} == wanted  # three pages of a consistent read
    assert isinstance(budgets, list)


def test_a_status_write_guarded_by_a_version_an_agent_moved_past_is_refused(
    admin: KubernetesCluster, node: tuple[str, str]
) -> None:
    read = admin.shadows.create(*node)
    report = ShadowStatus(
        current_version="1.0.0", target_version="1.1.0", current_state=UpdateState.IDLE
    )
    current = admin.shadows.update_status(read.name, report)  # the agent, after that read
    failed = report.model_copy(update={"crash_count": 1})

    with pytest.raises(ConflictError, match="409 Conflict"):
        admin.shadows.update_status(read.name, failed, read.resource_version)
    assert admin.shadows.get(read.name).status == report

    written = admin.shadows.update_status(read.name, failed, current.resource_version)
    assert written.status == failed
    assert admin.shadows.get(read.name).status == failed


def test_a_resyncs_metadata_only_lists_give_the_versions_reads_give(
    admin: KubernetesCluster, node: tuple[str, str]
) -> None:
    """list_versions asks for a PartialObjectMetadataList (shadows: a custom resource; Nodes:
    built in); what it names must be what reading each object gives."""
    shadow = admin.shadows.create(*node)

    def agree() -> bool:  # kwok may write the Node between the list and the read: poll
        listed = (
            admin.nodes.list_versions().versions.get(node[0]),
            admin.shadows.list_versions().versions.get(shadow.name),
        )
        read = (admin.nodes.get(node[0]).resource_version, admin.shadows.get(shadow.name))
        return listed == (read[0], read[1].resource_version) and None not in listed

    wait_until(agree, "the lists of versions agree with the reads", seconds=30)
