"""`brupop plan` against a real kube-apiserver: it reads the shadows, Nodes, pods, PDBs and the
policy with its learned durations through the controller's own adapter, plans cheapest-first,
names the PDB that would block a drain, and writes nothing (every resourceVersion unchanged).
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.domain.shadow import OPT_IN_LABEL, OPT_IN_VALUE
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane, node_ready
from tests.support.control_plane.chart_install import crd_established
from tests.support.polling import wait_until

GROUP = "brupop.bottlerocket.aws"
ACCOUNT = "workload"


@pytest.fixture
def planned_nodes(control_plane: ControlPlane) -> Iterator[list[str]]:
    """Three opted-in kwok Nodes, Ready, deleted afterwards."""
    suffix = uuid.uuid4().hex[:6]
    names = [f"plan-{suffix}-{letter}" for letter in "abc"]
    labels = {OPT_IN_LABEL: OPT_IN_VALUE}
    for name in names:
        meta = client.V1ObjectMeta(name=name, annotations=KWOK_ANNOTATION, labels=labels)
        control_plane.core.create_node(client.V1Node(metadata=meta))
    for name in names:
        wait_until(partial(node_ready, control_plane.core, name), f"{name} Ready", seconds=30)
    yield names
    for name in names:
        control_plane.core.delete_node(name)


def _install_crds(control_plane: ControlPlane) -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "brupop", "crd"], capture_output=True, text=True, check=True
    )
    extensions = client.ApiextensionsV1Api(control_plane.api)
    for document in yaml.safe_load_all(printed.stdout):
        try:
            extensions.create_custom_resource_definition(document)
        except ApiException as error:
            if error.status != 409:
                raise
        name = document["metadata"]["name"]
        wait_until(partial(crd_established, extensions, name), f"CRD {name}", seconds=30)


def _pod(control_plane: ControlPlane, namespace: str, node: str, name: str, app: str) -> None:
    body = client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels={"app": app}),
        spec=client.V1PodSpec(
            node_name=node,
            service_account_name=ACCOUNT,
            containers=[client.V1Container(name="work", image="work:fake")],
        ),
    )
    control_plane.core.create_namespaced_pod(namespace, body)


def _shadow(objects: client.CustomObjectsApi, namespace: str, node: str) -> None:
    body = {
        "apiVersion": f"{GROUP}/v2",
        "kind": "BottlerocketShadow",
        "metadata": {"name": f"brs-{node}"},
        "spec": {"state": "Idle"},
    }
    objects.create_namespaced_custom_object(GROUP, "v2", namespace, "bottlerocketshadows", body)
    status = {
        "status": {
            "current_version": "1.19.0",
            "target_version": "1.20.0",
            "current_state": "Idle",
            "crash_count": 0,
        }
    }
    objects.patch_namespaced_custom_object_status(
        GROUP, "v2", namespace, "bottlerocketshadows", f"brs-{node}", status
    )


def _policy(objects: client.CustomObjectsApi, namespace: str) -> None:
    body = {
        "apiVersion": f"{GROUP}/v1",
        "kind": "BottlerocketUpdatePolicy",
        "metadata": {"name": "default"},
        "spec": {"maxConcurrent": 1, "capacityCheck": False},
    }
    plural = "bottlerocketupdatepolicies"
    objects.create_namespaced_custom_object(GROUP, "v1", namespace, plural, body)
    status = {"status": {"phase": "Idle", "updateDurations": [300, 400]}}
    objects.patch_namespaced_custom_object_status(GROUP, "v1", namespace, plural, "default", status)


def _versions(control_plane: ControlPlane, namespace: str, nodes: list[str]) -> dict[str, Any]:
    """Every resourceVersion plan could have changed, and the namespace's Events."""
    objects = client.CustomObjectsApi(control_plane.api)
    core, policy = control_plane.core, client.PolicyV1Api(control_plane.api)
    listed = {
        "shadows": objects.list_namespaced_custom_object(
            GROUP, "v2", namespace, "bottlerocketshadows"
        )["items"],
        "policies": objects.list_namespaced_custom_object(
            GROUP, "v1", namespace, "bottlerocketupdatepolicies"
        )["items"],
    }
    found: dict[str, Any] = {
        kind: {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in items}
        for kind, items in listed.items()
    }
    found["nodes"] = {n: core.read_node(n).metadata.resource_version for n in nodes}
    found["pods"] = {
        p.metadata.name: p.metadata.resource_version
        for p in core.list_namespaced_pod(namespace).items
    }
    found["pdbs"] = {
        b.metadata.name: b.metadata.resource_version
        for b in policy.list_namespaced_pod_disruption_budget(namespace).items
    }
    found["events"] = len(core.list_namespaced_event(namespace).items)
    return found


def test_plan_reads_a_real_cluster_names_the_blocking_pdb_and_writes_nothing(
    control_plane: ControlPlane, namespace: str, planned_nodes: list[str]
) -> None:
    _install_crds(control_plane)
    busy, empty, guarded = planned_nodes
    core = control_plane.core
    core.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=ACCOUNT))
    )
    for index in range(3):
        _pod(control_plane, namespace, busy, f"busy-{index}", "busy")
    _pod(control_plane, namespace, guarded, "db-0", "db")
    pdb = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="db"),
        spec=client.V1PodDisruptionBudgetSpec(
            min_available=1, selector=client.V1LabelSelector(match_labels={"app": "db"})
        ),
    )
    client.PolicyV1Api(control_plane.api).create_namespaced_pod_disruption_budget(namespace, pdb)
    objects = client.CustomObjectsApi(control_plane.api)
    for node in planned_nodes:
        _shadow(objects, namespace, node)
    _policy(objects, namespace)
    before = _versions(control_plane, namespace, planned_nodes)

    done = subprocess.run(
        [sys.executable, "-m", "brupop", "plan", "--kubeconfig", str(control_plane.kubeconfig),
         "--namespace", namespace, "--json"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip

    assert done.returncode == 0, done.stderr
    plan = json.loads(done.stdout)
    assert plan["policy"] == "policy" and plan["max_concurrent"] == 1
    assert plan["expected_update_seconds"] == 400  # the p90 of the status's durations
    ordered = [n["node"] for n in plan["nodes"] if n["order"] is not None]
    assert ordered == [empty, guarded, busy]  # drain costs 0, 2 (behind a PDB), 3
    assert [n["start_seconds"] for n in plan["nodes"]] == [0.0, 400.0, 800.0]
    by_node = {n["node"]: n for n in plan["nodes"]}
    assert by_node[guarded]["drain_blockers"] == [
        f"PDB {namespace}/db allows no disruption of pod {namespace}/db-0"
    ]
    assert by_node[busy]["drain_blockers"] == []
    assert _versions(control_plane, namespace, planned_nodes) == before
