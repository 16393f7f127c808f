"""What the manifest runs: one service account per component with least-privilege RBAC, the
agent DaemonSet, the controller and apiserver Deployments, their Services, probes and settings."""

from __future__ import annotations

from typing import Any

import pytest

from brupop.domain.cluster.objects import COMPONENT_LABEL, NODE_EVENT_NAMESPACE
from brupop.services.apiserver.authorization.authorizer import (
    AGENT_AUDIENCE,
    AGENT_COMPONENT,
    AGENT_SERVICE_ACCOUNT,
)
from tests.deploy.rendering import Rendered

NAMESPACE = "brupop-bottlerocket-aws"
AGENT = ("DaemonSet", "brupop-agent")
APISERVER = ("Deployment", "brupop-apiserver")
CONTROLLER = ("Deployment", "brupop-controller-deployment")
SHADOWS = "brupop.bottlerocket.aws"
Grant = tuple[str, str, str, str]  # (scope, API group, resource, verb)

# The settings registry: every environment variable a brupop process reads.
SETTINGS = {
    "LOGGING_FORMATTER", "TRACING_FILTER_DIRECTIVE", "TERMINATION_LOG", "BRUPOP_NAMESPACE",
    "BRUPOP_CLUSTER", "MY_NODE_NAME", "APISERVER_SERVICE_PORT", "APISERVER_URL", "CLUSTER_DOMAIN",
    "AGENT_TOKEN_PATH", "AGENT_CA_PATH", "APICLIENT_PATH", "EXCLUDE_FROM_LB_WAIT_TIME_IN_SEC",
    "AGENT_LOOP_INTERVAL_SECONDS", "UPDATE_CHECK_INTERVAL_SECONDS", "REBOOT_WAIT_SECONDS",
    "SHADOW_WAIT_SECONDS", "APICLIENT_TIMEOUT_SECONDS", "HOST_COMMAND_DEADLINE_SECONDS",
    "HOST_POLL_INTERVAL_SECONDS", "APICLIENT_RATE_PERIOD_SECONDS", "APICLIENT_RATE_BURST",
    "APICLIENT_RETRIES", "APICLIENT_RETRY_BASE_SECONDS", "APICLIENT_RETRY_MAX_SECONDS",
    "APISERVER_CLIENT_TIMEOUT_SECONDS", "APISERVER_INTERNAL_PORT", "APISERVER_BIND_ADDRESS",
    "APISERVER_WEBHOOK_PORT", "APISERVER_MAX_CONNECTIONS", "APISERVER_WEBHOOK_MAX_CONNECTIONS",
    "APISERVER_MAX_CONNECTIONS_PER_ADDRESS", "APISERVER_PROBE_RESERVE_CONNECTIONS",
    "APISERVER_TLS_CERT_PATH", "APISERVER_TLS_KEY_PATH", "DRAIN_TIMEOUT_SECONDS",
    "EVICTION_RETRY_INTERVAL_SECONDS", "POD_DELETION_TIMEOUT_SECONDS", "TOKEN_REVIEW_CACHE_SECONDS",
    "TOKEN_REFUSAL_CACHE_SECONDS", "TOKEN_REVIEW_THREADS", "APISERVER_FORCE_NAMESPACES_ALLOWED",
    "MAX_CONCURRENT_UPDATE", "SCHEDULER_CRON_EXPRESSION", "UPDATE_WINDOW_START",
    "UPDATE_WINDOW_STOP", "SCHEDULER_TIME_ZONE", "CONTROLLER_TICK_SECONDS", "RELEASE_AGE_QUORUM",
    "CONTROLLER_METRICS_PORT", "TIMEOUT_IDLE_SECONDS",
    "TIMEOUT_STAGED_AND_PERFORMED_UPDATE_SECONDS",
    "TIMEOUT_REBOOTED_INTO_UPDATE_SECONDS", "TIMEOUT_MONITORING_UPDATE_SECONDS",
    "LEADER_ELECTION_LEASE_SECONDS", "LEADER_ELECTION_RENEW_SECONDS", "VARIANT_OFFER_GRACE_SECONDS",
    # The interpreter's: the controller and the apiserver run without docstrings and asserts.
    "PYTHONOPTIMIZE",
}  # fmt: skip


def _grants(manifest: Rendered, account: str) -> set[Grant]:
    """Every (scope, group, resource, verb) the service account gets through a binding."""
    granted: set[Grant] = set()
    for binding_kind, role_kind in (("RoleBinding", "Role"), ("ClusterRoleBinding", "ClusterRole")):
        for binding in manifest.of_kind(binding_kind):
            if {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE} not in binding[
                "subjects"
            ]:
                continue
            reference = binding["roleRef"]
            assert reference["kind"] == role_kind
            role = manifest.find(role_kind, reference["name"])
            if role is None:
                granted.add(("builtin", "", reference["name"], ""))
                continue
            scope = role["metadata"].get("namespace", "cluster")
            for rule in role["rules"]:
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        granted |= {(scope, group, resource, verb) for verb in rule["verbs"]}
    return granted


def _expand(scope: str, group: str, resource: str, verbs: str) -> set[Grant]:
    return {(scope, group, resource, verb) for verb in verbs.split()}


def test_every_namespaced_object_is_in_brupops_namespace_but_the_node_events_grant(
    manifest: Rendered,
) -> None:
    (namespace,) = manifest.of_kind("Namespace")
    assert namespace["metadata"]["name"] == NAMESPACE
    elsewhere = {
        (doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"])
        for doc in manifest
        if doc["metadata"].get("namespace") not in (None, NAMESPACE)
    }
    # Events about Nodes can only be created in `default` (the Kubernetes API's rule).
    assert elsewhere == {
        ("Role", "brupop-apiserver-node-events", NODE_EVENT_NAMESPACE),
        ("RoleBinding", "brupop-apiserver-node-events", NODE_EVENT_NAMESPACE),
    }


def test_each_component_runs_under_its_own_service_account(manifest: Rendered) -> None:
    accounts = {account["metadata"]["name"] for account in manifest.of_kind("ServiceAccount")}
    used = {manifest.pod_spec(*w)["serviceAccountName"] for w in (AGENT, APISERVER, CONTROLLER)}
    assert (
        accounts
        == used
        == {
            "brupop-agent-service-account",
            "brupop-apiserver-service-account",
            "brupop-controller-service-account",
        }
    )


def test_the_agent_has_no_kubernetes_permission_and_no_api_token(manifest: Rendered) -> None:
    assert _grants(manifest, "brupop-agent-service-account") == set()
    account = manifest.get("ServiceAccount", "brupop-agent-service-account")
    assert account["automountServiceAccountToken"] is False
    assert manifest.pod_spec(*AGENT)["automountServiceAccountToken"] is False


def test_the_apiserver_gets_exactly_the_verbs_its_routes_use(manifest: Rendered) -> None:
    assert _grants(manifest, "brupop-apiserver-service-account") == (
        _expand(NAMESPACE, SHADOWS, "bottlerocketshadows", "create get list watch")
        | _expand(NAMESPACE, SHADOWS, "bottlerocketshadows/status", "patch")
        | _expand(NAMESPACE, SHADOWS, "bottlerocketupdatepolicies", "get")
        | _expand(NAMESPACE, "", "pods", "list watch")  # the agent pod mirror
        | _expand(NAMESPACE, "", "serviceaccounts", "get list watch")  # the account mirror
        | _expand(NODE_EVENT_NAMESPACE, "", "events", "create")
        | _expand("cluster", "", "nodes", "get patch")
        | _expand("cluster", "", "pods", "get list delete")
        | _expand("cluster", "", "pods/eviction", "create")
        | _expand("cluster", "policy", "poddisruptionbudgets", "list")
        | _expand("cluster", "apps", "replicasets", "get")
        | _expand("cluster", "apps", "statefulsets", "get")
        | _expand("cluster", "", "replicationcontrollers", "get")
        | _expand("cluster", "authentication.k8s.io", "tokenreviews", "create")
    )


def test_the_controller_gets_shadows_policies_leases_events_and_what_cleanup_reasons_and_gate_need(
    manifest: Rendered,
) -> None:
    assert _grants(manifest, "brupop-controller-service-account") == (
        _expand(NAMESPACE, SHADOWS, "bottlerocketshadows", "get list watch patch delete")
        | _expand(NAMESPACE, SHADOWS, "bottlerocketshadows/status", "patch")
        | _expand(NAMESPACE, SHADOWS, "bottlerocketupdatepolicies", "get list watch")
        | _expand(NAMESPACE, SHADOWS, "bottlerocketupdatepolicies/status", "patch")
        | _expand(NAMESPACE, "coordination.k8s.io", "leases", "get create update")
        | _expand(NAMESPACE, "", "events", "create")
        | _expand("cluster", "", "nodes", "get list watch patch")
        | _expand("cluster", "", "pods", "list")
        | _expand("cluster", "policy", "poddisruptionbudgets", "list")
        | _expand("cluster", "apps", "replicasets", "get")
        | _expand("cluster", "apps", "statefulsets", "get")
        | _expand("cluster", "", "replicationcontrollers", "get")
    )


def test_the_agent_image_runs_the_agent_and_the_control_image_the_other_two(
    manifest: Rendered,
) -> None:
    containers = {w: manifest.container(*w) for w in (AGENT, APISERVER, CONTROLLER)}
    images = [c["image"] for c in containers.values()]
    assert images == ["brupop-agent:0.1.0", "brupop-control:0.1.0", "brupop-control:0.1.0"]
    assert [c["args"] for c in containers.values()] == [["agent"], ["apiserver"], ["controller"]]
    assert all("command" not in c for c in containers.values())  # the image's entrypoint: brupop


@pytest.mark.parametrize("workload", [AGENT, APISERVER, CONTROLLER], ids=lambda w: w[1])
def test_containers_set_only_registered_settings(
    workload: tuple[str, str], manifest: Rendered
) -> None:
    assert set(manifest.env(*workload)) <= SETTINGS


def test_the_agent_runs_only_on_opted_in_linux_nodes(manifest: Rendered) -> None:
    affinity = manifest.pod_spec(*AGENT)["affinity"]["nodeAffinity"]
    (term,) = affinity["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    expressions = {e["key"]: (e["operator"], e["values"]) for e in term["matchExpressions"]}
    assert expressions["bottlerocket.aws/updater-interface-version"] == ("In", ["2.0.0"])
    assert expressions["kubernetes.io/os"] == ("In", ["linux"])


def _mounts(manifest: Rendered, workload: tuple[str, str]) -> dict[str, dict[str, Any]]:
    """Mount path -> the volume mounted there."""
    volumes = {v["name"]: v for v in manifest.pod_spec(*workload)["volumes"]}
    return {
        mount["mountPath"]: volumes[mount["name"]]
        for mount in manifest.container(*workload)["volumeMounts"]
    }


def test_the_agent_mounts_the_host_api_socket_apiclient_token_and_ca(manifest: Rendered) -> None:
    mounts = _mounts(manifest, AGENT)
    env = manifest.env(*AGENT)
    assert mounts["/run/api.sock"]["hostPath"] == {"path": "/run/api.sock", "type": "Socket"}
    assert mounts[env["APICLIENT_PATH"]]["hostPath"] == {"path": "/bin/apiclient", "type": "File"}
    token_dir, token_file = env["AGENT_TOKEN_PATH"].rsplit("/", 1)
    (source,) = mounts[token_dir]["projected"]["sources"]
    assert source["serviceAccountToken"] == {"audience": "brupop-apiserver", "path": token_file}
    ca_dir, ca_file = env["AGENT_CA_PATH"].rsplit("/", 1)
    assert mounts[ca_dir]["secret"]["items"] == [{"key": ca_file, "path": ca_file}]
    assert token_file == "bottlerocket-agent-service-account-token"


def test_the_agent_runs_as_super_t_without_capabilities(manifest: Rendered) -> None:
    context = manifest.container(*AGENT)["securityContext"]
    assert context["seLinuxOptions"]["type"] == "super_t"
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["allowPrivilegeEscalation"] is False
    assert "privileged" not in context


def test_the_agents_cpu_limit_lets_its_start_burst_through_in_seconds(manifest: Rendered) -> None:
    # 10m (the original's limit) held the agent's first request back 18 s; 100m, under 2 s.
    assert manifest.container(*AGENT)["resources"] == {
        "requests": {"cpu": "10m", "memory": "8Mi"},
        "limits": {"cpu": "100m", "memory": "50Mi"},
    }


def test_the_agent_needs_no_cluster_selection(manifest: Rendered) -> None:
    env = manifest.env(*AGENT)
    assert "BRUPOP_CLUSTER" not in env
    assert env["MY_NODE_NAME"] == "spec.nodeName"


@pytest.mark.parametrize("workload", [APISERVER, CONTROLLER], ids=lambda w: w[1])
def test_controller_and_apiserver_use_the_real_cluster_as_non_root(
    workload: tuple[str, str], manifest: Rendered
) -> None:
    assert manifest.env(*workload)["BRUPOP_CLUSTER"] == "kubernetes"
    context = manifest.container(*workload)["securityContext"]
    assert context["runAsNonRoot"] is True
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}


def test_the_controller_has_two_replicas_its_priority_metrics_and_probes(
    manifest: Rendered,
) -> None:
    assert manifest.get(*CONTROLLER)["spec"]["replicas"] == 2
    spec = manifest.pod_spec(*CONTROLLER)
    priority = manifest.get("PriorityClass", spec["priorityClassName"])
    assert (priority["value"], priority["preemptionPolicy"]) == (1000000, "Never")
    container = manifest.container(*CONTROLLER)
    (port,) = container["ports"]
    assert (port["name"], port["containerPort"]) == ("metrics", 8080)
    assert manifest.env(*CONTROLLER)["CONTROLLER_METRICS_PORT"] == "8080"
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    _assert_liveness_waits_for_a_slow_start(container)
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert manifest.env(*CONTROLLER)["MY_NODE_NAME"] == "spec.nodeName"


def test_the_apiserver_has_three_spread_replicas_and_https_probes(manifest: Rendered) -> None:
    assert manifest.get(*APISERVER)["spec"]["replicas"] == 3
    anti = manifest.pod_spec(*APISERVER)["affinity"]["podAntiAffinity"]
    (preferred,) = anti["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    container = manifest.container(*APISERVER)
    ports = {port["name"]: port["containerPort"] for port in container["ports"]}
    assert ports == {"https": 8443, "webhook": 8444}
    assert manifest.env(*APISERVER)["APISERVER_INTERNAL_PORT"] == "8443"
    assert manifest.env(*APISERVER)["APISERVER_WEBHOOK_PORT"] == "8444"
    live = container["livenessProbe"]["httpGet"]
    assert live == {"path": "/ping", "port": "webhook", "scheme": "HTTPS"}
    ready = container["readinessProbe"]["httpGet"]
    assert ready == {"path": "/readyz", "port": "webhook", "scheme": "HTTPS"}
    _assert_liveness_waits_for_a_slow_start(container)


def _assert_liveness_waits_for_a_slow_start(container: dict[str, Any]) -> None:
    """A starved node's start must not end in a liveness kill: a startup probe on the same
    endpoint holds liveness off for at least a minute."""
    startup = container["startupProbe"]
    assert startup["httpGet"] == container["livenessProbe"]["httpGet"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 60


def test_the_apiserver_serves_tls_from_its_certificates_secret(manifest: Rendered) -> None:
    env = manifest.env(*APISERVER)
    mounts = _mounts(manifest, APISERVER)
    for setting in ("APISERVER_TLS_CERT_PATH", "APISERVER_TLS_KEY_PATH"):
        directory = env[setting].rsplit("/", 1)[0]
        assert directory == "/etc/brupop-tls-keys"
        secret = mounts[directory]["secret"]["secretName"]
        assert manifest.get("Certificate", secret)["spec"]["secretName"] == secret


def test_the_apiserver_service_maps_443_to_8443_and_the_webhook_port_on_apiserver_pods(
    manifest: Rendered,
) -> None:
    service = manifest.get("Service", "brupop-apiserver")
    ports = {port["name"]: (port["port"], port["targetPort"]) for port in service["spec"]["ports"]}
    assert ports == {"https": (443, 8443), "webhook": (8444, "webhook")}
    labels = manifest.get(*APISERVER)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_the_controller_service_exposes_metrics_on_port_80_of_controller_pods(
    manifest: Rendered,
) -> None:
    service = manifest.get("Service", "brupop-controller-server")
    (port,) = service["spec"]["ports"]
    assert (port["name"], port["port"], port["targetPort"]) == ("main", 80, "metrics")
    labels = manifest.get(*CONTROLLER)["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_the_mounted_secrets_are_made_by_certificates(manifest: Rendered) -> None:
    secrets = {c["spec"]["secretName"] for c in manifest.of_kind("Certificate")}
    for workload in (AGENT, APISERVER, CONTROLLER):
        for volume in manifest.pod_spec(*workload).get("volumes", []):
            if "secret" in volume:
                assert volume["secret"]["secretName"] in secrets


def test_agent_pods_carry_what_the_apiserver_authorizes(manifest: Rendered) -> None:
    labels = manifest.get(*AGENT)["spec"]["template"]["metadata"]["labels"]
    assert labels[COMPONENT_LABEL] == AGENT_COMPONENT
    assert manifest.pod_spec(*AGENT)["serviceAccountName"] == AGENT_SERVICE_ACCOUNT
    (source,) = _mounts(manifest, AGENT)["/var/run/secrets/tokens"]["projected"]["sources"]
    assert source["serviceAccountToken"]["audience"] == AGENT_AUDIENCE
