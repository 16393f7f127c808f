"""A rollout on real kubelets, as users run it: the chart installed by Helm, a workload
Deployment with a PodDisruptionBudget on the nodes, and each node's agent asking its host for
the offered version. Real evictions move the workload while the budget holds; every node ends
updated and schedulable; each reboot kills the agent's container with SIGTERM and its log ends
with one INFO line and exit code 0, the kubelet restarts it and it reports the new version; a
controller pod deleted mid-rollout does not stop it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from kubernetes import client

from tests.realnode.chart_release import NAMESPACE, install, package, prepare_nodes
from tests.realnode.conftest import RealCluster
from tests.realnode.workloads import PYTHON, image, log_files, log_lines
from tests.support.control_plane.bottlerocket_host import CURRENT_VERSION, OFFERED_VERSION
from tests.support.polling import wait_until

# A cluster with real nodes takes a minute or more to start on a loaded machine.
pytestmark = pytest.mark.timeout(2400)

WORKLOAD = {"app": "workload"}
ROLLOUT_SECONDS = 1500.0
CONTROLLER = "brupop.bottlerocket.aws/component=brupop-controller"


def workload() -> dict[str, Any]:
    container = {
        "name": "main",
        "image": image(),
        "imagePullPolicy": "Never",
        "command": [PYTHON, "-c", "import time\nwhile True: time.sleep(1)"],
    }
    spread = {
        "maxSkew": 1,
        "topologyKey": "kubernetes.io/hostname",
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": WORKLOAD},
    }
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "workload", "labels": WORKLOAD},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": WORKLOAD},
            "template": {
                "metadata": {"labels": WORKLOAD},
                "spec": {
                    "terminationGracePeriodSeconds": 5,
                    "topologySpreadConstraints": [spread],
                    "containers": [container],
                },
            },
        },
    }


def budget() -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "workload"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": WORKLOAD}},
    }


@dataclass
class Rollout:
    """What was seen while the rollout ran."""

    cluster: RealCluster
    first_pods: set[str]
    fewest_ready: int = 99
    pods_seen: set[str] = field(default_factory=set)
    deleted_controller: str = ""


def shadows(cluster: RealCluster) -> list[dict[str, Any]]:
    custom = client.CustomObjectsApi(cluster.api)
    listed = custom.list_namespaced_custom_object(
        "brupop.bottlerocket.aws", "v2", NAMESPACE, "bottlerocketshadows"
    )
    return list(listed["items"])


def ready_workload(core: client.CoreV1Api) -> list[Any]:
    pods = core.list_namespaced_pod("default", label_selector="app=workload").items
    return [
        pod
        for pod in pods
        if any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or [])
    ]


def watch(rollout: Rollout) -> bool:
    """One look: the budget's floor, the workload's pods, a controller pod deleted once the
    first node has started; True when every node runs the offered version, Idle."""
    core = rollout.cluster.core
    ready = ready_workload(core)
    rollout.fewest_ready = min(rollout.fewest_ready, len(ready))
    rollout.pods_seen |= {pod.metadata.name for pod in ready}
    states = [item.get("status", {}) for item in shadows(rollout.cluster)]
    started = any(status.get("current_state") not in (None, "Idle") for status in states)
    if started and not rollout.deleted_controller:
        pods = core.list_namespaced_pod(NAMESPACE, label_selector=CONTROLLER).items
        if pods:
            rollout.deleted_controller = pods[0].metadata.name
            core.delete_namespaced_pod(pods[0].metadata.name, NAMESPACE)
    done = [
        s
        for s in states
        if s.get("current_version") == OFFERED_VERSION and s.get("current_state") == "Idle"
    ]
    return len(done) == len(rollout.cluster.nodes)


@pytest.fixture(scope="module")
def rollout(
    real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Rollout]:
    apps, core = real_cluster.apps, real_cluster.core
    apps.create_namespaced_deployment("default", workload())
    client.PolicyV1Api(real_cluster.api).create_namespaced_pod_disruption_budget(
        "default", budget()
    )
    wait_until(
        lambda: len(ready_workload(core)) == 2,
        "the workload's two pods ready",
        seconds=300,
        interval=1.0,
    )
    first = {pod.metadata.name for pod in ready_workload(core)}
    prepare_nodes(real_cluster.folder, core, real_cluster.nodes)
    done = install(real_cluster.folder, package(tmp_path_factory.mktemp("chart")))
    assert done.returncode == 0, done.stderr
    seen = Rollout(real_cluster, first)
    wait_until(
        lambda: watch(seen),
        "every real node updated and Idle",
        seconds=ROLLOUT_SECONDS,
        interval=2.0,
    )
    yield seen


def test_every_real_node_is_updated_and_schedulable_after_the_rollout(rollout: Rollout) -> None:
    nodes = rollout.cluster.core.list_node().items
    for node in nodes:
        if node.metadata.name in rollout.cluster.nodes:
            assert not node.spec.unschedulable, node.metadata.name
    versions = {
        item["metadata"]["name"]: item["status"]["current_version"]
        for item in shadows(rollout.cluster)
    }
    assert set(versions.values()) == {OFFERED_VERSION}, versions
    assert CURRENT_VERSION != OFFERED_VERSION


def test_the_workload_was_evicted_for_real_and_its_budget_held(rollout: Rollout) -> None:
    assert rollout.fewest_ready >= 1
    assert rollout.pods_seen - rollout.first_pods, (
        "no workload pod was ever replaced: nothing was evicted"
    )


def test_each_reboot_ends_the_agents_log_with_one_info_line_and_exit_code_0(
    rollout: Rollout,
) -> None:
    core = rollout.cluster.core
    for pod in core.list_namespaced_pod(
        NAMESPACE, label_selector="brupop.bottlerocket.aws/component=agent"
    ).items:
        (status,) = pod.status.container_statuses
        assert status.restart_count >= 1, pod.metadata.name
        assert status.last_state.terminated.exit_code == 0, pod.metadata.name
        assert status.ready
        folder = rollout.cluster.node_folder(pod.spec.node_name)
        files = log_files(folder, pod.metadata.name, status.name, NAMESPACE)
        last = json.loads(log_lines(files[-2])[-1])
        assert last["level"] == "info", last


def test_a_controller_pod_deleted_mid_rollout_does_not_stop_it(rollout: Rollout) -> None:
    assert rollout.deleted_controller
    names = [
        pod.metadata.name
        for pod in rollout.cluster.core.list_namespaced_pod(
            NAMESPACE, label_selector=CONTROLLER
        ).items
    ]
    assert rollout.deleted_controller not in names
