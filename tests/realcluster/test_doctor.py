"""`brupop doctor` on the real control plane: an install healthy enough that every check it can
pass here passes, then the same install broken on purpose (the policy CRD deleted, an opted-in
node with no agent), each failure named with what to do.

This control plane has no cert-manager, no brupop pods and no deployment controller, so the test
stands in for them: it creates the chart's Deployments and writes their status subresource as
the deployment controller would (every replica available), writes the controller's leader Lease
as a leading controller would, and runs one agent pod on a kwok node (kwok makes it Ready)."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from brupop.cli.crd.definition import custom_resource_definition
from brupop.cli.doctor.crds import check_policy_crd
from brupop.cli.doctor.main import main, run_checks
from brupop.cli.doctor.metrics import METRIC, check_metrics_at
from brupop.cli.doctor.rbac import check_rbac
from brupop.cli.doctor.reading import KubernetesReader, ReadRefused
from brupop.cli.doctor.result import DoctorFinding
from brupop.cli.doctor.webhook import check_conversion_webhook
from brupop.domain.shadow import OPT_IN_LABEL, shadow_name
from brupop.services.controller.runtime.leader_election import DEFAULT_LEASE_NAME
from tests.realcluster.conftest import KWOK_ANNOTATION, ControlPlane
from tests.realcluster.crd_webhook import shadow_object
from tests.support.control_plane.chart_install import (
    NAMESPACE,
    apply_chart,
    chart_documents,
    service_account_token,
    token_api_client,
)
from tests.support.polling import wait_until

AGENT_ACCOUNT = "brupop-agent-service-account"
POLICY_CRD = "bottlerocketupdatepolicies.brupop.bottlerocket.aws"
SHADOW_CRD = "bottlerocketshadows.brupop.bottlerocket.aws"
GROUP = "brupop.bottlerocket.aws"
PLURAL = "bottlerocketshadows"
SPEC = {"state": "Idle", "state_transition_timestamp": "2026-01-02T03:00:00Z", "version": "1.20.0"}


class _Metrics(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f'{METRIC}{{state="Idle"}} 1\n'.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture(scope="module")
def metrics_url() -> Iterator[str]:
    """A loopback stand-in for the controller's `/metrics`."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _create_or_keep(create: object, *args: object) -> None:
    try:
        create(*args)  # type: ignore[operator]
    except ApiException as error:
        if error.status != 409:
            raise


def _opted_in_node(control_plane: ControlPlane, name: str) -> None:
    labels = {OPT_IN_LABEL: "2.0.0"}
    meta = client.V1ObjectMeta(name=name, annotations=KWOK_ANNOTATION, labels=labels)
    _create_or_keep(control_plane.core.create_node, client.V1Node(metadata=meta))


@pytest.fixture(scope="module")
def install(control_plane: ControlPlane) -> Iterator[str]:
    """The chart's namespace, CRDs, RBAC, NetworkPolicies and Deployments (available), a
    leader's Lease, and one opted-in node with a Ready agent and a shadow; its node's name."""
    api = control_plane.api
    apply_chart(api)
    networking, apps = client.NetworkingV1Api(api), client.AppsV1Api(api)
    for policy in chart_documents("NetworkPolicy"):
        _create_or_keep(networking.create_namespaced_network_policy, NAMESPACE, policy)
    for deployment in chart_documents("Deployment"):
        _create_or_keep(apps.create_namespaced_deployment, NAMESPACE, deployment)
        replicas = deployment["spec"].get("replicas", 1)
        status = {"replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas}
        name = deployment["metadata"]["name"]
        apps.patch_namespaced_deployment_status(name, NAMESPACE, {"status": status})
    lease = client.V1Lease(
        metadata=client.V1ObjectMeta(name=DEFAULT_LEASE_NAME),
        spec=client.V1LeaseSpec(
            holder_identity="controller-0", lease_duration_seconds=60, renew_time=datetime.now(UTC)
        ),
    )
    coordination = client.CoordinationV1Api(api)
    _create_or_keep(coordination.create_namespaced_lease, NAMESPACE, lease)
    node = "doctor-node-1"
    _opted_in_node(control_plane, node)
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(
            name="brupop-agent-doctor", labels={"brupop.bottlerocket.aws/component": "agent"}
        ),
        spec=client.V1PodSpec(
            node_name=node,
            service_account_name=AGENT_ACCOUNT,
            containers=[client.V1Container(name="agent", image="brupop:test")],
        ),
    )
    _create_or_keep(control_plane.core.create_namespaced_pod, NAMESPACE, pod)
    objects = client.CustomObjectsApi(api)
    shadow = shadow_object(shadow_name(node), SPEC, version="v2")
    _create_or_keep(
        objects.create_namespaced_custom_object,
        "brupop.bottlerocket.aws",
        "v2",
        NAMESPACE,
        "bottlerocketshadows",
        shadow,
    )
    wait_until(lambda: _pod_ready(control_plane, pod.metadata.name), "agent Ready", seconds=30)
    yield node
    control_plane.core.delete_namespaced_pod(pod.metadata.name, NAMESPACE, grace_period_seconds=0)
    control_plane.core.delete_node(node)


def _pod_ready(control_plane: ControlPlane, name: str) -> bool:
    status = control_plane.core.read_namespaced_pod_status(name, NAMESPACE).status
    return any(c.type == "Ready" and c.status == "True" for c in status.conditions or [])


def _results(control_plane: ControlPlane, metrics_url: str) -> dict[str, DoctorFinding]:
    reader = KubernetesReader(control_plane.api, timeout=10.0)
    checks = run_checks(
        reader, NAMESPACE, lambda: check_metrics_at(metrics_url, 5.0), lambda: datetime.now(UTC)
    )
    return {result.name: result for result in checks}


def test_doctor_passes_every_check_a_control_plane_without_cert_manager_can_pass(
    control_plane: ControlPlane, install: str, metrics_url: str
) -> None:
    results = _results(control_plane, metrics_url)
    can_pass = [
        "kubernetes api",
        "namespace",
        f"crd {POLICY_CRD}",
        "deployment brupop-apiserver",
        "deployment brupop-controller-deployment",
        "controller leader",
        "agents",
        "rbac",
        "network policies",
        "update policy",
        "policy rules",
        "metrics",
    ]
    assert [name for name in can_pass if not results[name].ok] == []
    assert "by SubjectAccessReview" in results["rbac"].detail
    # The chart's shadow CRD is installed here without its webhook (no cert-manager to sign
    # one), so the webhook check has nothing to call: it is skipped, naming the CRD's check.
    webhook = results["conversion webhook"]
    assert webhook.skipped
    assert webhook.detail == f"needs crd {SHADOW_CRD} to convert by Webhook (its strategy is None)"
    certificate = results["certificate"]
    assert not certificate.ok
    assert certificate.detail == "cert-manager is not installed"
    assert "install cert-manager" in certificate.advice


def test_doctor_exits_one_with_a_line_per_check_when_a_check_fails(
    control_plane: ControlPlane,
    install: str,
    metrics_url: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(control_plane.kubeconfig))
    code = main(["--namespace", NAMESPACE, "--controller-url", metrics_url])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1  # the certificate check fails: no cert-manager here
    assert len(lines) == 15
    assert all(line.startswith(("PASS ", "FAIL ", "SKIP ")) for line in lines)
    assert (
        "FAIL certificate: cert-manager is not installed - do: install cert-manager"
        in "\n".join(lines)
    )


def test_doctor_names_a_missing_policy_crd_and_how_to_install_it(
    control_plane: ControlPlane, install: str
) -> None:
    extensions = client.ApiextensionsV1Api(control_plane.api)
    extensions.delete_custom_resource_definition(POLICY_CRD)
    try:
        reader = KubernetesReader(control_plane.api, timeout=10.0)
        wait_until(lambda: not check_policy_crd(reader).ok, "policy CRD gone", seconds=30)
        result = check_policy_crd(reader)
        assert result.detail == "not installed"
        assert result.advice.startswith("brupop crd | kubectl apply -f -")
    finally:
        wait_until(lambda: _gone(extensions), "policy CRD deleted", seconds=30)
        apply_chart(control_plane.api)


def _gone(extensions: client.ApiextensionsV1Api) -> bool:
    try:
        extensions.read_custom_resource_definition(POLICY_CRD)
    except ApiException as error:
        return bool(error.status == 404)
    return False


def test_doctor_names_an_opted_in_node_that_has_no_agent(
    control_plane: ControlPlane, install: str, metrics_url: str
) -> None:
    bare = "doctor-node-without-agent"
    _opted_in_node(control_plane, bare)
    try:
        agents = _results(control_plane, metrics_url)["agents"]
        assert not agents.ok
        assert agents.detail.startswith(f"no Ready agent on {bare} (of ")
        assert "describe daemonset brupop-agent" in agents.advice
    finally:
        control_plane.core.delete_node(bare)


def test_doctor_reads_the_roles_when_it_may_not_create_subject_access_reviews(
    control_plane: ControlPlane, install: str
) -> None:
    api, name = control_plane.api, "doctor-rbac-reader"
    rbac = client.RbacAuthorizationV1Api(api)
    reads = client.V1PolicyRule(
        api_groups=["rbac.authorization.k8s.io"],
        resources=["roles", "rolebindings", "clusterroles", "clusterrolebindings"],
        verbs=["get", "list"],
    )
    account = client.V1ServiceAccount(metadata=client.V1ObjectMeta(name=name))
    _create_or_keep(control_plane.core.create_namespaced_service_account, NAMESPACE, account)
    role = client.V1ClusterRole(metadata=client.V1ObjectMeta(name=name), rules=[reads])
    _create_or_keep(rbac.create_cluster_role, role)
    binding = client.V1ClusterRoleBinding(
        metadata=client.V1ObjectMeta(name=name),
        role_ref=client.V1RoleRef(
            api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=name
        ),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name=name, namespace=NAMESPACE)],
    )
    _create_or_keep(rbac.create_cluster_role_binding, binding)
    token = service_account_token(api, name)
    with token_api_client(
        api.configuration.host, control_plane.folder / "pki" / "ca.crt", token
    ) as reader_api:
        reader = KubernetesReader(reader_api, timeout=10.0)
        wait_until(lambda: check_rbac(reader, NAMESPACE).ok, "rbac read from the roles", seconds=20)
        result = check_rbac(reader, NAMESPACE)
    assert "by reading the roles and bindings" in result.detail


def _use_the_chart_webhook(extensions: client.ApiextensionsV1Api, service: str) -> object:
    """Point the shadow CRD's conversion at `service` (port and path as the chart's); the
    conversion it had, to put back."""
    crd = extensions.read_custom_resource_definition(SHADOW_CRD)
    kept = crd.spec.conversion
    conversion = custom_resource_definition(NAMESPACE)["spec"]["conversion"]
    conversion["webhook"]["clientConfig"]["service"]["name"] = service
    extensions.patch_custom_resource_definition(SHADOW_CRD, {"spec": {"conversion": conversion}})
    return kept


def _lists_no_shadow_as_v1(reader: KubernetesReader) -> bool:
    """The v1 list answers, empty (kube-apiserver answers 429 while its cache reloads after a
    change of the CRD)."""
    try:
        listed = reader.get(f"/apis/{GROUP}/v1/namespaces/{NAMESPACE}/{PLURAL}")
    except ReadRefused:
        return False
    return listed.get("items") == []


def _put_back(extensions: client.ApiextensionsV1Api, kept: object) -> None:
    crd = extensions.read_custom_resource_definition(SHADOW_CRD)
    crd.spec.conversion = kept
    extensions.replace_custom_resource_definition(SHADOW_CRD, crd)


def test_doctor_fails_the_webhook_check_when_kube_apiserver_cannot_reach_the_webhook(
    control_plane: ControlPlane, install: str
) -> None:
    """The shadow CRD pointed at a webhook with no Service behind it (the apiserver not
    installed): the ConversionReview doctor sends through that Service's proxy fails."""
    extensions = client.ApiextensionsV1Api(control_plane.api)
    kept = _use_the_chart_webhook(extensions, "doctor-no-such-service")
    try:
        reader = KubernetesReader(control_plane.api, timeout=10.0)
        wait_until(
            lambda: not check_conversion_webhook(reader, NAMESPACE).ok, "webhook fails", seconds=20
        )
        result = check_conversion_webhook(reader, NAMESPACE)
        assert result.detail.startswith(
            f"a ConversionReview sent through Service {NAMESPACE}/doctor-no-such-service:"
        )
        assert "kubectl get crd bottlerocketshadows" in result.advice
    finally:
        _put_back(extensions, kept)


def test_doctor_fails_the_webhook_check_while_the_webhook_is_down_and_no_shadow_is_stored(
    control_plane: ControlPlane, install: str
) -> None:
    """The chart's webhook Service with no pod behind it and no shadow stored (as a rehearsal
    leaves the cluster): kube-apiserver answers the v1 list, having nothing to convert, so a
    list proves nothing; the ConversionReview through the Service fails, naming it."""
    api = control_plane.api
    objects = client.CustomObjectsApi(api)
    shadow = shadow_name(install)
    objects.delete_namespaced_custom_object(GROUP, "v2", NAMESPACE, PLURAL, shadow)
    for service in chart_documents("Service"):
        _create_or_keep(control_plane.core.create_namespaced_service, NAMESPACE, service)
    extensions = client.ApiextensionsV1Api(api)
    kept = _use_the_chart_webhook(extensions, "brupop-apiserver")
    try:
        reader = KubernetesReader(api, timeout=10.0)
        wait_until(lambda: _lists_no_shadow_as_v1(reader), "an empty v1 list", seconds=30)
        wait_until(
            lambda: check_conversion_webhook(reader, NAMESPACE).detail.startswith(
                "a ConversionReview"
            ),
            "the webhook called",
            seconds=20,
        )
        result = check_conversion_webhook(reader, NAMESPACE)
        assert not result.ok
        assert result.detail == (
            f"a ConversionReview sent through Service {NAMESPACE}/brupop-apiserver:8444"
            '/crdconvert failed (503: no endpoints available for service "brupop-apiserver")'
        )
    finally:
        _put_back(extensions, kept)
        body = shadow_object(shadow, SPEC, version="v2")
        objects.create_namespaced_custom_object(GROUP, "v2", NAMESPACE, PLURAL, body)
