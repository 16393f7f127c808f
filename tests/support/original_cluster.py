"""The original's install made real on a control plane, mid-rollout: its CRD, namespace and
ServiceAccount, its controller Deployment, the Helm record of its `brupop-crd` release, kwok
Nodes with its opt-in label (and the marks its agents left: a plain cordon, the load-balancer
label), one agent pod per node from its DaemonSet, and the shadows as its agents wrote them.

Nothing runs the original's processes: the snapshot is the cluster as they left it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.simulation.fleet.real_cluster.connection import ClusterAccess
from brupop.simulation.fleet.real_cluster.fleet_objects import ApiFleet
from tests.support.control_plane.chart_install import crd_established
from tests.support.original_install import (
    COMPONENT_LABEL,
    CRD_NAME,
    GROUP,
    IMAGE,
    LB_EXCLUSION,
    NAMESPACE,
    OPT_IN,
    OriginalNode,
    original_shadow,
    original_shadow_crd,
)
from tests.support.polling import wait_until
from tests.support.python_install import AGENT_ACCOUNT, AGENT_DAEMONSET, AGENT_LABELS

POLICY_CRD = "bottlerocketupdatepolicies.brupop.bottlerocket.aws"
RELEASE_NAMESPACE = "default"
NO_NODE = {"migration.brupop.test/no-node": "none"}  # nothing here runs the original's pods


@dataclass(frozen=True)
class OriginalCluster:
    """What the original's install holds: per node, its agent pod and shadow uid."""

    fleet: ApiFleet
    agent_pods: dict[str, str]
    shadow_uids: dict[str, str]


def remove_brupop_crds(api: client.ApiClient) -> None:
    """Delete both CRDs (and so every shadow and policy) and wait until they are gone."""
    extensions = client.ApiextensionsV1Api(api)
    for name in (CRD_NAME, POLICY_CRD):
        try:
            extensions.delete_custom_resource_definition(name)
        except ApiException as error:
            if error.status != 404:
                raise
    names = {CRD_NAME, POLICY_CRD}
    listed = extensions.list_custom_resource_definition
    wait_until(
        lambda: not names & {c.metadata.name for c in listed().items},
        "brupop's CRDs deleted",
        seconds=60,
    )


def install_original(access: ClusterAccess, nodes: Sequence[OriginalNode]) -> OriginalCluster:
    """The original's objects, then its fleet mid-rollout (the shadows last, as its agents
    created them once their pods ran)."""
    api = access.admin
    core, apps = client.CoreV1Api(api), client.AppsV1Api(api)
    _create(core.create_namespace, {"metadata": {"name": NAMESPACE}})
    for account in (
        AGENT_ACCOUNT,
        "brupop-apiserver-service-account",
        "brupop-controller-service-account",
    ):
        _create(
            lambda body: core.create_namespaced_service_account(NAMESPACE, body),
            {"metadata": {"name": account}},
        )
    extensions = client.ApiextensionsV1Api(api)
    extensions.create_custom_resource_definition(original_shadow_crd())
    wait_until(
        lambda: crd_established(extensions, CRD_NAME), f"CRD {CRD_NAME} established", seconds=30
    )
    apps.create_namespaced_deployment(NAMESPACE, _controller_deployment())
    core.create_namespaced_secret(RELEASE_NAMESPACE, _release_record())
    fleet = ApiFleet(access, NAMESPACE)
    agent_pods = {}
    for index, node in enumerate(nodes):
        labels = dict([OPT_IN, ("kubernetes.io/hostname", node.name)])
        if node.lb_excluded:
            labels |= dict([LB_EXCLUSION])
        fleet.add_node(node.name, labels=labels)
        agent_pods[node.name] = f"brupop-agent-{index}q7zx"
        fleet.add_pod(
            NAMESPACE,
            agent_pods[node.name],
            node.name,
            labels=AGENT_LABELS,
            owners=(AGENT_DAEMONSET,),
            service_account=AGENT_ACCOUNT,
        )
    fleet.finish()
    objects = client.CustomObjectsApi(api)
    now = datetime.now(UTC)
    uids = {}
    for node in nodes:
        if node.cordoned:
            core.patch_node(node.name, {"spec": {"unschedulable": True}})
        body = original_shadow(node, core.read_node(node.name).metadata.uid, now)
        created = objects.create_namespaced_custom_object(
            GROUP, "v2", NAMESPACE, "bottlerocketshadows", body
        )
        uids[node.name] = created["metadata"]["uid"]
        status = {"status": body["status"]}
        objects.patch_namespaced_custom_object_status(
            GROUP, "v2", NAMESPACE, "bottlerocketshadows", body["metadata"]["name"], status
        )
    return OriginalCluster(fleet, agent_pods, uids)


def remove_original(access: ClusterAccess, nodes: Sequence[OriginalNode]) -> None:
    """Everything `install_original` made outside the namespace's RBAC: the fleet, the
    workloads, the release record (the CRDs go with `remove_brupop_crds`)."""
    core, apps = client.CoreV1Api(access.admin), client.AppsV1Api(access.admin)
    leases = client.CoordinationV1Api(access.admin)
    calls: list[Callable[[], object]] = [
        lambda: apps.delete_namespaced_deployment("brupop-controller-deployment", NAMESPACE),
        lambda: apps.delete_namespaced_daemon_set("brupop-agent", NAMESPACE),
        lambda: core.delete_collection_namespaced_pod(
            NAMESPACE, label_selector=f"{COMPONENT_LABEL}=agent", grace_period_seconds=0
        ),
        lambda: core.delete_collection_namespaced_secret(
            RELEASE_NAMESPACE, label_selector="owner=helm,name=brupop-crd"
        ),
        lambda: leases.delete_namespaced_lease("brupop-controller-leader", NAMESPACE),
    ]

    calls += [functools.partial(core.delete_node, node.name) for node in nodes]
    for call in calls:
        try:
            call()
        except ApiException as error:
            if error.status != 404:
                raise
    names = {node.name for node in nodes}
    wait_until(
        lambda: not names & {n.metadata.name for n in core.list_node().items},
        f"Nodes {sorted(names)} deleted",
        seconds=30,
        interval=0.2,
    )


def _create(create: object, body: dict[str, object]) -> None:
    try:
        create(body)  # type: ignore[operator]
    except ApiException as error:
        if error.status != 409:
            raise


def _controller_deployment() -> dict[str, object]:
    """The original's controller Deployment (one replica, `Recreate`), placed on no node."""
    labels = {COMPONENT_LABEL: "brupop-controller"}
    container = {"name": "brupop", "image": IMAGE, "command": ["./controller"]}
    return {
        "metadata": {
            "name": "brupop-controller-deployment",
            "namespace": NAMESPACE,
            "labels": labels,
        },
        "spec": {
            "replicas": 1,
            "strategy": {"type": "Recreate"},
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "serviceAccountName": "brupop-controller-service-account",
                    "nodeSelector": NO_NODE,
                    "containers": [container],
                },
            },
        },
    }


def _release_record() -> dict[str, object]:
    """The Secret in which Helm keeps the `brupop-crd` release (its payload is not read here)."""
    labels = {"owner": "helm", "name": "brupop-crd", "status": "deployed", "version": "1"}
    return {
        "metadata": {"name": "sh.helm.release.v1.brupop-crd.v1", "labels": labels},
        "type": "helm.sh/release.v1",
        "stringData": {"release": "not read by this rehearsal"},
    }
