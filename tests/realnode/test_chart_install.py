"""The packaged chart installed by Helm on real kubelets, as a user installs it: cert-manager
issues its certificates and injects the CA, every pod starts from the imported images,
`brupop doctor` passes every check, the agent calls the apiserver with the projected token of
the chart's audience, the NetworkPolicies (enforced by kube-router for one node's pods) let a pod
with the agent's label reach an apiserver pod and refuse one without it, and `helm uninstall`
leaves nothing of brupop (the CRDs go with it, as docs/install.md says). The hosts under the
nodes offer no update here: a rollout's drains would move the pods doctor checks
(tests/realnode/test_rollout.py is the rollout)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass
from functools import partial

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.cli.doctor.main import main as doctor
from tests.realnode.chart_release import NAMESPACE, install, package, prepare_nodes, uninstall
from tests.realnode.conftest import RealCluster
from tests.realnode.workloads import create, knocking_pod, logged
from tests.support.control_plane.real_nodes import network_policy
from tests.support.control_plane.versions import default_cache
from tests.support.polling import wait_until

AUDIENCE = "brupop-apiserver"
SHADOW_CRD = "bottlerocketshadows.brupop.bottlerocket.aws"
POLICY_CRD = "bottlerocketupdatepolicies.brupop.bottlerocket.aws"
DEPLOYMENTS = ("brupop-apiserver", "brupop-controller-deployment")
START_SECONDS = 600.0
AGENT_LABELS = {"brupop.bottlerocket.aws/component": "agent"}
AGENTS_PORT = 8443


@dataclass(frozen=True)
class Installed:
    cluster: RealCluster
    install_output: str


def rolled_out(apps: client.AppsV1Api, nodes: int) -> bool:
    """Every replica of both Deployments available, and an agent Ready on every node."""
    for name in DEPLOYMENTS:
        status = apps.read_namespaced_deployment(name, NAMESPACE).status
        if not status.available_replicas or status.available_replicas < (status.replicas or 1):
            return False
    agents = apps.read_namespaced_daemon_set("brupop-agent", NAMESPACE).status
    return bool(agents.number_ready == nodes)


def every_node_reported(cluster: RealCluster) -> bool:
    """Every node's agent has created its shadow and written its status (a Ready agent pod has
    not necessarily done either yet)."""
    shadows = client.CustomObjectsApi(cluster.api).list_namespaced_custom_object(
        "brupop.bottlerocket.aws", "v2", NAMESPACE, "bottlerocketshadows"
    )["items"]
    reported = {s["metadata"]["name"] for s in shadows if s.get("status")}
    return len(reported) == len(cluster.nodes)


@pytest.fixture(scope="module")
def installed(
    real_cluster: RealCluster, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Installed]:
    prepare_nodes(real_cluster.folder, real_cluster.core, real_cluster.nodes, offer=False)
    chart = package(tmp_path_factory.mktemp("chart"))
    done = install(real_cluster.folder, chart)
    assert done.returncode == 0, done.stderr
    wait_until(
        lambda: rolled_out(real_cluster.apps, len(real_cluster.nodes)),
        "the chart's Deployments and an agent on every node ready",
        seconds=START_SECONDS,
        interval=2.0,
    )
    wait_until(
        lambda: every_node_reported(real_cluster),
        "a status from every agent",
        seconds=START_SECONDS,
        interval=2.0,
    )
    yield Installed(real_cluster, done.stdout)


@pytest.mark.timeout(900)
def test_brupop_doctor_passes_every_check_on_the_installed_chart(installed: Installed) -> None:
    kubeconfig = installed.cluster.folder / "kubeconfig"
    printed = io.StringIO()
    with redirect_stdout(printed):
        code = doctor(["--kubeconfig", str(kubeconfig)])

    lines = printed.getvalue().splitlines()
    assert code == 0, printed.getvalue()
    assert [line for line in lines if line.startswith(("FAIL", "SKIP"))] == []
    assert any(line.startswith("PASS") and "certificate" in line for line in lines), lines


@pytest.mark.timeout(900)
def test_the_agents_projected_token_of_the_charts_audience_is_verified_by_the_apiserver_pod(
    installed: Installed,
) -> None:
    core = installed.cluster.core
    pods = core.list_namespaced_pod(
        NAMESPACE, label_selector="brupop.bottlerocket.aws/component=agent"
    )
    assert pods.items, "no agent pod"
    for pod in pods.items:
        assert pod.spec.automount_service_account_token is False
        sources = [
            source.service_account_token
            for volume in pod.spec.volumes or []
            if volume.projected
            for source in volume.projected.sources
            if source.service_account_token
        ]
        assert [token.audience for token in sources] == [AUDIENCE]
    assert every_node_reported(installed.cluster)
    # Verified by the apiserver pod itself (issuer keys and a watch of agent pods): no
    # TokenReview reached kube-apiserver while every agent was let in.
    assert token_reviews(installed.cluster.api) == 0


def token_reviews(api: client.ApiClient) -> float:
    """TokenReviews kube-apiserver has served since it started, from its own /metrics."""
    answer = api.call_api("/metrics", "GET", _preload_content=False, _request_timeout=30)
    text = answer.data.decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("apiserver_request_total{") and 'resource="tokenreviews"' in line
    )


def succeeded(core: client.CoreV1Api, name: str) -> bool:
    return bool(core.read_namespaced_pod(name, NAMESPACE).status.phase == "Succeeded")


@pytest.mark.timeout(900)
def test_the_network_policies_let_an_agent_pod_reach_the_apiserver_and_refuse_other_pods(
    installed: Installed,
) -> None:
    cluster, core = installed.cluster, installed.cluster.core
    enforced, other = cluster.nodes
    network_policy.enforce_on(cluster.folder, default_cache(), enforced)
    targets = core.list_namespaced_pod(
        NAMESPACE,
        label_selector="brupop.bottlerocket.aws/component=apiserver",
        field_selector=f"spec.nodeName={enforced}",
    ).items
    assert targets, f"no apiserver pod on {enforced}, where the policies are enforced"
    address = targets[0].status.pod_ip
    owner = core.create_namespaced_config_map(NAMESPACE, {"metadata": {"name": "knockers"}})
    reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "knockers"}
    reference["uid"] = owner.metadata.uid
    pods = {"knock-agent": AGENT_LABELS, "knock-stranger": {"app": "knock-stranger"}}
    for name, labels in pods.items():
        pod = knocking_pod(name, other, address, AGENTS_PORT, labels, reference)
        create(core, pod, NAMESPACE)
    for name in pods:
        wait_until(
            partial(succeeded, core, name),
            f"pod {name} done knocking",
            seconds=START_SECONDS,
            interval=2.0,
        )
    folder = cluster.node_folder(other)
    heard = {name: logged(folder, name, NAMESPACE) for name in pods}
    # The last ten attempts, long after kube-router's first sync: the agent's label lets it in,
    # a pod without it is refused.
    assert heard["knock-agent"][-10:] == ["connected"] * 10, heard
    assert heard["knock-stranger"][-10:] == ["refused"] * 10, heard


@pytest.mark.timeout(900)
def test_helm_uninstall_leaves_nothing_of_brupop_and_deletes_its_crds(installed: Installed) -> None:
    folder, api = installed.cluster.folder, installed.cluster.api
    done = uninstall(folder)
    assert done.returncode == 0, done.stderr
    extensions = client.ApiextensionsV1Api(api)

    def gone() -> bool:
        names = {crd.metadata.name for crd in extensions.list_custom_resource_definition().items}
        try:
            client.CoreV1Api(api).read_namespace(NAMESPACE)
        except ApiException as error:
            return error.status == 404 and not names & {SHADOW_CRD, POLICY_CRD}
        return False

    wait_until(gone, "the namespace and both CRDs deleted", seconds=START_SECONDS, interval=2.0)
    rbac = client.RbacAuthorizationV1Api(api)
    left = [r.metadata.name for r in rbac.list_cluster_role().items if "brupop" in r.metadata.name]
    left += [
        b.metadata.name
        for b in rbac.list_cluster_role_binding().items
        if "brupop" in b.metadata.name
    ]
    assert left == []
