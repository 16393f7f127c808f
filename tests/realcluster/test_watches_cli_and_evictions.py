"""What only a real kube-apiserver shows of three fixes: a quiet selected watch brings
bookmarks that the informer resumes from; `brupop pause`/`resume` work through a kubeconfig;
and a budget with a percentage and matchExpressions is honoured by real evictions, the drain
naming it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client

from brupop.adapters.kubernetes.cluster import KubernetesCluster
from brupop.adapters.kubernetes.resources.nodes import KubernetesNodeRepository
from brupop.adapters.system.clock import SystemClock
from brupop.domain.cluster.objects import Node, WatchBookmark
from brupop.ports.errors import DrainFailedError
from brupop.services.apiserver.drain.drainer import Drainer, DrainTimings
from brupop.services.apiserver.drain.node_actions import NodeActions
from brupop.services.runtime.informer import Informer
from brupop.services.runtime.mirror import Mirror
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane, node_ready
from tests.support.control_plane.chart_install import NAMESPACE, apply_chart
from tests.support.polling import wait_until


@pytest.fixture
def admin_cluster(control_plane: ControlPlane) -> Iterator[KubernetesCluster]:
    apply_chart(control_plane.api)
    yield KubernetesCluster(control_plane.api, NAMESPACE)


def _beat(nodes: KubernetesNodeRepository, name: str, watched: threading.Event) -> None:
    """Changes of a Node the watch does not select, two a second until the watch has ended:
    heartbeats."""
    beat = 0
    while not watched.is_set():
        nodes.set_labels(name, {"beat": str(beat)})
        beat += 1
        watched.wait(0.5)


def test_a_quiet_selected_watch_brings_a_bookmark_and_the_informer_resumes_from_it(
    control_plane: ControlPlane, admin_cluster: KubernetesCluster
) -> None:
    # The Node watch selects the opted-in Nodes; Nodes outside the selection change meanwhile
    # (heartbeats in a big cluster): the watch sends no event, but its bookmarks move on.
    selector = {"brupop.bottlerocket.aws/bookmark-test": "opted-in"}
    mirror: Mirror[Node] = Mirror(lambda n: n.name, lambda n: n.resource_version)
    nodes = admin_cluster.nodes
    informer = Informer(
        "nodes",
        lambda: nodes.list(selector),
        lambda version, seconds: nodes.watch(version, seconds, selector),
        mirror,
    )
    listed = informer.relist()
    assert listed is not None
    other = f"unselected-{uuid.uuid4().hex[:6]}"
    control_plane.core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name=other)))
    watched = threading.Event()
    beating = threading.Thread(target=_beat, args=(nodes, other, watched), daemon=True)
    try:
        beating.start()
        # A watch's bookmarks come while the watch cache moves on during it: the server sends
        # one shortly before the watch's timeout, and about every minute.
        items = list(informer.watch(listed, 6.0))
        for item in items:
            informer.apply(item)
    finally:
        watched.set()
        beating.join()
        control_plane.core.delete_node(other)

    assert [item for item in items if isinstance(item, WatchBookmark)], items
    assert len(mirror) == 0  # no event: nothing it selects changed
    assert informer.version is not None and int(informer.version) > int(listed)


def _brupop(verb: str, kubeconfig: Path) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "KUBERNETES_SERVICE_HOST"}
    environment["KUBECONFIG"] = str(kubeconfig)
    return subprocess.run(
        [sys.executable, "-m", "brupop", verb, "--namespace", NAMESPACE],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )


def test_pause_and_resume_change_the_policy_on_a_real_server_through_the_kubeconfig(
    control_plane: ControlPlane, admin_cluster: KubernetesCluster
) -> None:
    before = admin_cluster.policies.read().default
    paused = _brupop("pause", control_plane.kubeconfig)
    assert paused.returncode == 0, paused.stderr
    spec = admin_cluster.policies.get().spec
    assert spec is not None and spec.paused is True

    resumed = _brupop("resume", control_plane.kubeconfig)
    assert resumed.returncode == 0, resumed.stderr
    after = admin_cluster.policies.read().default
    if before is None:  # the policy the pause created is deleted again
        assert after is None, resumed.stdout
    else:
        assert after is not None and after.spec is not None and after.spec.paused is False
    assert "Traceback" not in paused.stderr + resumed.stderr


def _owned_web_pods(api: client.ApiClient, namespace: str, node: str, count: int) -> None:
    """A ReplicaSet of `count` (no controller runs it) and its pods on `node`: the disruption
    controller scales a percentage over the owner's replicas, so the pods need a real owner."""
    labels = {"app": "web"}
    template = client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels=labels),
        spec=client.V1PodSpec(containers=[client.V1Container(name="web", image="web")]),
    )
    spec = client.V1ReplicaSetSpec(
        replicas=count, selector=client.V1LabelSelector(match_labels=labels), template=template
    )
    meta = client.V1ObjectMeta(name="web")
    owner = client.AppsV1Api(api).create_namespaced_replica_set(
        namespace, client.V1ReplicaSet(metadata=meta, spec=spec)
    )
    reference = client.V1OwnerReference(
        api_version="apps/v1",
        kind="ReplicaSet",
        name="web",
        uid=owner.metadata.uid,
        controller=True,
    )
    for index in range(count):
        pod = client.V1Pod(
            metadata=client.V1ObjectMeta(
                name=f"web-{index}", labels=labels, owner_references=[reference]
            ),
            spec=client.V1PodSpec(
                node_name=node,
                service_account_name="default",
                containers=[client.V1Container(name="web", image="web")],
            ),
        )
        client.CoreV1Api(api).create_namespaced_pod(namespace, pod)


@pytest.fixture
def own_node(control_plane: ControlPlane) -> Iterator[str]:
    """A kwok Node for one test alone: a drain empties every namespace's pods from its node."""
    name = f"drained-{uuid.uuid4().hex[:6]}"
    meta = client.V1ObjectMeta(name=name, annotations=KWOK_ANNOTATION)
    control_plane.core.create_node(client.V1Node(metadata=meta))
    wait_until(lambda: node_ready(control_plane.core, name), f"node {name} Ready", seconds=30)
    yield name
    control_plane.core.delete_node(name)


def test_a_percentage_budget_with_match_expressions_is_honoured_and_the_drain_names_it(
    control_plane: ControlPlane, admin_cluster: KubernetesCluster, namespace: str, own_node: str
) -> None:
    fake_node = own_node
    _owned_web_pods(control_plane.api, namespace, fake_node, 3)
    expression = client.V1LabelSelectorRequirement(key="app", operator="In", values=["web"])
    budget = client.V1PodDisruptionBudget(
        metadata=client.V1ObjectMeta(name="web-budget"),
        spec=client.V1PodDisruptionBudgetSpec(
            max_unavailable="50%", selector=client.V1LabelSelector(match_expressions=[expression])
        ),
    )
    policy = client.PolicyV1Api(control_plane.api)
    policy.create_namespaced_pod_disruption_budget(namespace, budget)

    def allowed() -> int | None:
        status = policy.read_namespaced_pod_disruption_budget("web-budget", namespace).status
        return None if status is None else status.disruptions_allowed

    # 50% of 3 rounds up to 2 that may be unavailable at once.
    wait_until(lambda: allowed() == 2, "the budget allows 2 disruptions", seconds=60)
    (read,) = admin_cluster.pods.list_disruption_budgets(namespace)
    assert read.max_unavailable == "50%" and not read.selector and read.expressions

    drainer = Drainer(
        actions=NodeActions(admin_cluster.nodes),
        pods=admin_cluster.pods,
        clock=SystemClock(),
        timings=DrainTimings(
            timeout_seconds=8.0, retry_interval_seconds=0.5, deletion_timeout_seconds=20.0
        ),
    )
    try:
        with pytest.raises(DrainFailedError) as failed:
            drainer.drain(fake_node)
    finally:
        NodeActions(admin_cluster.nodes).uncordon(fake_node)

    assert f"{namespace}/web-budget" in str(failed.value)
    left = {p.name for p in admin_cluster.pods.list_on_node(fake_node) if p.namespace == namespace}
    assert len(left) == 1, left  # two went, as the budget allows; the third is kept
